"""The rolling summary's job (seed 002 §5): fold a conversation's older messages into a
new version of its summary.

A turn whose history passed its budget queues this job in its last transaction, keyed
``summary:<conversationId>`` (decision 0015): summaries of one conversation run one at a
time, and turns never wait for one. The supervisor's model answers in structured output
(purpose ``summary``, ``engine/summarizer.py``): the prose, the folded messages it keeps
word for word, and updates to the agents' states, applied through the scratchpad's path in
the summary's transaction. Code keeps the ids, decisions and open questions, and the newest
pasted document (``rolling_summary``). When the model fails or its answer is not usable,
the prose is an extract of the messages and no state changes: the summary is written all
the same, and says so. The new version, its ``summary_updated`` event, the model
call's record and the job's end commit together, under the job's lease.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

from sqlalchemy import Connection

from hansa import errors
from hansa.domain import agent_state, event, message, summary
from hansa.domain.job import ConversationSummaryJob, Job
from hansa.domain.llm_call import LlmCall
from hansa.engine import llm, rolling_summary, summarizer
from hansa.engine.llm import CallScope
from hansa.engine.project_context import build_project_context
from hansa.engine.runtime.recorder import Batch, Recorder
from hansa.engine.runtime.services import Services
from hansa.engine.turns import scratchpad
from hansa.models.base import ModelSettings, RequestParams
from hansa.store import agent_states, conversations, llm_calls, messages, queue, summaries

log = logging.getLogger(__name__)

_KINDS = (message.Kind.USER, message.Kind.ASSISTANT)


def key_of(conversation_id: str) -> str:
    """The serialization key of a conversation's summary jobs."""
    return f"summary:{conversation_id}"


async def run_conversation_summary_job(services: Services, claimed: Job) -> None:
    """Summarize what is due, or end at once when a newer summary left nothing to fold.

    A failure ends the job with its error and tells the conversation nothing: no one waits
    for a summary, and the next turn past the budget queues another.
    """
    made: list[LlmCall] = []
    try:
        await _summarize(services, claimed, made)
    except (errors.StaleLease, asyncio.CancelledError):  # cut: the model calls are kept
        await llm.keep(services.db, made)
        raise
    except Exception as exc:
        log.exception("summary job %s failed", claimed.id)
        error = f"{type(exc).__name__}: {exc}"
        await services.db.write(
            lambda conn: queue.finish(conn, claimed, services.clock(), error=error)
        )


