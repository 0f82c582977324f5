"""Agent sessions (seed 004): create, read, control, and follow their steps live."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from fastapi import APIRouter, Query, Request, Response, WebSocket
from pydantic import Field
from sse_starlette import EventSourceResponse, ServerSentEvent

from hansa import errors
from hansa.api import errors as api_errors
from hansa.api import limits, sse
from hansa.api.deps import ServicesDep, TenantDep, current_tenant
from hansa.api.models import events
from hansa.api.models.automation import SessionOut, SessionStepOut
from hansa.api.models.base import answers
from hansa.api.routes.stream import Cursor, LastEventId, parse_seq
from hansa.domain import event
from hansa.domain.base import Wire
from hansa.domain.session import MAX_GUIDANCE_CHARS, AgentSession, SessionStatus
from hansa.engine.runtime.follow import follow
from hansa.engine.runtime.services import Services
from hansa.engine.sessions import service
from hansa.store import sessions as rows

router = APIRouter(prefix="/api/agent-sessions", tags=["sessions"])

SESSION_EVENTS = frozenset({"session_step", "session_status"})


class Guidance(Wire):
    """``POST /api/agent-sessions/{id}/interrupt``."""

    guidance: str = Field(min_length=1, max_length=MAX_GUIDANCE_CHARS)


@router.post(
    "",
    status_code=201,
    operation_id="createAgentSession",
    responses=answers(None, 404),
)
async def create_session(
    body: service.NewSession, services: ServicesDep, tenant: TenantDep
) -> SessionOut:
    """Start a session: its first step is queued at once."""
    return SessionOut.of(await service.create(services, tenant, body))


@router.get("", operation_id="listAgentSessions")
async def list_sessions(
    services: ServicesDep,
    tenant: TenantDep,
    agent_id: str | None = Query(default=None, alias="agentId", max_length=64),
    status: SessionStatus | None = None,
) -> list[SessionOut]:
    """The tenant's sessions, newest first."""
    found = await services.db.read(
        rows.list_all, tenant, agent_id, status.value if status else None
    )
    return [SessionOut.of(s) for s in found]


@router.get(
    "/{session_id}",
    operation_id="getAgentSession",
)
async def get_session(session_id: str, services: ServicesDep, tenant: TenantDep) -> SessionOut:
    """One session."""
    return SessionOut.of(await services.db.read(lambda conn: rows.get(conn, tenant, session_id)))


@router.post(
    "/{session_id}/pause",
    operation_id="pauseAgentSession",
    responses=answers(None, 409),
)
async def pause_session(session_id: str, services: ServicesDep, tenant: TenantDep) -> SessionOut:
    """No step starts; one in flight finishes and is recorded."""
    return SessionOut.of(await service.pause(services, tenant, session_id))


@router.post(
    "/{session_id}/resume",
    operation_id="resumeAgentSession",
    responses=answers(None, 409),
)
async def resume_session(session_id: str, services: ServicesDep, tenant: TenantDep) -> SessionOut:
    """Go on from the step after the last recorded."""
    return SessionOut.of(await service.resume(services, tenant, session_id))


@router.post(
    "/{session_id}/interrupt",
    operation_id="interruptAgentSession",
    responses=answers(None, 409),
)
async def interrupt_session(
    session_id: str, body: Guidance, services: ServicesDep, tenant: TenantDep
) -> SessionOut:
    """Give guidance to exactly the next step."""
    return SessionOut.of(await service.interrupt(services, tenant, session_id, body.guidance))


@router.post(
    "/{session_id}/stop",
    operation_id="stopAgentSession",
    responses=answers(None, 409),
)
async def stop_session(session_id: str, services: ServicesDep, tenant: TenantDep) -> SessionOut:
    """End the session: ``stopped`` at once, or ``stopping`` while the step in flight
    finishes and is recorded with what its tools did (then ``stopped``)."""
    return SessionOut.of(await service.stop(services, tenant, session_id))


@router.delete("/{session_id}", status_code=204, operation_id="deleteAgentSession")
async def delete_session(session_id: str, services: ServicesDep, tenant: TenantDep) -> Response:
    """Stop the session and remove it with its steps."""
    await service.delete(services, tenant, session_id)
    return Response(status_code=204)


