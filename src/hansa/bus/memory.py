"""The in-process bus, for one node (the embedded default)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from hansa.bus.base import Bus, Subscription
from hansa.domain.event import Event


class MemoryBus(Bus):
    """Rings every subscriber of a conversation in this process.

    A conversation is kept only while it has a subscription: the last one to close (a stream
    that ends, politely or not, closes its subscription on the way out) removes it, so the
    map is as large as the streams open now, never as the conversations ever followed.
    """

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

    def live(self) -> int:
        """Subscriptions open in this process."""
        return sum(len(subs) for subs in self._subs.values())

    def followed(self) -> int:
        """Conversations with at least one subscription open in this process."""
        return len(self._subs)
