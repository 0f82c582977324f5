"""How text streams (``text_delta`` events): coalesced before it is persisted, never one
transaction per token, and under the id its message then carries.

A reply's text comes from its model piece by piece (``DeltaCoalescer``). A message said
whole, as Hans's planning messages are (``say_whole``), streams the same way: its deltas,
each at most what the coalescer holds before it writes, then the message, under one id.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from hansa.domain import event, message
from hansa.domain.base import new_id
from hansa.engine.runtime.recorder import Batch

Flush = Callable[[str], Awaitable[None]]


def delta(batch: Batch, message_id: str, text: str, *, agent_id: str) -> None:
    """Add a ``text_delta`` of message ``message_id`` to ``batch``."""
    batch.event(event.TextDeltaData(message_id=message_id, delta=text), agent_id=agent_id)


def say_whole(
    batch: Batch,
    text: str,
    *,
    agent_id: str,
    max_chars: int,
    metadata: dict[str, Any] | None = None,
) -> str:
    """Add an assistant message said whole as any streamed text reaches a client: its
    ``text_delta`` events (``max_chars`` at most each, the size a ``DeltaCoalescer`` writes),
    then the message under the same id, in ``batch`` (so in one transaction); the message's
    id."""
    message_id = new_id()
    for start in range(0, len(text), max_chars):
        delta(batch, message_id, text[start : start + max_chars], agent_id=agent_id)
    return batch.message(
        message.Kind.ASSISTANT,
        message.Author.ASSISTANT,
        text,
        agent_id=agent_id,
        metadata=metadata,
        message_id=message_id,
    )


FIRST_AGE = 0.005
"""Seconds a message's first text waits before it is written (not ``max_age``): the time to
first text waits for it, while a reply whole within this time (a scripted or cached model)
is still written once, with its message."""


class DeltaCoalescer:
    """Buffers text; flushes when it holds ``max_chars`` or is ``max_age`` seconds old (the
    first text: ``FIRST_AGE``).

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
        self._first = True

    async def add(self, text: str) -> None:
        """Buffer ``text``; flush if the buffer is full or old."""
        if not text:
            return
        if not self._buffer:
            self._since = time.monotonic()
            age = min(FIRST_AGE, self._max_age) if self._first else self._max_age
            self._first = False
            self._timer = asyncio.get_running_loop().call_later(age, self._on_timer)
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
