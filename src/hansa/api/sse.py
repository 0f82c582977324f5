"""Server-Sent Events as every Hansa stream sends them: sse-starlette's
``EventSourceResponse``, with a keep-alive comment (``: ping``) after each
``HANSA_SSE_KEEPALIVE_SECONDS`` of silence, so proxies with an idle timeout keep the
connection while a turn or a run works quietly. ``/api``'s streams, ``/v1``'s, ``/ap``'s and
``/ag-ui``'s all go through :class:`HeldStream` (clients skip comment lines, as the SSE
standard says).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from contextlib import aclosing
from typing import Any

from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.types import Receive, Scope, Send

from hansa.api import limits
from hansa.engine.runtime.services import Services

SEND_TIMEOUT_SECONDS = 30
"""How long a client may take to accept one frame before the stream is dropped."""


class HeldStream(EventSourceResponse):
    """An event stream that gives its subscriber slot (if it holds one) back however it
    ends."""

    def __init__(self, slot: limits.Slot | None, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.slot = slot

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            if self.slot is not None:
                self.slot.release()


def stream(
    services: Services,
    frames: AsyncGenerator[str | bytes | ServerSentEvent],
    *,
    slot: limits.Slot | None = None,
    headers: Mapping[str, str] | None = None,
) -> HeldStream:
    """``frames`` sent as they come, with keep-alive pings in the gaps. A text or bytes
    frame is already SSE (``data: …`` and its blank line) and goes out unchanged."""

    async def encoded() -> AsyncIterator[bytes | ServerSentEvent]:
        async with aclosing(frames) as source:  # closed with the response, not left to GC
            async for frame in source:
                yield frame.encode() if isinstance(frame, str) else frame

    return HeldStream(
        slot,
        encoded(),
        headers=headers,
        ping=services.settings.sse_keepalive_seconds,
        send_timeout=SEND_TIMEOUT_SECONDS,
    )
