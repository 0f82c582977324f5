"""Runs in the store: the conditional lock a run job relies on to keep its tasks between steps."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest

from factories import make_run, make_task
from hansa import errors
from hansa.domain import run
from hansa.domain.base import utcnow
from hansa.domain.transitions import TransitionError
from hansa.store import runs
from hansa.store.db import DEFAULT_TENANT_ID, Database


def _new_run(db: Database, conversation_id: str) -> tuple[run.Run, run.Task]:
    now = utcnow()
    r = make_run(conversation_id=conversation_id, created_at=now, updated_at=now)
    task = make_task(r, created_at=now, updated_at=now)
    db.write_now(lambda conn: runs.create(conn, r, [task]))
    return r, task


def test_the_conditional_lock_holds_only_while_nobody_else_locked_the_run(
    db: Database, new_conversation: Callable[[], str]
) -> None:
    r, _ = _new_run(db, new_conversation())
    t1 = utcnow()
    first = db.write_now(lambda conn: runs.locked(conn, r.id, t1))
    assert first.updated_at == t1
    t2 = t1 + timedelta(milliseconds=1)
    again = db.write_now(lambda conn: runs.locked_if_untouched(conn, r.id, t1, t2))
    assert again is not None and again.updated_at == t2, "untouched since t1: locked"
    # someone else (a preemption, a pause) takes the lock
    db.write_now(lambda conn: runs.lock(conn, r.id, t2 + timedelta(milliseconds=1)))
    stale = db.write_now(
        lambda conn: runs.locked_if_untouched(conn, r.id, t2, t2 + timedelta(milliseconds=2))
    )
    assert stale is None, "touched since t2: the caller must read the tasks again"


def test_a_task_move_without_a_result_keeps_the_stored_result(
    db: Database, new_conversation: Callable[[], str]
) -> None:
    r, task = _new_run(db, new_conversation())
    now = utcnow()

    def moves(conn) -> None:  # type: ignore[no-untyped-def]
        runs.move_task(
            conn,
            DEFAULT_TENANT_ID,
            task.id,
            run.TaskStatus.IN_PROGRESS,
            now,
            result={"draft": 1},
            attempt=True,
        )
        runs.move_task(conn, DEFAULT_TENANT_ID, task.id, run.TaskStatus.OPEN, now, error="retry")

    db.write_now(moves)
    stored = db.write_now(lambda conn: runs.get_task(conn, DEFAULT_TENANT_ID, task.id))
    assert stored.status is run.TaskStatus.OPEN
    assert stored.result == {"draft": 1} and stored.error == "retry" and stored.attempts == 1


def test_a_move_the_transition_table_forbids_is_refused(
    db: Database, new_conversation: Callable[[], str]
) -> None:
    _, task = _new_run(db, new_conversation())
    with pytest.raises(TransitionError) as refused:
        db.write_now(
            lambda conn: runs.move_task(
                conn, DEFAULT_TENANT_ID, task.id, run.TaskStatus.COMPLETED, utcnow()
            )
        )
    assert isinstance(refused.value, errors.Conflict), "the API answers it with 409, not 500"
    assert refused.value.status == 409 and refused.value.code == "invalid_transition"
