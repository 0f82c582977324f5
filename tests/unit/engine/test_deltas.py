import asyncio

import pytest

from hansa.engine.turns.deltas import DeltaCoalescer

pytestmark = pytest.mark.anyio


class Flushes:
    """What a coalescer flushed, in order, and an event set at each flush."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self.flushed = asyncio.Event()

    async def __call__(self, text: str) -> None:
        self.seen.append(text)
        self.flushed.set()


async def test_flushes_when_the_buffer_reaches_its_size() -> None:
    flush = Flushes()
    c = DeltaCoalescer(flush, max_chars=10, max_age=60)
    for piece in ["abc", "def", "ghij", "k"]:
        await c.add(piece)
    assert flush.seen == ["abcdefghij"]
    assert await c.take() == "k"


async def test_a_stalled_buffer_is_flushed_by_the_timer() -> None:
    flush = Flushes()
    seen, flushed = flush.seen, flush.flushed
    c = DeltaCoalescer(flush, max_chars=1000, max_age=0.02)
    await c.add("slow")
    await asyncio.wait_for(flushed.wait(), 2)
    assert seen == ["slow"]
    assert await c.take() == ""


async def test_take_returns_everything_not_flushed_and_nothing_twice() -> None:
    flush = Flushes()
    seen = flush.seen
    c = DeltaCoalescer(flush, max_chars=4, max_age=60)
    for piece in "hello world":
        await c.add(piece)
    rest = await c.take()
    assert "".join(seen) + rest == "hello world"


async def test_the_first_text_is_written_within_milliseconds_not_the_flush_age() -> None:
    flush = Flushes()
    seen, flushed = flush.seen, flush.flushed
    c = DeltaCoalescer(flush, max_chars=1000, max_age=60)
    await c.add("")  # nothing is not a first text
    await c.add("Hello")
    await asyncio.wait_for(flushed.wait(), 2)  # not the 60 s of max_age
    assert seen == ["Hello"]
    await c.add(", world")
    await asyncio.sleep(0.05)
    assert seen == ["Hello"]  # later text waits for max_age (or max_chars) again
    assert await c.take() == ", world"


async def test_a_reply_whole_at_once_is_all_taken_with_its_message() -> None:
    flush = Flushes()
    seen = flush.seen
    c = DeltaCoalescer(flush, max_chars=1000, max_age=60)
    for piece in ["All ", "at ", "once."]:
        await c.add(piece)
    assert await c.take() == "All at once."
    await asyncio.sleep(0.05)
    assert seen == []  # no transaction of its own for a reply that came whole
