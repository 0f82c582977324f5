"""Coalesce text deltas before they are persisted: never one transaction per token."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

Flush = Callable[[str], Awaitable[None]]


class DeltaCoalescer:
    """Buffers text; flushes when it holds ``max_chars`` or is ``max_age`` seconds old.

    A timer flushes a stalled buffer. ``take()`` hands the rest to the caller,
    which writes it with the final message in one transaction.
    """

    def __init__(self, flush: Flush, *, max_chars: int, max_age: float) -> None:
        self._flush = flush
        self._max_chars = max_chars
        self._max_age = max_age
        self._buffer: list[str] = []
        self._size = 0
        self._since = 0.0
        self._timer: asyncio.TimerHandle | None = None
        self._pending: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()

    async def add(self, text: str) -> None:
        """Buffer ``text``; flush if the buffer is full or old."""
        if not text:
            return
        if not self._buffer:
            self._since = time.monotonic()
            self._timer = asyncio.get_running_loop().call_later(self._max_age, self._on_timer)
        self._buffer.append(text)
        self._size += len(text)
        if self._size >= self._max_chars or time.monotonic() - self._since >= self._max_age:
            await self._flush_now()

    def _on_timer(self) -> None:
        self._timer = None
        if self._buffer and (self._pending is None or self._pending.done()):
            self._pending = asyncio.create_task(self._flush_now(), name="flush text deltas")

    async def _flush_now(self) -> None:
        async with self._lock:
            if not self._buffer:
                return
            text = self._take()
            await self._flush(text)

    def _take(self) -> str:
        text = "".join(self._buffer)
        self._buffer.clear()
        self._size = 0
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        return text

    async def take(self) -> str:
        """Stop the timer, wait for a flush in progress, and return the unflushed text."""
        if self._pending is not None:
            await self._pending
        async with self._lock:
            return self._take()
