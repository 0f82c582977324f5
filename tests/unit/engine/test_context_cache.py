"""The context packs' cache: kept until its project changes or it expires, bounded, and
never keeping a read that raced a change."""

from __future__ import annotations

import asyncio

import pytest

from hansa.engine.context_cache import TENANT, ContextCache


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Reads:
    """A read that counts how often it ran and returns its count."""

    def __init__(self) -> None:
        self.count = 0

    async def __call__(self) -> int:
        self.count += 1
        return self.count


def test_a_value_is_read_once_then_kept_until_its_project_changes() -> None:
    async def go() -> None:
        cache, reads, others = ContextCache(8, 30), Reads(), Reads()
        key, other = ("t1", "p1", "digest"), ("t1", "p2", "digest")
        assert [await cache.get(key, reads) for _ in range(3)] == [1, 1, 1]
        await cache.get(other, others)
        overview = await cache.get(("t1", TENANT, "overview"), Reads())

        cache.invalidate("t1", "p1")

        assert await cache.get(key, reads) == 2, "read again after its project changed"
        assert await cache.get(other, others) == 1, "another project's stays"
        assert overview == 1 and len(cache) == 2, "the tenant's overview went too"
        assert (cache.hits, cache.misses) == (3, 4)

    asyncio.run(go())


def test_a_change_without_a_project_drops_every_entry_of_the_tenant_only() -> None:
    async def go() -> None:
        cache = ContextCache(8, 30)
        for key in [("t1", "p1", "d"), ("t1", "p2", "d"), ("t2", "p1", "d")]:
            await cache.get(key, Reads())
        cache.invalidate("t1")
        assert len(cache) == 1
        assert await cache.get(("t2", "p1", "d"), Reads()) == 1 and cache.hits == 1

    asyncio.run(go())


def test_entries_expire_and_the_least_recently_used_goes_past_the_bound() -> None:
    async def go() -> None:
        clock = Clock()
        cache = ContextCache(2, 10, clock=clock)
        a, b, c = Reads(), Reads(), Reads()
        await cache.get(("t", "a", "d"), a)
        await cache.get(("t", "b", "d"), b)
        await cache.get(("t", "a", "d"), a)  # a used last: b is the oldest
        await cache.get(("t", "c", "d"), c)
        assert len(cache) == 2
        assert await cache.get(("t", "a", "d"), a) == 1
        assert await cache.get(("t", "b", "d"), b) == 2, "b was dropped past the bound"
        clock.now = 10.5
        assert await cache.get(("t", "a", "d"), a) == 2, "expired after ttl seconds"

    asyncio.run(go())


def test_a_read_that_raced_a_change_is_used_but_not_kept() -> None:
    async def go() -> None:
        cache = ContextCache(8, 30)
        started, release = asyncio.Event(), asyncio.Event()
        reads = Reads()

        async def slow() -> int:
            started.set()
            await release.wait()
            return await reads()

        pending = asyncio.create_task(cache.get(("t", "p", "d"), slow))
        await started.wait()
        cache.invalidate("t", "p")  # committed while the read ran: it may be stale
        release.set()
        assert await pending == 1
        assert len(cache) == 0
        assert await cache.get(("t", "p", "d"), reads) == 2

    asyncio.run(go())


def test_no_entries_or_no_ttl_keeps_nothing_and_bad_bounds_are_refused() -> None:
    async def go() -> None:
        for cache in (ContextCache(0, 30), ContextCache(8, 0)):
            reads = Reads()
            await cache.get(("t", "p", "d"), reads)
            assert await cache.get(("t", "p", "d"), reads) == 2 and len(cache) == 0

    asyncio.run(go())
    with pytest.raises(ValueError, match="max_entries"):
        ContextCache(-1, 30)
