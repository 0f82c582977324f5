import asyncio

import pytest

from hansa.engine.turns.deltas import DeltaCoalescer

pytestmark = pytest.mark.anyio


async def test_flushes_when_the_buffer_reaches_its_size() -> None:
    flushed: list[str] = []

    async def flush(text: str) -> None:
        flushed.append(text)

    c = DeltaCoalescer(flush, max_chars=10, max_age=60)
    for piece in ["first", "abc", "def", "ghij", "k"]:
        await c.add(piece)
    assert flushed == ["first", "abcdefghij"]
    assert await c.take() == "k"


async def test_the_first_text_goes_out_at_once() -> None:
    flushed: list[str] = []

    async def flush(text: str) -> None:
        flushed.append(text)

    c = DeltaCoalescer(flush, max_chars=1000, max_age=60)
    await c.add("")  # nothing is not a first text
    await c.add("Hello")
    assert flushed == ["Hello"]
    await c.add(", world")
    assert flushed == ["Hello"]
    assert await c.take() == ", world"


async def test_a_stalled_buffer_is_flushed_by_the_timer() -> None:
    flushed = asyncio.Event()
    seen: list[str] = []

    async def flush(text: str) -> None:
        seen.append(text)
        flushed.set()

    c = DeltaCoalescer(flush, max_chars=1000, max_age=0.02)
    await c.add("first")
    flushed.clear()
    await c.add("slow")
    await asyncio.wait_for(flushed.wait(), 2)
    assert seen == ["first", "slow"]
    assert await c.take() == ""


async def test_take_returns_everything_not_flushed_and_nothing_twice() -> None:
    seen: list[str] = []

    async def flush(text: str) -> None:
        seen.append(text)

    c = DeltaCoalescer(flush, max_chars=4, max_age=60)
    for piece in "hello world":
        await c.add(piece)
    rest = await c.take()
    assert "".join(seen) + rest == "hello world"
