"""The run scheduler on a real SQLite file: groups in order, the cap, retries, failure, consent.

Each test stores a run whose tasks are already where the story needs them, lets the
scheduler take one decision in one transaction, and checks what it chose to start,
where the tasks and the run now stand in the store, and what it announced.
The scheduler's entry points are called from four small helpers only (``_book``,
``_next``, ``_move``, ``_held``): their signatures are the part most likely to change.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Connection

from factories import make_conversation, make_run, make_task
from hansa.domain import event, run
from hansa.domain.base import utcnow
from hansa.engine.runs import scheduler
from hansa.engine.runs.change import RunChange
from hansa.engine.runtime.recorder import Batch
from hansa.engine.runtime.services import Services
from hansa.engine.runtime.setup import build_services
from hansa.models.function import FunctionModel
from hansa.settings import Settings
from hansa.store import conversations, runs
from hansa.tasks.base import Flow

pytestmark = pytest.mark.anyio

CAP = 2
"""``task_concurrency`` of these tests."""

S = run.TaskStatus


@pytest.fixture
async def services(tmp_path: Path) -> AsyncIterator[Services]:
    settings = Settings(
        database_url=f"sqlite:///{tmp_path}/h.db", task_concurrency=CAP, startup_retry_seconds=0
    )
    built = await build_services(settings, model=FunctionModel(lambda m, s, p: "unused"))
    yield built
    await built.db.dispose()


@dataclass
class Decision:
    """What one call of the scheduler decided, and the state it left in the store."""

    started: list[str]
    """Ids of the tasks it chose to start now, in order."""
    tasks: dict[str, run.Task]
    """Every task of the run as stored afterwards."""
    run_status: run.RunStatus
    """The run's status as stored afterwards."""
    announced: list[event.Payload]
    """The events it added to the transaction's batch."""


async def _stored(services: Services, *tasks: run.Task, r: run.Run) -> None:
    convo = make_conversation(id=r.conversation_id)

    def store(conn: Connection) -> None:
        conversations.create(conn, convo)
        runs.create(conn, r, list(tasks))

    await services.db.write(store)


# The scheduler's entry points, called here and nowhere else in this module.


def _book(services: Services, conn: Connection, r: run.Run) -> tuple[scheduler.Book, Batch]:
    """Run ``r``'s book in ``conn``'s transaction, and the batch its moves announce in."""
    change = RunChange.of(services, conn, r.tenant_id, r.id, Batch(r.conversation_id, None))
    return scheduler.Book(change, runs.tasks_of(conn, r.id)), change.batch


def _next(book: scheduler.Book, r: run.Run, busy: int) -> list[run.Task]:
    return scheduler.next_tasks(book, r, busy=busy)


def _move(book: scheduler.Book, task_id: str, target: run.TaskStatus, **kw: Any) -> run.Task:
    return book.move(task_id, target, **kw)


def _held(book: scheduler.Book) -> dict[str, datetime]:
    return book.held()


async def _decide(services: Services, r: run.Run, *, busy: int = 0) -> Decision:
    """One decision of the scheduler on stored run ``r``, in one transaction (what is held
    for a retry, a ``wait`` or a fork's timeout, it reads from the book)."""

    def decide(conn: Connection) -> Decision:
        current = runs.get(conn, r.tenant_id, r.id)
        book, batch = _book(services, conn, current)
        chosen = _next(book, current, busy)
        return Decision(
            started=[t.id for t in chosen],
            tasks={t.id: t for t in runs.tasks_of(conn, r.id)},
            run_status=runs.get(conn, r.tenant_id, r.id).status,
            announced=[new.payload for new, _ in batch.items],
        )

    return await services.db.write(decide)


def _statuses(decision: Decision, *tasks: run.Task) -> list[run.TaskStatus]:
    return [decision.tasks[t.id].status for t in tasks]


def _kinds(decision: Decision) -> list[str]:
    return [p.type for p in decision.announced]


async def test_only_the_first_unfinished_group_starts(services: Services) -> None:
    r = make_run()
    a1, a2 = make_task(r, sequence_order=0), make_task(r, sequence_order=1)
    b1 = make_task(r, step_group="B")
    await _stored(services, a1, a2, b1, r=r)

    first = await _decide(services, r)

    assert first.started == [a1.id, a2.id]
    assert _statuses(first, a1, a2, b1) == [S.OPEN] * 3, "the caller moves what it starts"
    assert first.run_status is run.RunStatus.RUNNING
    (opening,) = [p for p in first.announced if isinstance(p, event.ThinkingData)]
    assert opening.group == "A" and opening.summary.startswith("Group A: ")


