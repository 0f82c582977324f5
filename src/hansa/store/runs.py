"""Runs and their tasks."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection

from hansa import errors
from hansa.domain import run
from hansa.domain.transitions import check_transition, sources
from hansa.store import direct, tables
from hansa.store.types import Json, JsonOrNull

_runs = tables.assistant_runs
_tasks = tables.assistant_tasks
_B = sa.bindparam

# Statements are built once and run through store.direct (decision 0007).
_INSERT_RUN = _runs.insert()
_INSERT_TASK = _tasks.insert()
_GET_RUN = sa.select(_runs).where(
    _runs.c.id == _B("p_id"), direct.only_checks(_runs.c.tenant_id) == _B("p_tenant")
)
_LOCK_RUN = (
    sa.update(_runs)
    .where(_runs.c.id == _B("p_id"))
    .values(updated_at=_B("p_now"))
    .returning(*_runs.c)
)


def _from(
    column: sa.Column[Any], allowed: frozenset[run.RunStatus] | frozenset[run.TaskStatus]
) -> sa.ColumnElement[bool]:
    return direct.one_of(column, (s.value for s in allowed))


_MOVE_RUN = {
    target: sa.update(_runs)
    .where(_runs.c.id == _B("p_id"), _from(_runs.c.status, sources(run.RUN_TRANSITIONS, target)))
    .values(status=target.value, updated_at=_B("p_now"))
    for target in run.RunStatus
    if sources(run.RUN_TRANSITIONS, target)
}
_LOCK_RUN_IF_UNTOUCHED = (
    sa.update(_runs)
    .where(
        _runs.c.id == _B("p_id"), _runs.c.updated_at == _B("p_seen", type_=_runs.c.updated_at.type)
    )
    .values(updated_at=_B("p_now"))
    .returning(*_runs.c)
)
_SET_RUN_METADATA = (
    sa.update(_runs).where(_runs.c.id == _B("p_id")).values(metadata=_B("p_metadata", type_=Json))
)
_SET_RUN_PLAN = (
    sa.update(_runs)
    .where(_runs.c.id == _B("p_id"))
    .values(title=_B("p_title"), project_id=_B("p_project"), metadata=_B("p_metadata", type_=Json))
)
_GET_TASK = sa.select(_tasks).where(
    _tasks.c.id == _B("p_id"), direct.only_checks(_tasks.c.tenant_id) == _B("p_tenant")
)
_RUN_TASKS = (
    sa.select(_tasks)
    .where(_tasks.c.run_id == _B("p_run"))
    .order_by(_tasks.c.step_group, _tasks.c.sequence_order, _tasks.c.id)
)
_MOVE_TASK = {
    target: sa.update(_tasks)
    .where(_tasks.c.id == _B("p_id"), _from(_tasks.c.status, sources(run.TASK_TRANSITIONS, target)))
    .values(
        status=target.value,
        updated_at=_B("p_now"),
        attempts=_tasks.c.attempts + _B("p_attempt"),
        result=sa.func.coalesce(_B("p_result", type_=JsonOrNull), _tasks.c.result),
        error=sa.func.coalesce(_B("p_error", type_=sa.Text), _tasks.c.error),
        scheduled_at=_B("p_not_before", type_=_tasks.c.scheduled_at.type),
    )
    for target in run.TaskStatus
    if sources(run.TASK_TRANSITIONS, target)
}


def create(conn: Connection, r: run.Run, tasks: list[run.Task]) -> None:
    """Insert a run with its tasks."""
    direct.execute(conn, _INSERT_RUN, {**r.model_dump(), "status": r.status.value})
    direct.execute_many(conn, _INSERT_TASK, [_task_row(r.tenant_id, t) for t in tasks])


def add_tasks(conn: Connection, tenant_id: str, tasks: list[run.Task]) -> None:
    """Insert tasks into an existing run (the caller holds the run's lock)."""
    direct.execute_many(conn, _INSERT_TASK, [_task_row(tenant_id, t) for t in tasks])


def _task_row(tenant_id: str, t: run.Task) -> dict[str, Any]:
    row = t.model_dump()
    row["tenant_id"] = tenant_id
    row["status"] = t.status.value
    return row


def get(conn: Connection, tenant_id: str, run_id: str) -> run.Run:
    """The run, or NotFound."""
    row = direct.first(conn, _GET_RUN, {"p_id": run_id, "p_tenant": tenant_id})
    if row is None:
        raise errors.NotFound(f"run {run_id} not found")
    return _run(row)


def lock(conn: Connection, run_id: str, now: datetime) -> run.RunStatus:
    """Take the run's row lock for this transaction (serializes schedulers); its status."""
    return locked(conn, run_id, now).status


def locked(conn: Connection, run_id: str, now: datetime) -> run.Run:
    """``lock``, returning the whole run."""
    row = direct.first(conn, _LOCK_RUN, {"p_id": run_id, "p_now": now})
    if row is None:
        raise errors.NotFound(f"run {run_id} not found")
    return _run(row)


def locked_if_untouched(
    conn: Connection, run_id: str, seen: datetime, now: datetime
) -> run.Run | None:
    """``locked``, but only while the run's ``updated_at`` is still ``seen``; None otherwise.

    Every change to a run or its tasks takes the run's lock, which moves ``updated_at``:
    a writer that saw ``seen`` last knows that nobody else changed anything since.
    """
    params = {"p_id": run_id, "p_seen": seen, "p_now": now}
    row = direct.first(conn, _LOCK_RUN_IF_UNTOUCHED, params)
    return None if row is None else _run(row)


def move(
    conn: Connection, tenant_id: str, run_id: str, target: run.RunStatus, now: datetime
) -> None:
    """Move the run along its transition table; TransitionError when not allowed."""
    statement = _MOVE_RUN.get(target)
    if statement is None or direct.execute(conn, statement, {"p_id": run_id, "p_now": now}) != 1:
        check_transition(run.RUN_TRANSITIONS, get(conn, tenant_id, run_id).status, target)


def set_metadata(conn: Connection, run_id: str, metadata: dict[str, Any]) -> None:
    """Replace the run's metadata (the caller holds the run's lock)."""
    direct.execute(conn, _SET_RUN_METADATA, {"p_id": run_id, "p_metadata": metadata})


def set_plan(conn: Connection, r: run.Run) -> None:
    """Give a run in planning its plan: title, project and metadata (the caller holds its
    lock)."""
    params = {"p_id": r.id, "p_title": r.title, "p_project": r.project_id, "p_metadata": r.metadata}
    direct.execute(conn, _SET_RUN_PLAN, params)


def tasks_of(conn: Connection, run_id: str) -> list[run.Task]:
    """A run's tasks by group and order."""
    return [_task(r) for r in direct.rows(conn, _RUN_TASKS, {"p_run": run_id})]


def get_task(conn: Connection, tenant_id: str, task_id: str) -> run.Task:
    """The task, or NotFound."""
    row = direct.first(conn, _GET_TASK, {"p_id": task_id, "p_tenant": tenant_id})
    if row is None:
        raise errors.NotFound(f"task {task_id} not found")
    return _task(row)


def move_task(
    conn: Connection,
    tenant_id: str,
    task_id: str,
    target: run.TaskStatus,
    now: datetime,
    *,
    result: dict[str, Any] | None = None,
    error: str | None = None,
    attempt: bool = False,
    not_before: datetime | None = None,
) -> None:
    """Move a task along its transition table, optionally with its result or error.

    ``not_before`` (a retry's backoff) is kept in ``scheduled_at``; any other move clears it.
    """
    params = {
        "p_id": task_id,
        "p_now": now,
        "p_attempt": 1 if attempt else 0,
        "p_result": result,
        "p_error": error,
        "p_not_before": not_before,
    }
    statement = _MOVE_TASK.get(target)
    if statement is None or direct.execute(conn, statement, params) != 1:
        current = get_task(conn, tenant_id, task_id)
        check_transition(run.TASK_TRANSITIONS, current.status, target)


def update_task(conn: Connection, task_id: str, now: datetime, **values: Any) -> None:
    """Change fields of a task (parameters, confirmation, owner…)."""
    # the columns vary with the call: built here, run by Connection.execute
    conn.execute(sa.update(_tasks).where(_tasks.c.id == task_id).values(**values, updated_at=now))


def _run(row: direct.Row) -> run.Run:
    return run.Run.model_validate(row)


def _task(row: direct.Row) -> run.Task:
    return run.Task.model_validate(row)


_OPEN_OF_CONVERSATION = (
    sa.select(_runs)
    .where(
        _runs.c.tenant_id == _B("p_tenant"),
        _runs.c.conversation_id == _B("p_conversation"),
        *[_runs.c.status != s.value for s in run.RUN_FINAL],
    )
    .order_by(_runs.c.created_at)
)


def open_of_conversation(conn: Connection, tenant_id: str, conversation_id: str) -> list[run.Run]:
    """The conversation's runs that are not final, oldest first (a handful at most)."""
    params = {"p_tenant": tenant_id, "p_conversation": conversation_id}
    return [_run(r) for r in direct.rows(conn, _OPEN_OF_CONVERSATION, params)]
