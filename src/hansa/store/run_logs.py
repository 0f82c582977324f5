"""Read models over runs: a tenant's runs page by page, and a run's log from the event log.

There is no log table: a run's log is its events (``events.run_id``), read through the
``ix_events_run (run_id, seq)`` index, levelled and worded by ``domain/run_log.py``.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection

from hansa import errors
from hansa.domain import event, run, run_log
from hansa.store import direct, runs, tables
from hansa.store.db import growing

_runs = tables.assistant_runs
_events = tables.events
_tasks = tables.assistant_tasks
_B = sa.bindparam

RUNS_PAGE = 50
"""Runs a page holds unless asked for fewer or more (at most ``RUNS_PAGE_MAX``)."""
RUNS_PAGE_MAX = 100
LOG_PAGE = 200
"""Log entries a page holds unless asked for fewer or more (at most ``LOG_PAGE_MAX``)."""
LOG_PAGE_MAX = 1000


def _runs_statement(by_conversation: bool, by_status: bool, paged: bool) -> sa.Select[Any]:
    where: list[sa.ColumnElement[bool]] = [_runs.c.tenant_id == _B("p_tenant")]
    if by_conversation:
        where.append(_runs.c.conversation_id == _B("p_conversation"))
    if by_status:
        where.append(_runs.c.status == _B("p_status"))
    if paged:  # strictly after the cursor run in (created_at, id) descending order
        at = _B("p_at", type_=_runs.c.created_at.type)
        where.append(
            sa.or_(
                _runs.c.created_at < at,
                sa.and_(_runs.c.created_at == at, _runs.c.id < _B("p_before")),
            )
        )
    return (
        sa.select(_runs)
        .where(*where)
        .order_by(_runs.c.created_at.desc(), _runs.c.id.desc())
        .limit(_B("p_limit"))
    )


# Statements are built once and run through store.direct (decision 0007): one per
# combination of filters, so that each keeps a plain, indexable WHERE clause.
_RUNS = {
    (c, s, p): _runs_statement(c, s, p)
    for c in (False, True)
    for s in (False, True)
    for p in (False, True)
}


def _log_statement(minimum: run_log.Level, by_node: bool) -> sa.Select[Any]:
    where: list[sa.ColumnElement[bool]] = [
        _events.c.run_id == _B("p_run"),
        _events.c.tenant_id == _B("p_tenant"),
        _events.c.seq > _B("p_after"),
    ]
    types = run_log.TYPES_AT_LEAST[minimum]
    if types is not None:
        where.append(direct.one_of(_events.c.type, types))
    source: sa.FromClause = _events
    if by_node:
        source = _events.join(_tasks, _tasks.c.id == _events.c.task_id)
        where += [_tasks.c.run_id == _B("p_run"), _tasks.c.node_id == _B("p_node")]
    return (
        sa.select(*_events.c)
        .select_from(source)
        .where(*where)
        .order_by(_events.c.seq)
        .limit(_B("p_limit"))
    )


_LOG = {(level, n): _log_statement(level, n) for level in run_log.Level for n in (False, True)}


@growing
def list_runs(
    conn: Connection,
    tenant_id: str,
    *,
    conversation_id: str | None = None,
    status: run.RunStatus | None = None,
    before: str | None = None,
    limit: int = RUNS_PAGE,
) -> list[run.Run]:
    """The tenant's runs, newest first (by creation, then id), at most ``limit``.

    ``before`` is a run id, the last of the previous page: the page holds the runs created
    before it. InvalidInput when the tenant has no such run.
    """
    params: dict[str, Any] = {"p_tenant": tenant_id, "p_limit": limit}
    if conversation_id is not None:
        params["p_conversation"] = conversation_id
    if status is not None:
        params["p_status"] = status.value
    if before is not None:
        try:
            cursor = runs.get(conn, tenant_id, before)
        except errors.NotFound:
            raise errors.InvalidInput(
                f"before: no run {before}", details={"field": "before"}
            ) from None
        params["p_at"], params["p_before"] = cursor.created_at, cursor.id
    statement = _RUNS[(conversation_id is not None, status is not None, before is not None)]
    return [run.Run.model_validate(row) for row in direct.rows(conn, statement, params)]


@growing
def log_of_run(
    conn: Connection,
    tenant_id: str,
    run_id: str,
    *,
    minimum: run_log.Level = run_log.Level.DEBUG,
    node_id: str | None = None,
    after: int = 0,
    limit: int = LOG_PAGE,
) -> list[run_log.LogEntry]:
    """The run's log: its events with ``seq > after`` at ``minimum`` or above (of the tasks
    of graph node ``node_id`` only, when given), in order, at most ``limit``.

    NotFound when the tenant has no such run; an unknown node has no entries. A page shorter
    than ``limit`` is the end of the log as it stands.
    """
    runs.get(conn, tenant_id, run_id)
    tasks = {t.id: t for t in runs.tasks_of(conn, run_id)}
    if node_id is not None and all(t.node_id != node_id for t in tasks.values()):
        return []
    statement = _LOG[(minimum, node_id is not None)]
    params: dict[str, Any] = {"p_run": run_id, "p_tenant": tenant_id, "p_limit": limit}
    if node_id is not None:
        params["p_node"] = node_id
    found: list[run_log.LogEntry] = []
    while len(found) < limit:
        # the type filter is the query's; the status of a run_status or task_status event
        # is in its data, checked here: a page may take more than one read
        rows = direct.rows(conn, statement, {**params, "p_after": after})
        for row in rows:
            e = _event(row)
            if run_log.at_least(e.payload, minimum):
                task = tasks.get(e.task_id) if e.task_id else None
                node = task.node_id if task else None
                label = (node or task.task_type) if task else None
                found.append(run_log.entry(e, node, label))
        if len(rows) < limit:
            break
        after = rows[-1]["seq"]
    return found[:limit]


def _event(row: direct.Row) -> event.Event:
    # the payload is stored as its tag (``type``) and the rest (``data``), as in store.events
    payload = event.payload_from_stored(row["type"], row["data"])
    return event.Event.model_validate({**row, "payload": payload})