async def test_the_next_group_starts_once_every_task_of_the_one_before_is_final(
    services: Services,
) -> None:
    r = make_run()
    done = make_task(r, status=S.COMPLETED, attempts=1)
    running = make_task(r, status=S.IN_PROGRESS, attempts=1, sequence_order=1)
    later = make_task(r, step_group="B")
    await _stored(services, done, running, later, r=r)

    while_a_runs = await _decide(services, r, busy=1)
    await services.db.write(
        lambda conn: _move(_book(services, conn, r)[0], running.id, S.COMPLETED, result={"ok": 1})
    )
    after_a = await _decide(services, r)

    assert while_a_runs.started == [], "group B waits for the last task of group A"
    assert after_a.started == [later.id]
    assert after_a.run_status is run.RunStatus.RUNNING


async def test_no_more_tasks_start_than_the_concurrency_cap(services: Services) -> None:
    r = make_run()
    group = [make_task(r, sequence_order=i) for i in range(CAP + 1)]
    await _stored(services, *group, r=r)

    idle = await _decide(services, r)
    one_busy = await _decide(services, r, busy=1)
    full = await _decide(services, r, busy=CAP)

    assert idle.started == [t.id for t in group[:CAP]], "the first in order, up to the cap"
    assert one_busy.started == [group[0].id]
    assert full.started == []
    assert full.run_status is run.RunStatus.RUNNING


async def test_a_task_held_for_its_retry_does_not_start_until_its_time(
    services: Services,
) -> None:
    r = make_run()
    now = utcnow()
    retrying = make_task(r, attempts=1, scheduled_at=now + timedelta(minutes=5), error="busy")
    due = make_task(r, attempts=1, scheduled_at=now - timedelta(seconds=1), sequence_order=1)
    fresh = make_task(r, sequence_order=2)
    await _stored(services, retrying, due, fresh, r=r)

    held = await services.db.read(lambda conn: _held(_book(services, conn, r)[0]))
    decision = await _decide(services, r)

    assert list(held) == [retrying.id], "only a backoff still running holds a task"
    assert held[retrying.id] == retrying.scheduled_at
    assert decision.started == [due.id, fresh.id]
    assert decision.tasks[retrying.id].status is S.OPEN
    assert not [p for p in decision.announced if isinstance(p, event.ThinkingData)], (
        "a group under way is not announced again"
    )


async def test_a_failed_task_waits_for_its_siblings_before_failing_the_run(
    services: Services,
) -> None:
    r = make_run()
    failed = make_task(r, status=S.FAILED, attempts=1, error="boom")
    sibling = make_task(r, status=S.IN_PROGRESS, attempts=1, sequence_order=1)
    later = make_task(r, step_group="B")
    await _stored(services, failed, sibling, later, r=r)

    decision = await _decide(services, r, busy=1)

    assert decision.started == []
    assert decision.run_status is run.RunStatus.RUNNING
    assert _statuses(decision, sibling, later) == [S.IN_PROGRESS, S.OPEN]
    assert "run_status" not in _kinds(decision)


@pytest.mark.parametrize("outcome", [S.FAILED, S.AMBIGUOUS])
async def test_a_failed_group_fails_the_run_and_cancels_every_later_group(
    services: Services, outcome: run.TaskStatus
) -> None:
    r = make_run()
    bad = make_task(r, status=outcome, attempts=1, error="boom")
    good = make_task(r, status=S.COMPLETED, attempts=1, sequence_order=1)
    b1, c1 = make_task(r, step_group="B"), make_task(r, step_group="C", summary="Publish")
    await _stored(services, bad, good, b1, c1, r=r)

    decision = await _decide(services, r)

    assert decision.started == []
    assert decision.run_status is run.RunStatus.FAILED
    assert _statuses(decision, bad, good, b1, c1) == [
        outcome,
        S.COMPLETED,
        S.CANCELLED,
        S.CANCELLED,
    ]
    assert decision.tasks[b1.id].error == "an earlier step failed"
    (ended,) = [p for p in decision.announced if isinstance(p, event.RunStatusData)]
    assert (ended.status, ended.previous) == ("failed", "running")
    (done,) = [p for p in decision.announced if isinstance(p, event.DoneData)]
    assert done.status == "failed", "Hans answers in the same transaction"


async def test_a_run_whose_groups_all_ended_well_completes(services: Services) -> None:
    r = make_run()
    a1 = make_task(r, status=S.COMPLETED, attempts=1)
    preempted = make_task(r, status=S.CANCELLED, sequence_order=1)
    b1 = make_task(r, step_group="B", status=S.COMPLETED, attempts=1)
    await _stored(services, a1, preempted, b1, r=r)

    decision = await _decide(services, r)

    assert decision.started == []
    assert decision.run_status is run.RunStatus.COMPLETED, "a cancelled task fails nothing"
    (done,) = [p for p in decision.announced if isinstance(p, event.DoneData)]
    assert done.status == "completed"


