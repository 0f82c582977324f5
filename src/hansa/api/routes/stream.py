"""Live events: Server-Sent Events and WebSocket, replayed from the log then followed.

A cursor (``?after=``, ``Last-Event-ID``) is a whole number from 0 to 2^62; anything
else is refused (400, or the WebSocket handshake's 400). Each stream holds one of the
conversation's and the tenant's subscriber slots (``api/limits.py``) while it lives. A
WebSocket frame is held to the same rules as ``POST …/messages``: the body limit, the
JSON limits and ``MessageCreate``; a client that does not take a frame within
``ws_send_timeout_seconds`` is disconnected.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import Annotated, Any

from fastapi import APIRouter, Header, Query, Request, WebSocket
from pydantic import ValidationError
from sse_starlette import EventSourceResponse, ServerSentEvent

from hansa import errors
from hansa.api import errors as api_errors
from hansa.api import limits, sse
from hansa.api.deps import ServicesDep, TenantDep, current_tenant
from hansa.api.models import events
from hansa.api.models.base import stated
from hansa.api.routes import control
from hansa.api.schemas import MessageCreate
from hansa.engine.runtime.follow import follow, follow_batches
from hansa.engine.runtime.services import Services
from hansa.engine.turns import chat
from hansa.store import conversations

router = APIRouter(prefix="/api/conversations", tags=["events"])

MAX_SEQ = 2**62
"""The largest cursor accepted (far beyond any log; well inside a 64-bit integer)."""
_SEQ = re.compile(r"[0-9]{1,19}")

WS_SEND_TIMED_OUT = 4408
"""The close code for a WebSocket client that stopped taking frames."""


_CURSOR = stated(type="string", pattern=r"^[0-9]{1,18}$")
"""A cursor as the description states it (``parse_seq`` checks it, with its own 400)."""
Cursor = Annotated[str | None, Query(json_schema_extra=_CURSOR)]
LastEventId = Annotated[str | None, Header(json_schema_extra=_CURSOR)]


def parse_seq(raw: str | None, name: str) -> int:
    """A cursor given as text: 0 when absent; 400 unless a whole number 0..2^62."""
    if raw is None:
        return 0
    text = raw.strip()
    if _SEQ.fullmatch(text) is None or int(text) > MAX_SEQ:
        raise errors.UserError(
            f"{name} must be an event seq: a whole number from 0 to 2^62",
            details={"field": name},
        )
    return int(text)


@router.get(
    "/{conversation_id}/events",
    operation_id="streamConversationEvents",
    response_model=None,
    response_class=EventSourceResponse,
    responses=events.stream_answer(),
)
async def stream_events(
    conversation_id: str,
    request: Request,
    services: ServicesDep,
    tenant: TenantDep,
    after: Cursor = None,
    until: str | None = Query(default=None, pattern="^done$"),
    last_event_id: LastEventId = None,
) -> EventSourceResponse:
    """SSE: ``id`` is the seq, ``event`` the type, ``data`` the event as JSON."""
    cursor = parse_seq(after, "after")
    if last_event_id is not None:  # a reconnecting EventSource: it wins over ?after=
        cursor = parse_seq(last_event_id, "Last-Event-ID")
    await services.db.read(lambda conn: conversations.get(conn, tenant, conversation_id))
    slot = limits.of(request.app).subscribers.hold(tenant, conversation_id)

    idle = services.settings.sse_keepalive_seconds

    async def frames() -> AsyncGenerator[bytes]:
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

    return sse.stream(services, frames(), slot=slot)


@router.websocket("/{conversation_id}/ws")
async def websocket_events(
    websocket: WebSocket, conversation_id: str, after: str | None = None
) -> None:
    """The same events as JSON text frames; the client may send ``{"type": "message", ...}``."""
    services: Services = websocket.app.state.services
    tenant = current_tenant(websocket)
    try:
        cursor = parse_seq(after, "after")
        await services.db.read(lambda conn: conversations.get(conn, tenant, conversation_id))
        slot = limits.of(websocket.app).subscribers.hold(tenant, conversation_id)
    except errors.UserError as exc:  # another tenant's conversation too: 404, as over HTTP
        await api_errors.refuse_websocket(websocket, exc)
        return
    try:
        await websocket.accept()
        await _converse(websocket, services, tenant, conversation_id, cursor)
    finally:
        slot.release()


async def _converse(
    websocket: WebSocket, services: Services, tenant: str, conversation_id: str, cursor: int
) -> None:
    settings = services.settings

    async def send(payload: dict[str, Any]) -> None:
        async with asyncio.timeout(settings.ws_send_timeout_seconds):
            await websocket.send_text(json.dumps(payload))

    async def send_events() -> None:
        idle = settings.sse_keepalive_seconds
        async for ev in follow(services, tenant, conversation_id, cursor, idle_seconds=idle):
            if ev is not None:
                await send(ev.to_wire())

    async def receive_messages() -> None:
        while True:
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                return
            frame = message.get("text")
            if frame is None:
                frame = (message.get("bytes") or b"").decode("utf-8", "replace")
            try:
                body = _message(frame, settings.max_body_bytes, settings.max_json_depth)
                if isinstance(body, control.Control):  # seed 001's control events
                    if body.event == "stream.handoff" and body.conversation_id is None:
                        body = body.model_copy(update={"conversation_id": conversation_id})
                    done = await control.apply(services, tenant, body)
                    await send({"type": "control", **done.model_dump(mode="json", by_alias=True)})
                    continue
                posted = await chat.post_message(
                    services,
                    tenant,
                    conversation_id,
                    body.content,
                    active_agent_id=body.active_agent_id,
                    project_context=body.project_context,
                    strategy=body.multitask_strategy,
                )
            except errors.UserError as exc:
                await send({"type": "error", "error": _error(exc)})
                continue
            await send(
                {"type": "accepted", "messageId": posted.message_id, "turnId": posted.turn_id}
            )

    sender = asyncio.create_task(send_events(), name=f"ws send {conversation_id}")
    receiver = asyncio.create_task(receive_messages(), name=f"ws receive {conversation_id}")
    try:
        await asyncio.wait((sender, receiver), return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (sender, receiver):
            task.cancel()
        ended = await asyncio.gather(sender, receiver, return_exceptions=True)
    if isinstance(ended[0], TimeoutError) or isinstance(ended[1], TimeoutError):
        reason = f"no frame was taken for {settings.ws_send_timeout_seconds:.0f} s"
        await _close(websocket, WS_SEND_TIMED_OUT, reason)


def _message(frame: str, max_bytes: int, max_depth: int) -> MessageCreate | control.Control:
    """A frame as ``POST …/messages`` (or ``POST /api/control``, for a ``stream.*`` frame)
    would take it, or the ``UserError`` it gets."""
    data = frame.encode()
    if len(data) > max_bytes:
        raise _FrameError("body_too_large", f"frames may be at most {max_bytes} bytes")
    refused = api_errors.json_problem(data, max_depth)
    if refused is not None:
        raise _FrameError(refused.code, refused.message)
    try:
        incoming = json.loads(frame)
    except ValueError:
        raise _FrameError("malformed_json", "frames must be JSON objects") from None
    kind = incoming.get("type") if isinstance(incoming, dict) else None
    if not isinstance(kind, str) or (kind != "message" and not kind.startswith("stream.")):
        raise _FrameError(
            "unknown_frame", 'send {"type": "message", "content": …} or a stream.* control event'
        )
    try:
        if kind.startswith("stream."):
            rest = {k: v for k, v in incoming.items() if k != "type"}
            return control.Control.model_validate({**rest, "event": kind})
        return MessageCreate.model_validate(incoming)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(x) for x in first.get("loc", ()))
        raise _FrameError("validation_error", f"{field or 'frame'}: {first['msg']}") from None


class _FrameError(errors.UserError):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def _error(exc: errors.UserError) -> dict[str, Any]:
    found: dict[str, Any] = {"code": exc.code, "message": exc.message}
    if isinstance(exc, errors.RateLimited):
        found["retryAfter"] = exc.retry_after
    return found


async def _close(websocket: WebSocket, code: int, reason: str) -> None:
    # the client may be gone, or too slow to take even the close frame
    with contextlib.suppress(Exception):
        async with asyncio.timeout(1):
            await websocket.close(code=code, reason=reason)
