"""The in-process bus keeps a conversation only while a subscription of it is open."""

from __future__ import annotations

import pytest

from hansa.bus.memory import MemoryBus


@pytest.mark.anyio
async def test_closed_subscriptions_leave_no_conversation_behind() -> None:
    bus = MemoryBus()
    subs = [bus.subscribe(f"conversation-{i % 7}") for i in range(50)]
    assert (bus.live(), bus.followed()) == (50, 7)

    for sub in subs[:25]:
        sub.close()
    assert bus.live() == 25

    for sub in subs:
        sub.close()  # again for the first half: closing is idempotent
    assert (bus.live(), bus.followed()) == (0, 0)


@pytest.mark.anyio
async def test_a_conversation_stays_followed_while_one_stream_is_open() -> None:
    bus = MemoryBus()
    first, second = bus.subscribe("c"), bus.subscribe("c")

    first.close()
    bus.publish("c", 1)

    assert (bus.live(), bus.followed()) == (1, 1)
    assert await second.wait(5) is True  # the one left is still rung (at once: already)
    second.close()
    assert (bus.live(), bus.followed()) == (0, 0)
