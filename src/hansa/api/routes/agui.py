"""AG-UI (CopilotKit's agent-user interaction protocol): ``POST /ag-ui/{agent_id}`` runs a
turn of the agent and streams it as AG-UI events (``api/agui_events.py`` says which).

The body is AG-UI's ``RunAgentInput``. Its ``threadId`` names the Hansa conversation: the
caller's conversation of that id, else the one opened for that thread before (its
metadata keeps the thread id: ``store/threads.py``), else a new one. Only the last user
message of ``messages`` is posted: Hansa keeps the history. ``state``, ``tools`` (frontend
tools), ``context`` and ``forwardedProps`` are accepted and not used; the agent's own tools
run inside its turn and show as ``TOOL_CALL_*`` events.

The run's ``STATE_SNAPSHOT`` is the conversation (id, state, active agent, title) and its
agents' scratchpads, sent after ``RUN_STARTED``, on each scratchpad change and before the
run's end. Refusals before the stream starts keep Hansa's error shape (404 unknown agent,
422 no user message, 409 an archived conversation); a turn quiet for
``HANSA_CHAT_TIMEOUT_SECONDS`` ends the stream with ``RUN_ERROR`` ``turn_timeout``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from ag_ui import core
from ag_ui.encoder import EventEncoder
from fastapi import APIRouter
from fastapi.responses import StreamingResponse
from pydantic import Field
from sqlalchemy import Connection

from hansa import errors
from hansa.api.agui_events import TIMED_OUT, Translation, snapshot
from hansa.api.deps import ServicesDep, TenantDep
from hansa.api.models.base import answers
from hansa.domain import agent_state, conversation, event
from hansa.engine.runtime.services import Services
from hansa.engine.turns import chat
from hansa.store import agent_states, conversations, threads

router = APIRouter(prefix="/ag-ui", tags=["ag-ui"])
CONVERSATION_HEADER = "X-Hansa-Conversation-Id"
MAX_THREAD_ID = 200
"""The longest ``threadId`` taken (it is kept in the conversation's metadata)."""


class RunAgentInput(core.RunAgentInput):
    """AG-UI's ``RunAgentInput``; ``threadId`` is kept in a conversation's metadata, so it
    is bounded."""

    thread_id: str = Field(min_length=1, max_length=MAX_THREAD_ID)


class AgUiEventStream(StreamingResponse):
    """Server-Sent Events, each ``data:`` line one AG-UI event as JSON."""

    media_type = "text/event-stream"


_STREAM: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "Server-Sent Events: each `data` line one AG-UI event as JSON "
        "(https://docs.ag-ui.com/concepts/events): RUN_STARTED, STATE_SNAPSHOT, the turn "
        "(TEXT_MESSAGE_*, TOOL_CALL_*, STEP_*, CUSTOM hansa.<type>), a last STATE_SNAPSHOT, "
        "then RUN_FINISHED or RUN_ERROR. The `X-Hansa-Conversation-Id` header names the "
        "conversation.",
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
    response_model=None,
    response_class=AgUiEventStream,
    responses={**answers(None, 401, 403, 404, 409, 429), **_STREAM},
    openapi_extra={"security": [{"bearerKey": []}]},
)
async def run_agui_agent(
    agent_id: str, body: RunAgentInput, services: ServicesDep, tenant: TenantDep
) -> AgUiEventStream:
    """Run a turn of ``agent_id`` on the last user message of ``messages`` in the
    conversation of ``threadId``, streamed as AG-UI events."""
    await services.agents.require(tenant, agent_id)
    text = _last_user_text(body.messages)
    conversation_id = await _conversation_of(services, tenant, body.thread_id, agent_id)
    posted = await chat.post_message(
        services, tenant, conversation_id, text, active_agent_id=agent_id
    )
    state = snapshot(*await services.db.read(_now, tenant, conversation_id))
    run = Translation(body.thread_id, body.run_id, state)
    return AgUiEventStream(
        _stream(services, tenant, conversation_id, posted, run),
        headers={CONVERSATION_HEADER: conversation_id},
    )


def _last_user_text(messages: list[core.Message]) -> str:
    for m in reversed(messages):
        if not isinstance(m, core.UserMessage):
            continue
        if isinstance(m.content, str):
            return m.content
        return "\n".join(p.text for p in m.content if isinstance(p, core.TextPart))
    raise errors.InvalidInput("messages must contain a user message", details={"field": "messages"})


async def _conversation_of(services: Services, tenant: str, thread_id: str, agent_id: str) -> str:
    """The conversation that continues ``thread_id``, opened if there is none."""

    def own(conn: Connection) -> str | None:
        try:
            return conversations.get(conn, tenant, thread_id).id
        except errors.NotFound:  # also another tenant's id: a thread of this tenant's own
            return None

    found = await services.db.read(own) or await services.db.read(threads.find, tenant, thread_id)
    if found is not None:
        return found
    convo = await chat.create_conversation(services, tenant, active_agent_id=agent_id)
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
) -> AsyncIterator[str]:
    encoder = EventEncoder()
    for out in run.started():
        yield encoder.encode(out)
    status = TIMED_OUT
    async for ev in chat.turn_events(services, tenant, conversation_id, posted):
        if isinstance(ev.payload, event.DoneData):
            status = ev.payload.status
            break
        for out in run.events(ev):
            yield encoder.encode(out)
    for out in run.close():
        yield encoder.encode(out)
    run.state = snapshot(*await services.db.read(_now, tenant, conversation_id))
    yield encoder.encode(core.StateSnapshotEvent(snapshot=run.state))
    yield encoder.encode(run.end(status))
