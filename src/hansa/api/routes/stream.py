"""Live events: Server-Sent Events and WebSocket, replayed from the log then followed."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import aclosing

from fastapi import APIRouter, Header, Query, Request, WebSocket, WebSocketDisconnect
from sse_starlette import EventSourceResponse, ServerSentEvent

from hansa import errors
from hansa.api.deps import ServicesDep, TenantDep, current_tenant
from hansa.engine.runtime.follow import follow, follow_batches
from hansa.engine.runtime.services import Services
from hansa.engine.turns import chat
from hansa.store import conversations

router = APIRouter(prefix="/api/conversations")


def _cursor(after: int | None, last_event_id: str | None) -> int:
    if last_event_id is not None:
        if not last_event_id.strip().isdigit():
            raise errors.InvalidInput("Last-Event-ID must be an event seq (a whole number)")
        return int(last_event_id)
    return after or 0


@router.get("/{conversation_id}/events")
async def stream_events(
    conversation_id: str,
    request: Request,
    services: ServicesDep,
    tenant: TenantDep,
    after: int | None = Query(default=None, ge=0),
    until: str | None = Query(default=None, pattern="^done$"),
    last_event_id: str | None = Header(default=None),
) -> EventSourceResponse:
    """SSE: ``id`` is the seq, ``event`` the type, ``data`` the event as JSON."""
    await services.db.read(lambda conn: conversations.get(conn, tenant, conversation_id))
    cursor = _cursor(after, last_event_id)

    idle = services.settings.sse_keepalive_seconds

    async def frames() -> AsyncIterator[bytes]:
        # one chunk per commit, not per event: each send costs more than its encoding
        batches = follow_batches(services, tenant, conversation_id, cursor, idle_seconds=idle)
        async with aclosing(batches) as stream:
            async for batch in stream:  # an empty batch: sse-starlette sends its own pings
                chunk, done = [], False
                for ev in batch:
                    frame = ServerSentEvent(json.dumps(ev.to_wire()), event=ev.type, id=str(ev.seq))
                    chunk.append(frame.encode())
                    if until and ev.type == "done":
                        done = True
                        break
                if chunk:
                    yield b"".join(chunk)
                if done:
                    return

    return EventSourceResponse(
        frames(), ping=int(services.settings.sse_keepalive_seconds), send_timeout=30
    )


@router.websocket("/{conversation_id}/ws")
async def websocket_events(websocket: WebSocket, conversation_id: str, after: int = 0) -> None:
    """The same events as JSON text frames; the client may send ``{"type": "message", ...}``."""
    services: Services = websocket.app.state.services
    tenant = current_tenant(websocket)
    try:
        await services.db.read(lambda conn: conversations.get(conn, tenant, conversation_id))
    except errors.NotFound:
        await websocket.close(code=4404, reason="conversation not found")
        return
    await websocket.accept()

    idle = services.settings.sse_keepalive_seconds

    async def send_events() -> None:
        async for ev in follow(services, tenant, conversation_id, after, idle_seconds=idle):
            if ev is not None:
                await websocket.send_text(json.dumps(ev.to_wire()))

    async def receive_messages() -> None:
        while True:
            try:
                incoming = json.loads(await websocket.receive_text())
            except json.JSONDecodeError:
                await _ws_error(websocket, "malformed_json", "frames must be JSON objects")
                continue
            if not isinstance(incoming, dict) or incoming.get("type") != "message":
                await _ws_error(
                    websocket, "unknown_frame", 'send {"type": "message", "content": …}'
                )
                continue
            try:
                posted = await chat.post_message(
                    services,
                    tenant,
                    conversation_id,
                    str(incoming.get("content", "")),
                    active_agent_id=incoming.get("activeAgentId"),
                    project_context=incoming.get("projectContext"),
                )
            except errors.UserError as exc:
                await _ws_error(websocket, exc.code, exc.message)
                continue
            await websocket.send_text(
                json.dumps(
                    {"type": "accepted", "messageId": posted.message_id, "turnId": posted.turn_id}
                )
            )

    sender = asyncio.create_task(send_events(), name=f"ws send {conversation_id}")
    try:
        await receive_messages()
    except WebSocketDisconnect:
        pass
    finally:
        sender.cancel()
        await asyncio.gather(sender, return_exceptions=True)


async def _ws_error(websocket: WebSocket, code: str, message: str) -> None:
    await websocket.send_text(
        json.dumps({"type": "error", "error": {"code": code, "message": message}})
    )
