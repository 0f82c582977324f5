"""AG-UI (CopilotKit's agent-user interaction protocol): ``POST /ag-ui/{agent_id}`` runs a
turn of the agent and streams it as AG-UI events (``api/agui_events.py`` says which).

The body is AG-UI's ``RunAgentInput``. Its ``threadId`` names the Hansa conversation: the
caller's conversation of that id, else the one opened for that thread before (its
metadata keeps the thread id: ``store/threads.py``), else a new one. Only the last user
message of ``messages`` is posted: Hansa keeps the history. A run that ends with the
conversation waiting for the user (a question, a plan to approve) finishes with AG-UI's
interrupt outcome; the next run answers it with ``resume``: ``[{interruptId, status,
payload}]``, ``payload`` ``true`` approving the plan, ``false`` dropping it, text answering
or asking for a change (``status: cancelled`` drops it too), posted instead of ``messages``.
A run that approves a plan streams the plan's run up to Hans's summary (its tasks as
``CUSTOM hansa.task_status``…). ``forwardedProps.user`` (an object, or the user's id) is
a new conversation's user (``user.*``); ``state``, ``tools`` (frontend tools), ``context``
and the rest of ``forwardedProps`` are accepted and not used; the agent's own tools run
inside its turn and show as ``TOOL_CALL_*`` events.

The run's ``STATE_SNAPSHOT`` is the conversation (id, state, active agent, title) and its
agents' scratchpads, sent after ``RUN_STARTED``, on each scratchpad change and before the
run's end. Refusals before the stream starts keep Hansa's error shape (404 unknown agent,
422 no user message, 409 an archived conversation); a turn quiet for
``HANSA_CHAT_TIMEOUT_SECONDS`` ends the stream with ``RUN_ERROR`` ``turn_timeout``; a
``resume`` when nothing waits, or for another interrupt, is 409 (``details.field``
``resume``). The stream sends a keep-alive comment after ``HANSA_SSE_KEEPALIVE_SECONDS`` of
silence (``api/sse.py``).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

from ag_ui import core
from ag_ui.encoder import EventEncoder
from fastapi import APIRouter
from pydantic import Field
from sqlalchemy import Connection

from hansa import errors
from hansa.api import ap_shapes, sse
from hansa.api.agui_events import TIMED_OUT, Translation, snapshot
from hansa.api.deps import ServicesDep, TenantDep
from hansa.api.models.base import answers
from hansa.domain import agent_state, conversation, event
from hansa.engine.runtime.services import Services
from hansa.engine.turns import chat, conversation_update
from hansa.engine.turns.outcome import follow_work, standing
from hansa.store import agent_states, conversations, llm_calls, threads

router = APIRouter(prefix="/ag-ui", tags=["ag-ui"])
CONVERSATION_HEADER = "X-Hansa-Conversation-Id"
MAX_THREAD_ID = 200
"""The longest ``threadId`` taken (it is kept in the conversation's metadata)."""


class RunAgentInput(core.RunAgentInput):
    """AG-UI's ``RunAgentInput``; ``threadId`` is kept in a conversation's metadata, so it
    is bounded."""

    thread_id: str = Field(min_length=1, max_length=MAX_THREAD_ID)


_STREAM: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "Server-Sent Events: each `data` line one AG-UI event as JSON "
        "(https://docs.ag-ui.com/concepts/events): RUN_STARTED, STATE_SNAPSHOT, the turn "
        "(TEXT_MESSAGE_*, TOOL_CALL_*, STEP_*, CUSTOM hansa.<type>), a last STATE_SNAPSHOT, "
        "then RUN_FINISHED (its outcome an interrupt when the conversation waits for the "
        "user, with the run's token usage) or RUN_ERROR. The `X-Hansa-Conversation-Id` "
        "header names the conversation.",
        "headers": {
            CONVERSATION_HEADER: {
                "description": "The Hansa conversation of the thread.",
                "schema": {"type": "string"},
            }
        },
        "content": {
            "text/event-stream": {
                "schema": {
                    "type": "object",
                    "description": "One event of the stream (its `data` line).",
                    "properties": {
                        "data": {"type": "string", "contentMediaType": "application/json"}
                    },
                    "required": ["data"],
                }
            }
        },
    }
}


@router.post(
    "/{agent_id}",
    status_code=200,  # FastAPI cannot read it off HeldStream's __init__ (its slot first)
    response_model=None,
    response_class=sse.HeldStream,
    responses={**answers(None, 401, 403, 404, 409, 429), **_STREAM},
    openapi_extra={"security": [{"bearerKey": []}]},
)
async def run_agui_agent(
    agent_id: str, body: RunAgentInput, services: ServicesDep, tenant: TenantDep
) -> sse.HeldStream:
    """Run a turn of ``agent_id`` on the last user message of ``messages`` (or on the
    ``resume`` of the interrupt the thread waits for) in the conversation of ``threadId``,
    streamed as AG-UI events."""
    await services.agents.require(tenant, agent_id)
    active: str | None = agent_id
    if body.resume:
        conversation_id = await _found(services, tenant, body.thread_id)
        if conversation_id is None:
            raise _nothing_to_resume(body.thread_id)
        text = await _resumed(services, tenant, conversation_id, body)
        active = None  # the answer goes to whoever asked
    else:
        text = _last_user_text(body.messages)
        user = _user(body.forwarded_props)
        conversation_id = await _conversation_of(services, tenant, body.thread_id, agent_id, user)
    posted = await chat.post_message(
        services, tenant, conversation_id, text, active_agent_id=active
    )
    state = snapshot(*await services.db.read(_now, tenant, conversation_id))
    run = Translation(body.thread_id, body.run_id, state)
    return sse.stream(
        services,
        _stream(services, tenant, conversation_id, posted, run),
        headers={CONVERSATION_HEADER: conversation_id},
    )


