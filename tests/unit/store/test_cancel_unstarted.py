"""``queue.cancel_key_job(unstarted_only=True)``: how a session's pause and stop end its
step job (decision 0037). A job that never started is cancelled; one that started (running,
or given back to the queue after an attempt, whose tools may have acted) is left to finish
its step and record it, and the caller hears that one is left (SQLite and PostgreSQL)."""

from __future__ import annotations

from datetime import timedelta

from hansa.domain.base import utcnow
from hansa.domain.job import JobKind
from hansa.store import direct, queue, tables
from hansa.store.db import DEFAULT_TENANT_ID as T
from hansa.store.db import Database

KEY = "session:s1"
MINE = {"sessionId": "s1"}


def _enqueue(db: Database, payload: dict[str, object]) -> int:
    return db.write_now(
        lambda conn: queue.enqueue(conn, T, JobKind.SESSION_STEP, payload, utcnow(), key=KEY)
    )


def _cancel(db: Database) -> bool:
    return db.write_now(
        lambda conn: queue.cancel_key_job(conn, KEY, MINE, utcnow(), unstarted_only=True)
    )


def _status(db: Database, job_id: int) -> tuple[str, str | None]:
    jobs = tables.jobs
    query = jobs.select().where(jobs.c.id == job_id)
    row = db.write_now(lambda conn: direct.first(conn, query, {}))
    assert row is not None
    return row["status"], row["last_error"]


def test_a_job_that_never_started_is_cancelled_and_none_is_left(db: Database) -> None:
    queued = _enqueue(db, {**MINE, "iteration": 1})
    other = _enqueue(db, {"sessionId": "s2", "iteration": 1})
    assert _cancel(db) is False
    assert _status(db, queued) == ("done", "cancelled")
    assert _status(db, other) == ("queued", None), "another session's job is not touched"


def test_a_running_job_is_left_to_finish_and_commit(db: Database) -> None:
    _enqueue(db, {**MINE, "iteration": 1})
    (claimed,) = db.write_now(
        lambda conn: queue.claim(conn, "w1", utcnow(), lease=timedelta(seconds=10), limit=1)
    )
    assert _cancel(db) is True
    assert _status(db, claimed.id) == ("running", None)
    db.write_now(lambda conn: queue.finish(conn, claimed, utcnow()))  # its lease still holds
    assert _status(db, claimed.id) == ("done", None)


def test_a_job_given_back_after_an_attempt_is_left_too(db: Database) -> None:
    _enqueue(db, {**MINE, "iteration": 1})
    (claimed,) = db.write_now(
        lambda conn: queue.claim(conn, "w1", utcnow(), lease=timedelta(seconds=10), limit=1)
    )
    given_back = db.write_now(
        lambda conn: queue.release(
            conn, claimed, utcnow(), error="boom", delay=timedelta(seconds=0)
        )
    )
    assert given_back
    assert _cancel(db) is True
    assert _status(db, claimed.id)[0] == "queued", "it runs again, to its step's record"
