"""The Bus protocol: wake subscribers when a conversation's log grows."""

from __future__ import annotations

import abc
import asyncio


class Subscription:
    """A subscriber's doorbell for one conversation; readers read the log themselves."""

    def __init__(self, bus: Bus, conversation_id: str) -> None:
        self.conversation_id = conversation_id
        self._bus = bus
        self._ring = asyncio.Event()

    def ring(self) -> None:
        """Called by the bus when new events were committed."""
        self._ring.set()

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
    """Delivers "new events" notices; never holds events, never blocks a producer."""

    @abc.abstractmethod
    def publish(self, conversation_id: str, seq: int) -> None:
        """Announce that ``conversation_id`` has committed events up to ``seq``."""

    @abc.abstractmethod
    def subscribe(self, conversation_id: str) -> Subscription:
        """Start receiving notices for ``conversation_id``."""

    @abc.abstractmethod
    def unsubscribe(self, subscription: Subscription) -> None:
        """Stop a subscription."""