async def test_an_irreversible_task_waits_for_consent_to_its_exact_parameters(
    services: Services,
) -> None:
    r = make_run()
    params = {"pageId": "p1"}
    unconfirmed = make_task(
        r,
        task_type="delete_page",
        parameters=params,
        is_reversible_by_system=False,
        created_by="webEngineer",
        summary="Delete the Old offers page",
    )
    stale = make_task(
        r,
        task_type="delete_page",
        parameters={"pageId": "p2"},
        is_reversible_by_system=False,
        confirmed_hash=run.parameters_hash(params),
        sequence_order=1,
    )
    confirmed = make_task(
        r,
        task_type="delete_page",
        parameters=params,
        is_reversible_by_system=False,
        confirmed_hash=run.parameters_hash(params),
        sequence_order=2,
    )
    reversible = make_task(r, sequence_order=3)
    await _stored(services, unconfirmed, stale, confirmed, reversible, r=r)

    decision = await _decide(services, r)

    assert decision.started == [confirmed.id, reversible.id], "waiting takes no slot"
    assert _statuses(decision, unconfirmed, stale) == [S.AWAITING_CONFIRMATION] * 2
    assert decision.tasks[reversible.id].status is S.OPEN
    joining, *chips = [p.text for p in decision.announced if isinstance(p, event.StatusData)]
    assert joining == "Web Engineer Nico is joining this run", "said before what he asks"
    assert (
        "Web Engineer Nico needs your confirmation before: Delete the Old offers page" in (chips[0])
    )
    assert len(chips) == 2 and all("cannot be undone" in c for c in chips)


async def test_the_book_writes_every_move_through_and_shares_results_by_ref(
    services: Services,
) -> None:
    r = make_run()
    task = make_task(r, metadata={"ref": "copy"})
    await _stored(services, task, r=r)

    def moves(conn: Connection) -> scheduler.Book:
        book, _ = _book(services, conn, r)
        _move(book, task.id, S.IN_PROGRESS, attempt=True)
        _move(book, task.id, S.COMPLETED, result={"html": "<p>x</p>"})
        return book

    book = await services.db.write(moves)
    stored = await services.db.read(lambda conn: runs.get_task(conn, r.tenant_id, task.id))

    kept = book.tasks[task.id]
    assert (stored.status, stored.attempts, stored.result) == (S.COMPLETED, 1, {"html": "<p>x</p>"})
    assert (kept.status, kept.attempts, kept.result) == (stored.status, 1, stored.result)
    assert book.outputs() == {task.id: {"html": "<p>x</p>"}, "copy": {"html": "<p>x</p>"}}


# A graph's tasks name their dependencies; a condition's branches are skipped or taken.


def _node(
    r: run.Run, node: str, order: int, after: tuple[run.Task, ...] = (), **kw: Any
) -> run.Task:
    return make_task(
        r,
        step_group="G",
        sequence_order=order,
        node_id=node,
        depends_on=[t.id for t in after],
        **kw,
    )


async def test_the_book_knows_once_which_flows_a_run_has(services: Services) -> None:
    plan = make_run()
    graph = make_run()
    step = make_task(plan)
    fork = _node(graph, "race", 0, task_type="parallel", parameters={"strategy": "any"})
    each = _node(graph, "each", 1, (fork,), task_type="loop")
    await _stored(services, step, r=plan)
    await _stored(services, fork, each, r=graph)

    plan_flows = await services.db.read(lambda conn: _book(services, conn, plan)[0].flows)
    graph_flows = await services.db.read(lambda conn: _book(services, conn, graph)[0].flows)

    assert plan_flows == frozenset(), "a plan's run never enters the fork and loop passes"
    assert graph_flows == {Flow.FORK, Flow.LOOP}


async def test_a_graph_task_starts_when_its_own_dependencies_are_done(services: Services) -> None:
    r = make_run()
    root = _node(r, "root", 0, status=S.COMPLETED, attempts=1)
    slow = _node(r, "slow", 1, (root,), status=S.IN_PROGRESS, attempts=1)
    fast = _node(r, "fast", 2, (root,), status=S.COMPLETED, attempts=1)
    after_fast = _node(r, "afterFast", 3, (fast,))
    join = _node(r, "join", 4, (slow, after_fast))
    await _stored(services, root, slow, fast, after_fast, join, r=r)

    decision = await _decide(services, r, busy=1)

    assert decision.started == [after_fast.id], "no group waits: only its own dependencies"
    assert not [p for p in decision.announced if isinstance(p, event.ThinkingData)], (
        "a graph's tasks are not announced as step groups"
    )


