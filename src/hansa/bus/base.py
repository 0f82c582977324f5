"""The Bus protocol: wake subscribers when a conversation's log grows.

The log is the source of truth. A bus may hand subscribers a copy of the events
it announces (the in-process bus does); a subscriber uses that copy only when it
continues exactly where the subscriber is, and otherwise reads the log.
"""

from __future__ import annotations

import abc
import asyncio
from collections.abc import Sequence

from hansa.domain.event import Event

MAX_PENDING = 512
"""Events a subscriber keeps in hand; past that it reads the log instead."""


class Subscription:
    """A subscriber's doorbell for one conversation, with the events announced since."""

    def __init__(self, bus: Bus, conversation_id: str) -> None:
        self.conversation_id = conversation_id
        self._bus = bus
        self._ring = asyncio.Event()
        self._pending: list[Event] = []
        self._needs_log = False

    def ring(self, events: Sequence[Event] = ()) -> None:
        """Called by the bus when new events were committed."""
        if not events or len(self._pending) + len(events) > MAX_PENDING:
            self._pending.clear()
            self._needs_log = True
        elif not self._needs_log:
            self._pending.extend(events)
        self._ring.set()

    def take(self, after: int) -> list[Event] | None:
        """Announced events continuing right after ``after``; None when the log must be read."""
        pending, self._pending = self._pending, []
        needs_log, self._needs_log = self._needs_log, False
        fresh = [e for e in pending if e.seq > after]
        if needs_log or (fresh and fresh[0].seq != after + 1):
            return None
        if any(b.seq != a.seq + 1 for a, b in zip(fresh, fresh[1:], strict=False)):
            return None
        return fresh

    async def wait(self, seconds: float) -> bool:
        """Wait until rung or ``seconds`` passed; True when rung."""
        try:
            await asyncio.wait_for(self._ring.wait(), seconds)
        except TimeoutError:
            return False
        finally:
            self._ring.clear()
        return True

    def close(self) -> None:
        """Stop receiving rings."""
        self._bus.unsubscribe(self)

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


class Bus(abc.ABC):
    """Delivers "new events" notices; never blocks a producer."""

    @abc.abstractmethod
    def publish(self, conversation_id: str, seq: int, events: Sequence[Event] = ()) -> None:
        """Announce that ``conversation_id`` has committed events up to ``seq``."""

    @abc.abstractmethod
    def subscribe(self, conversation_id: str) -> Subscription:
        """Start receiving notices for ``conversation_id``."""

    @abc.abstractmethod
    def unsubscribe(self, subscription: Subscription) -> None:
        """Stop a subscription."""

    @abc.abstractmethod
    def live(self) -> int:
        """Subscriptions open in this process."""

    @abc.abstractmethod
    def followed(self) -> int:
        """Conversations with at least one subscription open in this process."""
