import time
from collections.abc import Callable
from datetime import datetime, timedelta

import pytest
import sqlalchemy as sa
from sqlalchemy import Connection

from hansa import errors
from hansa.domain.base import utcnow
from hansa.domain.job import Job, JobKind
from hansa.store import dbclock, direct, queue, tables
from hansa.store.db import DEFAULT_TENANT_ID as T
from hansa.store.db import Database

LEASE = timedelta(seconds=10)
SHORT = timedelta(milliseconds=200)
SKEW = timedelta(minutes=10)


def _enqueue(db: Database, key: str | None, n: int = 1) -> list[int]:
    return db.write_now(
        lambda conn: [
            queue.enqueue(conn, T, JobKind.TURN, {"i": i}, utcnow(), key=key) for i in range(n)
        ]
    )


def _claim(
    db: Database, owner: str, now: datetime, limit: int = 10, lease: timedelta = LEASE
) -> list[Job]:
    return db.write_now(lambda conn: queue.claim(conn, owner, now, lease=lease, limit=limit))


def _fails_with_stale_lease(db: Database, fn: Callable[[Connection], object]) -> None:
    with pytest.raises(errors.StaleLease):
        db.write_now(fn)


def test_one_job_per_key_at_a_time_oldest_first(db: Database) -> None:
    a1, a2 = _enqueue(db, "conv-a", 2)
    (b1,) = _enqueue(db, "conv-b")
    claimed = _claim(db, "w1", utcnow())
    assert [j.id for j in claimed] == [a1, b1]
    assert _claim(db, "w2", utcnow()) == []
    db.write_now(lambda conn: queue.finish(conn, claimed[0], utcnow()))
    again = _claim(db, "w2", utcnow())
    assert [j.id for j in again] == [a2]


def test_expired_lease_is_taken_over_with_a_new_epoch(db: Database) -> None:
    _enqueue(db, "conv-a")
    (first,) = _claim(db, "w1", utcnow(), 1, lease=SHORT)
    time.sleep(SHORT.total_seconds() * 2)
    later = utcnow()
    (second,) = _claim(db, "w2", later, 1)
    assert second.id == first.id
    assert second.epoch == first.epoch + 1
    assert second.attempts == 2
    # the zombie can neither write nor finish
    _fails_with_stale_lease(db, lambda conn: queue.guard(conn, first))
    _fails_with_stale_lease(db, lambda conn: queue.finish(conn, first, later))
    assert not db.write_now(lambda conn: queue.heartbeat(conn, first, later, LEASE))
    assert db.write_now(lambda conn: queue.taken_over(conn, first))
    assert db.write_now(lambda conn: queue.heartbeat(conn, second, later, LEASE))


def test_a_claim_without_takeovers_leaves_expired_leases_alone(db: Database) -> None:
    """Looking for expired leases reads every running job: a worker does it once per poll,
    and its other claims take queued jobs only (issue 29)."""
    (stale,) = _enqueue(db, "conv-a")
    (queued,) = _enqueue(db, "conv-b")
    (first,) = _claim(db, "w1", utcnow(), 1, lease=SHORT)
    assert first.id == stale
    time.sleep(SHORT.total_seconds() * 2)

    def claim(takeovers: bool) -> list[int]:
        return [
            j.id
            for j in db.write_now(
                lambda conn: queue.claim(
                    conn, "w2", utcnow(), lease=LEASE, limit=5, takeovers=takeovers
                )
            )
        ]

    assert claim(takeovers=False) == [queued]
    assert not db.write_now(lambda conn: queue.any_due(conn, utcnow(), takeovers=False))
    assert db.write_now(lambda conn: queue.any_due(conn, utcnow(), takeovers=True))
    assert claim(takeovers=True) == [stale]


