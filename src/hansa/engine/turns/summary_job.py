"""The rolling summary's job (seed 002 §5): fold a conversation's older messages into a
new version of its summary.

A turn whose history passed its budget queues this job in its last transaction, keyed
``summary:<conversationId>`` (decision 0015): summaries of one conversation run one at a
time, and turns never wait for one. The supervisor's model writes the prose (purpose
``summary``); code keeps the ids, decisions and open questions (``rolling_summary``).
When the model fails, the prose is an extract of the messages: the summary is written
all the same, and says so. The new version, its ``summary_updated`` event, the model
call's record and the job's end commit together, under the job's lease.
"""

from __future__ import annotations

import asyncio
import logging

from sqlalchemy import Connection

from hansa import errors
from hansa.domain import event, message, summary
from hansa.domain.job import ConversationSummaryJob, Job
from hansa.domain.llm_call import LlmCall
from hansa.engine import llm, rolling_summary
from hansa.engine.llm import CallScope
from hansa.engine.project_context import build_project_context
from hansa.engine.runtime.recorder import Batch, Recorder
from hansa.engine.runtime.services import Services
from hansa.models.base import ModelSettings, RequestParams
from hansa.store import conversations, llm_calls, messages, queue, summaries

log = logging.getLogger(__name__)

MAX_TOKENS = 600
"""The most the summarizer may write (``SUMMARY_WORDS`` words fit)."""
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
    conversation_id = ConversationSummaryJob.model_validate(claimed.payload).conversation_id
    tenant_id = claimed.tenant_id
    settings = services.settings
    limits = rolling_summary.Thresholds.of(settings)

    def load(
        conn: Connection,
    ) -> tuple[summary.ConversationSummary | None, list[message.Message], int, str | None]:
        convo = conversations.get(conn, tenant_id, conversation_id)
        previous = summaries.latest(conn, tenant_id, conversation_id)
        after = previous.covered_through_seq if previous is not None else 0
        history, total = messages.newest_after(
            conn, tenant_id, conversation_id, after, _KINDS, settings.prompt_max_messages
        )
        return previous, history, total, convo.project_id

    previous, history, total, project_id = await services.db.read(load)
    folded = rolling_summary.to_fold(history, limits)
    recorder = Recorder(services, tenant_id, conversation_id, claimed)
    if not folded:
        batch = Batch(conversation_id, None)
        batch.then(lambda conn: queue.finish(conn, claimed, services.clock()))
        await recorder.write(batch)
        return
    later = history[len(folded) :]
    facts = rolling_summary.extract_facts(folded, later, previous.facts if previous else None)
    project = await services.db.read(
        lambda conn: build_project_context(conn, tenant_id, project_id)
    )
    chief = services.supervisor
    prompt = rolling_summary.summarizer_prompt(previous, folded)
    failed = False
    try:
        answer = await llm.ask(
            services.model_for(chief, project),
            CallScope(tenant_id, conversation_id, node_id="summary", agent_id=chief.id),
            prompt,
            ModelSettings(temperature=0.0, max_tokens=MAX_TOKENS),
            _PARAMS,
            clock=services.clock,
            retry=llm.Retry.of(services.settings),
            calls=made,
        )
        text = answer.text.strip()
    except errors.ProviderError:
        text = ""
    if not text:  # no prose from the model: an extract keeps the messages' gist
        failed = True
        text = rolling_summary.extract_text(previous, folded)
    unread = total - len(history)  # older than what was read: covered by seq all the same
    new = summary.ConversationSummary(
        conversation_id=conversation_id,
        version=(previous.version if previous else 0) + 1,
        covered_through_seq=folded[-1].seq or 0,
        covered_messages=(previous.covered_messages if previous else 0) + unread + len(folded),
        text=text,
        facts=facts,
        model_failed=failed,
        created_at=services.clock(),
    )
    batch = Batch(conversation_id, None)

    def write(conn: Connection) -> None:
        summaries.lock(conn, tenant_id, conversation_id)
        current = summaries.latest(conn, tenant_id, conversation_id)
        if (current.version if current else 0) == new.version - 1:  # else: one is newer
            summaries.add(conn, tenant_id, new)
            payload = event.SummaryUpdatedData(
                version=new.version,
                covered_through_seq=new.covered_through_seq,
                summarized_messages=unread + len(folded),
                kept_ids=len(new.facts.ids),
                model_failed=failed,
            )
            batch.event(payload, agent_id=chief.id)
        for record in made:
            llm_calls.record(conn, record)
        queue.finish(conn, claimed, services.clock())

    batch.then(write)
    await recorder.write(batch)


_PARAMS = RequestParams(purpose="summary")
