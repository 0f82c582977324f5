"""The in-process bus, for one node (the embedded default)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from hansa.bus.base import Bus, Subscription
from hansa.domain.event import Event


class MemoryBus(Bus):
    """Rings every subscriber of a conversation in this process."""

    def __init__(self) -> None:
        self._subs: defaultdict[str, set[Subscription]] = defaultdict(set)

    def publish(self, conversation_id: str, seq: int, events: Sequence[Event] = ()) -> None:
        """Ring the conversation's subscribers, handing them the committed events."""
        for sub in self._subs.get(conversation_id, ()):
            sub.ring(events)

    def subscribe(self, conversation_id: str) -> Subscription:
        """A new subscription, live at once."""
        sub = Subscription(self, conversation_id)
        self._subs[conversation_id].add(sub)
        return sub

    def unsubscribe(self, subscription: Subscription) -> None:
        """Forget a subscription (idempotent)."""
        subs = self._subs.get(subscription.conversation_id)
        if subs is None:
            return
        subs.discard(subscription)
        if not subs:
            del self._subs[subscription.conversation_id]