def test_a_worker_with_a_skewed_clock_neither_steals_nor_loses_on_postgres(
    pg_db: Database,
) -> None:
    """Leases are the database's: a clock minutes off changes nothing (review M2). (SQLite
    serves one host: there is one clock.)"""
    db = pg_db
    _enqueue(db, None)
    (mine,) = _claim(db, "behind", utcnow() - SKEW, 1)
    assert _claim(db, "ahead", utcnow() + SKEW, 1) == [], "a live lease is not stolen"
    assert db.write_now(lambda conn: queue.heartbeat(conn, mine, utcnow() - SKEW, LEASE))
    until = db.write_now(
        lambda conn: conn.execute(
            sa.select(tables.jobs.c.lease_until - sa.func.now()).where(tables.jobs.c.id == mine.id)
        ).scalar_one()
    )
    assert timedelta(0) < until <= LEASE, "the lease runs from the database's now"
    (due,) = _enqueue(db, None)
    assert [j.id for j in _claim(db, "behind", utcnow() - SKEW, 1)] == [due], (
        "a job enqueued now is due now, whatever the clock of the one who claims it"
    )


def test_a_heartbeat_unless_busy_passes_a_row_a_step_holds_and_waits_for_nothing(
    pg_db: Database,
) -> None:
    """A step holds its job's row to its commit (``guard``); the heartbeat's first pass skips
    it instead of waiting, so it holds no other job's row meanwhile (issue 29)."""
    db = pg_db
    _enqueue(db, None)
    (mine,) = _claim(db, "w1", utcnow(), 1)
    engine = sa.create_engine(db.engine_url())
    try:
        with engine.connect() as step:
            step.execute(sa.text("SET lock_timeout = '5s'"))
            queue.guard(step, mine)  # the row is locked until this transaction ends
            started = time.monotonic()
            beat = db.write_now(
                lambda conn: queue.heartbeat(conn, mine, utcnow(), LEASE, unless_busy=True)
            )
            assert not beat and time.monotonic() - started < 1.0, "skipped, not waited for"
            assert not db.write_now(lambda conn: queue.taken_over(conn, mine))
            step.rollback()
    finally:
        engine.dispose()
    assert db.write_now(lambda conn: queue.heartbeat(conn, mine, utcnow(), LEASE, unless_busy=True))


def test_a_held_job_is_found_by_its_primary_key_on_a_fresh_schema(pg_db: Database) -> None:
    """Without statistics PostgreSQL served ``id = $1 AND status = 'running'`` from the
    partial index of running jobs (or ix_jobs_claim in a generic plan): every guard,
    heartbeat and finish read every running job (issue 29). Both plans use the key."""
    db = pg_db
    for i in range(300):
        _enqueue(db, f"k{i}")
    claimed = _claim(db, "w1", utcnow(), 300)
    params = {"p_id": claimed[150].id, "p_epoch": 1, "p_status": "done", "p_error": None}
    params["p_now"] = utcnow()
    held = (queue._GUARD, queue._HEARTBEAT, queue._HEARTBEAT_UNLESS_BUSY, queue._FINISH)

    def plans(conn: Connection) -> list[str]:
        found = []
        for statement in held:
            compiled = direct._compile(conn, statement, params)
            assert compiled is not None
            args = tuple(compiled.args({**params, **dbclock.lease(conn, utcnow(), LEASE)}))
            custom = conn.exec_driver_sql("EXPLAIN " + compiled.sql, args)
            numbered = compiled.sql
            for n in range(1, len(args) + 1):
                numbered = numbered.replace("%s", f"${n}", 1)
            conn.exec_driver_sql("SET LOCAL plan_cache_mode = force_generic_plan")
            conn.exec_driver_sql(f"PREPARE held AS {numbered}")
            generic = conn.exec_driver_sql("EXPLAIN EXECUTE held" + _literals(args))
            conn.exec_driver_sql("DEALLOCATE held")
            found.append("\n".join(str(r[0]) for r in [*custom, *generic]))
        return found

    for plan in db.write_now(plans):
        scans = [line for line in plan.splitlines() if " Scan" in line]
        assert scans and all("using pk_jobs" in line for line in scans), plan
    assert db.write_now(lambda conn: queue.heartbeat(conn, claimed[150], utcnow(), LEASE))
    db.write_now(lambda conn: queue.guard(conn, claimed[150]))
    db.write_now(lambda conn: queue.finish(conn, claimed[150], utcnow()))
    assert not db.write_now(lambda conn: queue.heartbeat(conn, claimed[150], utcnow(), LEASE))


