"""Read models over runs in the store: a tenant's runs page by page, a run's log filtered by
level and graph node, on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest
import sqlalchemy as sa

from factories import NOW, make_run, make_task
from hansa import errors
from hansa.domain import event, run
from hansa.domain.run import RunStatus, TaskStatus
from hansa.domain.run_log import Level
from hansa.store import events, run_logs, runs
from hansa.store.db import DEFAULT_TENANT_ID as T
from hansa.store.db import Database


def _graph_run(db: Database, cid: str) -> tuple[run.Run, run.Task, run.Task]:
    """A run of two graph nodes, ``fetch`` (fails) and ``notify`` (completes), and its log."""
    r = make_run(conversation_id=cid)
    fetch = make_task(r, node_id="fetch", task_type="webhook.call")
    notify = make_task(r, node_id="notify", sequence_order=1)

    def status(task: run.Task, to: TaskStatus, was: TaskStatus) -> events.NewEvent:
        data = event.TaskStatusData(status=to, previous=was)
        return events.NewEvent(data, run_id=r.id, task_id=task.id, agent_id="chief")

    def thinking(task: run.Task) -> events.NewEvent:
        data = event.ThinkingData(
            message_id="m", summary=f"about {task.node_id}", phase="execution"
        )
        return events.NewEvent(data, run_id=r.id, task_id=task.id)

    log = [
        events.NewEvent(event.RunStatusData(status=RunStatus.RUNNING), run_id=r.id),
        status(fetch, TaskStatus.IN_PROGRESS, TaskStatus.OPEN),
        thinking(fetch),
        status(fetch, TaskStatus.FAILED, TaskStatus.IN_PROGRESS),
        status(notify, TaskStatus.IN_PROGRESS, TaskStatus.OPEN),
        thinking(notify),
        status(notify, TaskStatus.COMPLETED, TaskStatus.IN_PROGRESS),
        events.NewEvent(event.RunStatusData(status=RunStatus.FAILED), run_id=r.id),
        events.NewEvent(event.TextDeltaData(message_id="m", delta="not of the run")),
    ]

    def write(conn: sa.Connection) -> None:
        runs.create(conn, r, [fetch, notify])
        events.append(conn, T, cid, log, NOW)

    db.write_now(write)
    return r, fetch, notify


def _log(db: Database, run_id: str, **kwargs: object) -> list[tuple[int, str, str | None]]:
    found = db.write_now(lambda conn: run_logs.log_of_run(conn, T, run_id, **kwargs))  # type: ignore[arg-type]
    return [(e.seq, e.level.value, e.node_id) for e in found]


def test_the_log_is_the_runs_events_in_order_with_their_levels_and_nodes(
    db: Database, new_conversation: Callable[[], str]
) -> None:
    r, _, _ = _graph_run(db, new_conversation())
    assert _log(db, r.id) == [
        (1, "info", None),
        (2, "info", "fetch"),
        (3, "debug", "fetch"),
        (4, "error", "fetch"),
        (5, "info", "notify"),
        (6, "debug", "notify"),
        (7, "info", "notify"),
        (8, "error", None),
    ]
    entries = db.write_now(lambda conn: run_logs.log_of_run(conn, T, r.id))
    assert entries[3].message == "task fetch: in_progress → failed"
    assert entries[5].message == "about notify" and entries[7].message == "run failed"


def test_a_minimum_level_a_node_and_a_cursor_narrow_the_log(
    db: Database, new_conversation: Callable[[], str]
) -> None:
    r, _, _ = _graph_run(db, new_conversation())
    assert [s for s, *_ in _log(db, r.id, minimum=Level.ERROR)] == [4, 8]
    assert [s for s, *_ in _log(db, r.id, minimum=Level.INFO)] == [1, 2, 4, 5, 7, 8]
    assert [s for s, *_ in _log(db, r.id, node_id="notify")] == [5, 6, 7]
    assert [s for s, *_ in _log(db, r.id, node_id="fetch", minimum=Level.ERROR)] == [4]
    assert _log(db, r.id, node_id="nowhere") == [], "an unknown node: no entries, no error"
    # pages: a page shorter than the limit is the end
    assert [s for s, *_ in _log(db, r.id, limit=3)] == [1, 2, 3]
    assert [s for s, *_ in _log(db, r.id, after=3, limit=3)] == [4, 5, 6]
    assert [s for s, *_ in _log(db, r.id, after=6, limit=3)] == [7, 8]
    # a filtered page is filled from as many reads as it takes
    assert [s for s, *_ in _log(db, r.id, minimum=Level.ERROR, limit=1)] == [4]
    assert [s for s, *_ in _log(db, r.id, minimum=Level.ERROR, after=4, limit=1)] == [8]


def test_another_tenants_run_has_no_log(db: Database, new_conversation: Callable[[], str]) -> None:
    r, _, _ = _graph_run(db, new_conversation())
    with pytest.raises(errors.NotFound):
        db.write_now(lambda conn: run_logs.log_of_run(conn, "another-tenant", r.id))


def test_runs_are_listed_newest_first_by_conversation_and_status_page_by_page(
    db: Database, new_conversation: Callable[[], str]
) -> None:
    first, second = new_conversation(), new_conversation()
    made = [
        make_run(
            conversation_id=cid,
            status=status,
            created_at=NOW + timedelta(seconds=i // 2),  # pairs share a creation time
        )
        for i, (cid, status) in enumerate(
            [
                (first, RunStatus.COMPLETED),
                (second, RunStatus.COMPLETED),
                (first, RunStatus.FAILED),
                (first, RunStatus.COMPLETED),
                (second, RunStatus.RUNNING),
            ]
        )
    ]
    for r in made:
        db.write_now(lambda conn, r=r: runs.create(conn, r, []))  # type: ignore[misc]
    newest = sorted(made, key=lambda r: (r.created_at, r.id), reverse=True)

    def ids(**kwargs: object) -> list[str]:
        found = db.write_now(lambda conn: run_logs.list_runs(conn, T, **kwargs))  # type: ignore[arg-type]
        return [r.id for r in found]

    assert ids() == [r.id for r in newest]
    assert ids(conversation_id=first) == [r.id for r in newest if r.conversation_id == first]
    assert ids(status=RunStatus.COMPLETED) == [
        r.id for r in newest if r.status is RunStatus.COMPLETED
    ]
    assert ids(conversation_id=second, status=RunStatus.RUNNING) == [made[4].id]
    pages, before = [], None
    while True:
        page = ids(limit=2, before=before)
        pages.append(page)
        if len(page) < 2:
            break
        before = page[-1]
    assert pages == [[r.id for r in newest[i : i + 2]] for i in (0, 2, 4)]
    assert ids(conversation_id=first, before=newest[0].id) == [
        r.id for r in newest[1:] if r.conversation_id == first
    ]
    with pytest.raises(errors.InvalidInput):
        ids(before="no-such-run")
    assert db.write_now(lambda conn: run_logs.list_runs(conn, "another-tenant")) == []