async def test_the_branch_a_condition_did_not_take_is_skipped_and_a_join_still_runs(
    services: Services,
) -> None:
    r = make_run()
    check = _node(r, "check", 0, status=S.COMPLETED, attempts=1, result={"branch": "true"})
    yes = _node(r, "yes", 1, (check,), metadata={"when": {check.id: "true"}})
    no = _node(r, "no", 2, (check,), metadata={"when": {check.id: "false"}})
    behind_no = _node(r, "behindNo", 3, (no,))
    join = _node(r, "join", 4, (yes, no))
    await _stored(services, check, yes, no, behind_no, join, r=r)

    decision = await _decide(services, r)

    assert decision.started == [yes.id]
    assert _statuses(decision, no, behind_no, join) == [S.SKIPPED, S.SKIPPED, S.OPEN]
    skipped = [p for p in decision.announced if isinstance(p, event.TaskStatusData)]
    assert [p.status for p in skipped] == [S.SKIPPED, S.SKIPPED]


async def test_a_failed_branch_fails_the_run_once_the_other_branch_has_finished(
    services: Services,
) -> None:
    r = make_run()
    root = _node(r, "root", 0, status=S.COMPLETED, attempts=1)
    broken = _node(r, "broken", 1, (root,), status=S.FAILED, attempts=1, error="boom")
    behind = _node(r, "behind", 2, (broken,))
    other = _node(r, "other", 3, (root,))
    await _stored(services, root, broken, behind, other, r=r)

    first = await _decide(services, r)
    await services.db.write(
        lambda conn: _move(_book(services, conn, r)[0], other.id, S.IN_PROGRESS, attempt=True)
    )
    await services.db.write(
        lambda conn: _move(_book(services, conn, r)[0], other.id, S.COMPLETED, result={})
    )
    last = await _decide(services, r)

    assert first.started == [other.id], "an independent branch goes on past a failure"
    assert first.run_status is run.RunStatus.RUNNING
    assert _statuses(last, behind) == [S.CANCELLED]
    assert last.run_status is run.RunStatus.FAILED


async def test_parallel_any_stops_the_losers_once_a_child_completed(services: Services) -> None:
    r = make_run()
    race = _node(
        r,
        "race",
        0,
        status=S.COMPLETED,
        attempts=1,
        task_type="parallel",
        parameters={"strategy": "any"},
    )
    won = _node(r, "won", 1, (race,), status=S.COMPLETED, attempts=1, result={"n": 1})
    running = _node(r, "running", 2, (race,), status=S.IN_PROGRESS, attempts=1)
    waiting = _node(r, "waiting", 3, (race,))
    behind = _node(r, "behind", 4, (waiting,))
    join = _node(r, "join", 5, (won, running, waiting))
    await _stored(services, race, won, running, waiting, behind, join, r=r)

    decision = await _decide(services, r, busy=1)

    assert _statuses(decision, running, waiting, behind) == [S.CANCELLED, S.SKIPPED, S.SKIPPED]
    assert decision.tasks[running.id].error == "another branch of race finished first"
    assert decision.started == [join.id], "the join runs on the winner"


async def test_a_held_wait_that_loses_a_race_holds_the_run_no_longer(services: Services) -> None:
    r = make_run()
    race = _node(
        r,
        "race",
        0,
        status=S.COMPLETED,
        attempts=1,
        task_type="parallel",
        parameters={"strategy": "any"},
    )
    fast = _node(r, "fast", 1, (race,), status=S.COMPLETED, attempts=1, task_type="wait.durable")
    slow = _node(
        r,
        "slow",
        2,
        (race,),
        attempts=1,
        task_type="wait.durable",
        scheduled_at=utcnow() + timedelta(minutes=1),
    )
    await _stored(services, race, fast, slow, r=r)

    decision = await _decide(services, r)

    assert _statuses(decision, slow) == [S.SKIPPED]
    assert decision.run_status is run.RunStatus.COMPLETED, "nothing is held by a lost wait"


async def test_a_parallel_timeout_is_held_until_due_then_fails_what_still_runs(
    services: Services,
) -> None:
    r = make_run()
    forked = utcnow() - timedelta(seconds=10)
    fan = _node(
        r,
        "fan",
        0,
        status=S.COMPLETED,
        attempts=1,
        task_type="parallel",
        parameters={"strategy": "all", "timeout": 60_000},
        updated_at=forked,
    )
    slow = _node(r, "slow", 1, (fan,), status=S.IN_PROGRESS, attempts=1)
    await _stored(services, fan, slow, r=r)

    held = await services.db.read(lambda conn: _held(_book(services, conn, r)[0]))
    await services.db.write(
        lambda conn: runs.update_task(
            conn, fan.id, forked, parameters={"strategy": "all", "timeout": 5_000}
        )
    )
    expired = await _decide(services, r, busy=1)

    assert held == {fan.id: forked + timedelta(seconds=60)}, "the run job wakes at the deadline"
    assert _statuses(expired, slow) == [S.FAILED]
    assert expired.tasks[slow.id].error == "fan timed out after 5000 ms"