@router.get(
    "/{session_id}/steps",
    operation_id="listAgentSessionSteps",
)
async def session_steps(
    session_id: str,
    services: ServicesDep,
    tenant: TenantDep,
    after: int = Query(default=0, ge=0, le=2**31),
    limit: int = Query(default=rows.STEPS_PAGE, ge=1, le=rows.STEPS_PAGE),
) -> list[SessionStepOut]:
    """The session's steps after iteration ``after``, in order (a page of ``limit``)."""

    def read(conn: Any) -> list[Any]:
        rows.get(conn, tenant, session_id)  # 404 for another tenant's
        return rows.steps_after(conn, session_id, after, limit)

    return [SessionStepOut.of(s) for s in await services.db.read(read)]


def _mine(ev: event.Event, session_id: str) -> bool:
    return ev.type in SESSION_EVENTS and ev.to_wire()["data"].get("sessionId") == session_id


async def _events(
    services: Services, tenant: str, session: AgentSession, cursor: int
) -> AsyncIterator[event.Event | None]:
    idle = services.settings.sse_keepalive_seconds
    async for ev in follow(services, tenant, session.conversation_id, cursor, idle_seconds=idle):
        if ev is None or _mine(ev, session.id):
            yield ev


@router.get(
    "/{session_id}/events",
    operation_id="streamAgentSessionEvents",
    response_model=None,
    response_class=EventSourceResponse,
    responses=events.stream_answer("SessionStepEvent", "SessionStatusEvent"),
)
async def session_events(
    session_id: str,
    services: ServicesDep,
    tenant: TenantDep,
    request: Request,
    after: Cursor = None,
    last_event_id: LastEventId = None,
) -> EventSourceResponse:
    """SSE of the session's ``session_step`` and ``session_status`` events; ``id`` is the
    seq in its conversation's log, so ``Last-Event-ID`` resumes."""
    cursor = parse_seq(after, "after")
    if last_event_id is not None:  # a reconnecting EventSource: it wins over ?after=
        cursor = parse_seq(last_event_id, "Last-Event-ID")
    session = await services.db.read(lambda conn: rows.get(conn, tenant, session_id))
    # it follows the session's conversation: one of that conversation's subscriber slots
    slot = limits.of(request.app).subscribers.hold(tenant, session.conversation_id)

    async def frames() -> AsyncGenerator[ServerSentEvent]:
        async for ev in _events(services, tenant, session, cursor):
            if ev is not None:
                yield ServerSentEvent(json.dumps(ev.to_wire()), event=ev.type, id=str(ev.seq))

    return sse.stream(services, frames(), slot=slot)


@router.websocket("/{session_id}/ws")
async def session_websocket(
    websocket: WebSocket, session_id: str, after: str | None = None
) -> None:
    """The same events as JSON text frames."""
    services: Services = websocket.app.state.services
    tenant = current_tenant(websocket)
    try:
        cursor = parse_seq(after, "after")
        session = await services.db.read(lambda conn: rows.get(conn, tenant, session_id))
        slot = limits.of(websocket.app).subscribers.hold(tenant, session.conversation_id)
    except errors.UserError as exc:
        await api_errors.refuse_websocket(websocket, exc)
        return
    try:
        await websocket.accept()
        await _send_until_closed(websocket, services, tenant, session, cursor)
    finally:
        slot.release()


async def _send_until_closed(
    websocket: WebSocket, services: Services, tenant: str, session: AgentSession, cursor: int
) -> None:
    timeout = services.settings.ws_send_timeout_seconds

    async def send_events() -> None:
        async for ev in _events(services, tenant, session, cursor):
            if ev is not None:
                async with asyncio.timeout(timeout):
                    await websocket.send_text(json.dumps(ev.to_wire()))

    async def until_closed() -> None:
        while (await websocket.receive())["type"] != "websocket.disconnect":
            pass

    tasks = [asyncio.create_task(send_events()), asyncio.create_task(until_closed())]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