def _literals(args: tuple[object, ...]) -> str:
    """``EXECUTE``'s arguments, as SQL literals."""
    quoted = ["NULL" if a is None else f"'{a}'" for a in args]
    return f"({', '.join(quoted)})"


def test_live_lease_is_not_taken_over(db: Database) -> None:
    _enqueue(db, None)
    now = utcnow()
    assert len(_claim(db, "w1", now, 1)) == 1
    assert _claim(db, "w2", now + timedelta(seconds=5), 1) == []


def test_claim_respects_the_limit(db: Database) -> None:
    _enqueue(db, None, 5)
    assert len(_claim(db, "w1", utcnow(), 3)) == 3
    assert len(_claim(db, "w1", utcnow(), 3)) == 2


def test_failed_job_records_its_error(db: Database) -> None:
    _enqueue(db, None)
    (claimed,) = _claim(db, "w1", utcnow(), 1)
    db.write_now(lambda conn: queue.finish(conn, claimed, utcnow(), error="model down"))
    assert not db.write_now(lambda conn: queue.taken_over(conn, claimed))
    jobs = tables.jobs
    stored = db.write_now(
        lambda conn: conn.execute(sa.select(jobs.c.status, jobs.c.last_error)).all()
    )
    assert [tuple(r) for r in stored] == [("failed", "model down")]


def test_run_jobs_and_other_jobs_are_claimed_in_lanes_of_their_own(db: Database) -> None:
    now = utcnow()
    run_ids = db.write_now(
        lambda conn: [
            queue.enqueue(conn, T, JobKind.RUN, {"runId": f"r{i}"}, now, key=f"run:r{i}")
            for i in range(3)
        ]
    )
    (turn_id,) = _enqueue(db, "conv-a")  # queued after the runs

    def claim(runs: bool, limit: int) -> list[Job]:
        return db.write_now(
            lambda conn: queue.claim(conn, "w1", utcnow(), lease=LEASE, limit=limit, runs=runs)
        )

    assert [j.id for j in claim(runs=False, limit=1)] == [turn_id], "older runs do not block it"
    assert [j.id for j in claim(runs=True, limit=2)] == run_ids[:2]
    assert [j.kind for j in claim(runs=True, limit=5)] == [JobKind.RUN]


def test_an_owner_named_after_a_long_host_name_claims(db: Database) -> None:
    """Review H5: cloud host names pass 64 characters; the claim must not fail on them."""
    owner = "ip-172-31-20-15.ap-southeast-2.compute.internal:" + "x" * 60 + ":1:7f3a"
    (job_id,) = _enqueue(db, None)
    (claimed,) = _claim(db, owner, utcnow(), 1)
    assert (claimed.id, claimed.lease_owner) == (job_id, owner)


def test_a_released_job_is_due_again_after_its_delay_with_its_attempts_counted(
    db: Database,
) -> None:
    _enqueue(db, "conv-a")
    (first,) = _claim(db, "w1", utcnow(), 1)
    assert db.write_now(
        lambda conn: queue.release(conn, first, utcnow(), error="boom", delay=SHORT)
    )
    assert _claim(db, "w2", utcnow(), 1) == [], "not before its delay"
    _fails_with_stale_lease(db, lambda conn: queue.guard(conn, first))
    time.sleep(SHORT.total_seconds() * 2)
    (again,) = _claim(db, "w2", utcnow(), 1)
    assert (again.id, again.attempts, again.epoch) == (first.id, 2, first.epoch + 1)
    assert not db.write_now(
        lambda conn: queue.release(conn, first, utcnow(), error="late", delay=SHORT)
    ), "a stale holder cannot release it"
