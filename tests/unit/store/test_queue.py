from datetime import timedelta

import pytest

from hansa import errors
from hansa.domain.base import utcnow
from hansa.domain.job import JobKind
from hansa.store import queue
from hansa.store.db import DEFAULT_TENANT_ID as T
from hansa.store.db import Database

pytestmark = pytest.mark.anyio

LEASE = timedelta(seconds=10)


async def _enqueue(db: Database, key: str | None, n: int = 1) -> list[int]:
    async with db.transaction() as conn:
        return [
            await queue.enqueue(conn, T, JobKind.TURN, {"i": i}, utcnow(), key=key)
            for i in range(n)
        ]


async def test_one_job_per_key_at_a_time_oldest_first(db: Database) -> None:
    a1, a2 = await _enqueue(db, "conv-a", 2)
    (b1,) = await _enqueue(db, "conv-b")
    claimed = await queue.claim(db, "w1", utcnow(), lease=LEASE, limit=10)
    assert [j.id for j in claimed] == [a1, b1]
    assert await queue.claim(db, "w2", utcnow(), lease=LEASE, limit=10) == []
    async with db.transaction() as conn:
        await queue.finish(conn, claimed[0], utcnow())
    again = await queue.claim(db, "w2", utcnow(), lease=LEASE, limit=10)
    assert [j.id for j in again] == [a2]


async def test_expired_lease_is_taken_over_with_a_new_epoch(db: Database) -> None:
    await _enqueue(db, "conv-a")
    now = utcnow()
    (first,) = await queue.claim(db, "w1", now, lease=LEASE, limit=1)
    later = now + LEASE + timedelta(seconds=1)
    (second,) = await queue.claim(db, "w2", later, lease=LEASE, limit=1)
    assert second.id == first.id
    assert second.epoch == first.epoch + 1
    assert second.attempts == 2
    # the zombie can neither write nor finish
    with pytest.raises(errors.StaleLease):
        async with db.transaction() as conn:
            await queue.guard(conn, first)
    with pytest.raises(errors.StaleLease):
        async with db.transaction() as conn:
            await queue.finish(conn, first, later)
    assert not await queue.heartbeat(db, first, later, LEASE)
    assert await queue.heartbeat(db, second, later, LEASE)


async def test_live_lease_is_not_taken_over(db: Database) -> None:
    await _enqueue(db, None)
    now = utcnow()
    assert len(await queue.claim(db, "w1", now, lease=LEASE, limit=1)) == 1
    assert await queue.claim(db, "w2", now + timedelta(seconds=5), lease=LEASE, limit=1) == []


async def test_claim_respects_the_limit(db: Database) -> None:
    await _enqueue(db, None, 5)
    assert len(await queue.claim(db, "w1", utcnow(), lease=LEASE, limit=3)) == 3
    assert len(await queue.claim(db, "w1", utcnow(), lease=LEASE, limit=3)) == 2


async def test_failed_job_records_its_error(db: Database) -> None:
    await _enqueue(db, None)
    (claimed,) = await queue.claim(db, "w1", utcnow(), lease=LEASE, limit=1)
    async with db.transaction() as conn:
        await queue.finish(conn, claimed, utcnow(), error="model down")
        assert await queue.counts(conn) == {"failed": 1}
