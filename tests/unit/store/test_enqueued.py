"""A write that queued a job calls ``Database.on_enqueued`` once it has committed, and only
then: the worker of this process is woken by the store, never by hand (SQLite, where
writes share a group's transaction, and PostgreSQL)."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from sqlalchemy import Connection

from hansa.domain.base import utcnow
from hansa.domain.job import JobKind
from hansa.store import queue
from hansa.store.db import DEFAULT_TENANT_ID as T
from hansa.store.db import Database


def _enqueue(conn: Connection) -> int:
    return queue.enqueue(conn, T, JobKind.TURN, {}, utcnow(), key="conv-a")


def _fail(conn: Connection) -> None:
    _enqueue(conn)
    raise ValueError("changed its mind")


def _woken(db: Database, *writes: object) -> tuple[int, list[object]]:
    """How often ``on_enqueued`` was called while ``writes`` ran in one pass of the loop."""
    calls: list[None] = []
    db.on_enqueued = lambda: calls.append(None)

    async def scenario() -> list[object]:
        return await asyncio.gather(
            *(db.write(fn) for fn in writes),  # type: ignore[arg-type]
            return_exceptions=True,
        )

    results = asyncio.run(scenario())
    return len(calls), results


def test_a_write_that_queued_a_job_wakes_after_its_commit(db: Database) -> None:
    count, (job_id,) = _woken(db, _enqueue)
    assert count == 1 and isinstance(job_id, int)


def test_writes_that_queue_nothing_wake_nobody(db: Database) -> None:
    count, _ = _woken(db, lambda conn: None, lambda conn: 1)
    assert count == 0


def test_a_write_rolled_back_wakes_nobody_and_marks_no_other_write(db: Database) -> None:
    # one group on SQLite: the failed write's mark must not leak to the plain one after it
    count, results = _woken(db, _fail, lambda conn: None)
    assert count == 0
    assert isinstance(results[0], ValueError)


def test_hurrying_and_cancelling_a_keyed_job_wake_too(db: Database) -> None:
    later = utcnow() + timedelta(hours=1)
    db.write_now(lambda conn: queue.enqueue(conn, T, JobKind.TURN, {}, utcnow(), run_at=later))
    db.write_now(
        lambda conn: queue.enqueue(conn, T, JobKind.TURN, {"n": 1}, utcnow(), key="k", run_at=later)
    )
    count, _ = _woken(db, lambda conn: queue.hurry(conn, "k", utcnow()))
    assert count == 1
    count, _ = _woken(db, lambda conn: queue.cancel_key_job(conn, "k", {"n": 1}, utcnow()))
    assert count == 1


def test_without_a_worker_a_write_queues_all_the_same(db: Database) -> None:
    assert db.on_enqueued is None
    assert asyncio.run(db.write(_enqueue)) > 0