async def _summarize(services: Services, claimed: Job, made: list[LlmCall]) -> None:
    work = ConversationSummaryJob.model_validate(claimed.payload)
    conversation_id = work.conversation_id
    tenant_id = claimed.tenant_id
    settings = services.settings
    limits = rolling_summary.Thresholds.of(settings, work.history_tokens)

    def load(conn: Connection) -> _Loaded:
        convo = conversations.get(conn, tenant_id, conversation_id)
        previous = summaries.latest(conn, tenant_id, conversation_id)
        after = previous.covered_through_seq if previous is not None else 0
        history, total = messages.newest_after(
            conn, tenant_id, conversation_id, after, _KINDS, settings.prompt_max_messages
        )
        kept = previous.facts.kept_message_ids if previous is not None else []
        return _Loaded(
            previous,
            history,
            total,
            messages.by_ids(conn, tenant_id, conversation_id, kept),
            agent_states.all_of(conn, tenant_id, conversation_id),
            convo.project_id,
            summarizer.scope_of(convo.project_id, convo.focus_entity_id),
        )

    loaded = await services.db.read(load)
    previous, history = loaded.previous, loaded.history
    fold = rolling_summary.to_fold(history, limits, loaded.kept)
    recorder = Recorder(services, tenant_id, conversation_id, claimed)
    if not fold.folded:
        batch = Batch(conversation_id, None)
        batch.then(lambda conn: queue.finish(conn, claimed, services.clock()))
        await recorder.write(batch)
        return
    folded = fold.folded
    cut = folded[-1].seq or 0
    later = [m for m in history if (m.seq or 0) > cut]
    project = await services.db.read(
        lambda conn: build_project_context(conn, tenant_id, loaded.project_id)
    )
    chief = services.supervisor
    folded_ids = [m.id for m in folded]
    agent_ids = summarizer.agents_of(chief.id, folded, loaded.states)
    params = RequestParams(
        output_schema=summarizer.schema(folded_ids, agent_ids), purpose=summarizer.PURPOSE
    )
    raw = ""
    try:
        response = await llm.ask(
            services.model_for(chief, project),
            CallScope(tenant_id, conversation_id, node_id="summary", agent_id=chief.id),
            summarizer.prompt(previous, fold, loaded.states, loaded.scope),
            ModelSettings(temperature=0.0, max_tokens=summarizer.MAX_TOKENS),
            params,
            clock=services.clock,
            retry=llm.Retry.of(services.settings),
            calls=made,
        )
        raw = response.text
    except errors.ProviderError:
        pass
    answer = summarizer.parse(raw, folded_ids, agent_ids)
    if answer is None:  # no usable answer: an extract keeps the messages' gist
        log.warning("summary job %s: the summarizer's answer was not usable", claimed.id)
    text = answer.summary if answer else rolling_summary.extract_text(previous, folded)
    by_model = set(answer.kept) if answer else set()
    kept = sorted([*fold.kept, *(m for m in folded if m.id in by_model)], key=lambda m: m.seq or 0)
    kept_ids = [m.id for m in kept]
    facts = rolling_summary.extract_facts(
        [m for m in folded if m.id not in by_model],
        later,
        previous.facts if previous else None,
    ).model_copy(
        update={
            "kept_message_ids": kept_ids,
            "dropped_message_ids": [i for i in folded_ids if i not in by_model],
        }
    )
    summarized = loaded.total - len(history) + len(folded) - len(by_model)
    new = summary.ConversationSummary(
        conversation_id=conversation_id,
        version=(previous.version if previous else 0) + 1,
        covered_through_seq=cut,
        covered_messages=(previous.covered_messages if previous else 0) + summarized,
        text=text,
        facts=facts,
        model_failed=answer is None,
        created_at=services.clock(),
    )
    batch = Batch(conversation_id, None)

    def write(conn: Connection) -> None:
        summaries.lock(conn, tenant_id, conversation_id)
        current = summaries.latest(conn, tenant_id, conversation_id)
        if (current.version if current else 0) == new.version - 1:  # else: one is newer
            applied = _apply(conn, services, batch, tenant_id, conversation_id, answer)
            stored = new.model_copy(
                update={"facts": new.facts.model_copy(update={"state_updates": applied})}
            )
            summaries.add(conn, tenant_id, stored)
            payload = event.SummaryUpdatedData(
                version=new.version,
                covered_through_seq=new.covered_through_seq,
                summarized_messages=summarized,
                kept_ids=len(new.facts.ids),
                model_failed=new.model_failed,
            )
            batch.event(payload, agent_id=chief.id)
        for record in made:
            llm_calls.record(conn, record)
        queue.finish(conn, claimed, services.clock())

    batch.then(write)
    await recorder.write(batch)


def _apply(
    conn: Connection,
    services: Services,
    batch: Batch,
    tenant_id: str,
    conversation_id: str,
    answer: summarizer.Answer | None,
) -> list[summary.StateUpdate]:
    """Apply the summarizer's state updates, each through the scratchpad's own path and
    announced by ``agent_state``; one a state refuses (too large, an append to a key that
    holds no list) is left out whole. The ones applied."""
    applied: list[summary.StateUpdate] = []
    for update in answer.state_updates if answer else []:
        delta = {"set": update.set, "append": update.append}
        try:
            stored = scratchpad.change(
                conn, services, tenant_id, conversation_id, update.agent_id, [delta]
            )
        except errors.InvalidInput as exc:
            log.warning("summary state update for %s refused: %s", update.agent_id, exc)
            continue
        scratchpad.announce(batch, stored)
        applied.append(update)
    return applied


@dataclass(frozen=True, slots=True)
class _Loaded:
    """What the job reads before asking the summarizer."""

    previous: summary.ConversationSummary | None
    history: list[message.Message]
    """The messages after the summary, oldest first (the newest ``prompt_max_messages``)."""
    total: int
    """How many there are after the summary in all."""
    kept: list[message.Message]
    """The messages the previous version kept word for word."""
    states: list[agent_state.AgentState]
    project_id: str | None
    scope: str
    """The conversation's scope and focus ids (``summarizer.scope_of``)."""