def _nothing_to_resume(thread_id: str) -> errors.Conflict:
    return errors.Conflict(
        "the thread is not waiting for an answer: there is nothing to resume",
        details={"field": "resume", "threadId": thread_id},
    )


async def _resumed(
    services: Services, tenant: str, conversation_id: str, body: RunAgentInput
) -> str:
    """What answering the interrupt the thread waits for posts (409 when it waits for
    nothing, or the resume answers another)."""
    waiting = (await services.db.read(standing, tenant, conversation_id, last=1)).waiting
    if waiting is None:
        raise _nothing_to_resume(body.thread_id)
    wanted = ap_shapes.interrupt_id(body.thread_id, waiting)
    entry = next((e for e in body.resume or [] if e.interrupt_id == wanted), None)
    if entry is None:
        raise errors.Conflict(
            f"resume must answer the interrupt the thread waits for: {wanted}",
            details={"field": "resume", "interruptId": wanted},
        )
    if waiting.kind == "confirmation":
        raise errors.Conflict(
            "a step held for confirmation is confirmed with POST /api/tasks/{taskId}/confirm "
            "and its parametersHash, not by resume",
            details={"field": "resume", "taskIds": list(waiting.task_ids)},
        )
    if entry.status == "cancelled":
        return ap_shapes.resume_text(False, "resume.payload")
    return ap_shapes.resume_text(entry.payload, "resume.payload")


def _last_user_text(messages: list[core.Message]) -> str:
    for m in reversed(messages):
        if not isinstance(m, core.UserMessage):
            continue
        if isinstance(m.content, str):
            return m.content
        return "\n".join(p.text for p in m.content if isinstance(p, core.TextPart))
    raise errors.InvalidInput("messages must contain a user message", details={"field": "messages"})


async def _found(services: Services, tenant: str, thread_id: str) -> str | None:
    """The conversation that continues ``thread_id``, if there is one."""

    def own(conn: Connection) -> str | None:
        try:
            return conversations.get(conn, tenant, thread_id).id
        except errors.NotFound:  # also another tenant's id: a thread of this tenant's own
            return None

    return await services.db.read(own) or await services.db.read(threads.find, tenant, thread_id)


def _user(forwarded: Any) -> Any:
    """``forwardedProps.user``: who the thread is with."""
    return forwarded.get("user") if isinstance(forwarded, dict) else None


async def _conversation_of(
    services: Services, tenant: str, thread_id: str, agent_id: str, user: Any = None
) -> str:
    """The conversation that continues ``thread_id``, opened (with ``user``) if there is
    none."""
    found = await _found(services, tenant, thread_id)
    if found is not None:
        return found
    convo = await chat.create_conversation(
        services, tenant, active_agent_id=agent_id, user=conversation_update.user_of(user)
    )
    now = services.clock()
    await services.db.write(lambda conn: threads.remember(conn, tenant, convo.id, thread_id, now))
    return convo.id


def _now(
    conn: Connection, tenant: str, conversation_id: str
) -> tuple[conversation.Conversation, list[agent_state.AgentState]]:
    return (
        conversations.get(conn, tenant, conversation_id),
        agent_states.all_of(conn, tenant, conversation_id),
    )


async def _stream(
    services: Services, tenant: str, conversation_id: str, posted: chat.Posted, run: Translation
) -> AsyncGenerator[str]:
    encoder = EventEncoder()
    for out in run.started():
        yield encoder.encode(out)
    status = TIMED_OUT
    turn_id = posted.turn_id
    async for ev in follow_work(services, tenant, conversation_id, turn_id, posted.seq):
        if isinstance(ev.payload, event.DoneData) and ev.turn_id == turn_id:
            status = ev.payload.status
            continue  # a plan it approved goes on: its run, then Hans's summary
        for out in run.events(ev):
            yield encoder.encode(out)
    for out in run.close():
        yield encoder.encode(out)
    run.state = snapshot(*await services.db.read(_now, tenant, conversation_id))
    yield encoder.encode(core.StateSnapshotEvent(snapshot=run.state))
    waiting = None
    if status == "completed":
        waiting = (await services.db.read(standing, tenant, conversation_id, last=1)).waiting
    usage = await _usage(services, tenant, conversation_id, posted.turn_id)
    yield encoder.encode(run.end(status, waiting, usage))


async def _usage(
    services: Services, tenant: str, conversation_id: str, turn_id: str
) -> list[core.TokenUsage]:
    """The turn's model calls summed, as AG-UI's usage (none when it made no call)."""
    totals = await services.db.read(llm_calls.turn_totals, tenant, conversation_id, turn_id)
    if not totals.calls:
        return []
    return [
        core.TokenUsage(
            input_tokens=totals.prompt_tokens,
            output_tokens=totals.completion_tokens,
            total_tokens=totals.prompt_tokens + totals.completion_tokens,
        )
    ]
