"""The run scheduler: a task starts when the tasks it depends on are done, under a cap.

One scheduler for plans and graphs: a graph's task names the tasks it depends on; a plan's
steps depend on the whole step group before their own (groups in order, the tasks of a
group concurrently).

A run is driven by one job at a time (its *run job*, keyed ``run:<id>``; see
``runs/run_job.py``). Whatever changes a run from outside — approval, a
confirmation, a resume, a preemption — calls :func:`wake` in its transaction,
which queues the run job unless one is already waiting.

Inside the run job's transaction, :func:`next_tasks` decides what happens next on
the run's :class:`Book`: which ready tasks start now, which irreversible task waits
for the user's confirmation, or whether the run ends (a failed task fails the run once
the tasks that can still run have finished; those behind it are cancelled). Ending a
run queues Hans's summary, keyed by the conversation like a turn.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from hansa.domain import event, job, message, run, secrets
from hansa.engine.runs import forks, loops, story, summary
from hansa.engine.runs.change import RunChange
from hansa.engine.runtime.faults import crash_point
from hansa.store import queue, runs
from hansa.tasks.base import Flow, TaskType

_FAILED = (run.TaskStatus.FAILED, run.TaskStatus.AMBIGUOUS)
_SATISFIED = run.TASK_FINAL - set(_FAILED)
"""What the tasks after a task may start on: it ended, and not in failure (a preempted,
cancelled task and a skipped one count as done)."""
_MOVING = (run.TaskStatus.IN_PROGRESS, run.TaskStatus.AWAITING_CONFIRMATION)


class Book:
    """A run's tasks as one transaction sees them; every move is written through."""

    def __init__(self, change: RunChange, tasks: list[run.Task]) -> None:
        self.change = change
        self.tasks = {t.id: t for t in tasks}
        self.flows = frozenset(k.flow for k in map(self.kind, tasks) if k and k.flow)
        """The flows the run's tasks have (a graph's fork, loop), worked out once: a run
        without one (a plan's) never enters the fork and loop passes. A loop's copies are
        of the types already there, so they add none."""
        self._after: tuple[int, dict[str, list[str]], dict[str, list[str]]] | None = None

    def kind(self, task: run.Task) -> TaskType[Any] | None:
        """The task's type as registered; None for a type no longer registered (its task
        fails as it starts)."""
        registry = self.change.services.registry
        return registry.get(task.task_type) if task.task_type in registry else None

    def after(self) -> dict[str, list[str]]:
        """The tasks each task waits for (``dependencies``), worked out once per set of
        tasks: only a loop's materialised body adds tasks (and dependencies)."""
        return self._graph()[1]

    def forks_now(self) -> list[forks.Fork]:
        """The run's completed forks (``Flow.FORK``) with their children, as they stand."""
        if Flow.FORK not in self.flows:
            return []
        children = self._graph()[2]
        if not children:
            return []
        return forks.forks(self.tasks, children)

    def _graph(self) -> tuple[int, dict[str, list[str]], dict[str, list[str]]]:
        if self._after is None or self._after[0] != len(self.tasks):
            after = dependencies(list(self.tasks.values()))
            children: dict[str, list[str]] = {}  # of the forks only
            for t in self.tasks.values():
                for d in after[t.id]:
                    if (k := self.kind(self.tasks[d])) is not None and k.flow is Flow.FORK:
                        children.setdefault(d, []).append(t.id)
            self._after = (len(self.tasks), after, children)
        return self._after

    def move(
        self,
        task_id: str,
        target: run.TaskStatus,
        *,
        result: dict[str, Any] | None = None,
        error: str | None = None,
        attempt: bool = False,
        not_before: datetime | None = None,
        announce: bool = False,
    ) -> run.Task:
        """Move a task along its transition table in the store and here; with ``announce``,
        say so in the change's batch (a ``task_status`` event with the result or retry time)."""
        change = self.change
        now = change.now
        runs.move_task(
            change.conn,
            change.tenant_id,
            task_id,
            target,
            now,
            result=result,
            error=error,
            attempt=attempt,
            not_before=not_before,
        )
        before = self.tasks[task_id]
        if announce:
            shown = None if result is None else secrets.mask(result)  # the log keeps no secret
            moved = event.TaskStatusData(
                status=target, previous=before.status, result=shown, retry_at=not_before
            )
            change.batch.event(moved, agent_id=before.created_by, task_id=task_id)
        changes: dict[str, Any] = {"status": target, "updated_at": now, "scheduled_at": not_before}
        if attempt:
            changes["attempts"] = before.attempts + 1
        if result is not None:
            changes["result"] = result
        if error is not None:
            changes["error"] = error
        self.tasks[task_id] = after = before.model_copy(update=changes)
        return after

    def held(self) -> dict[str, datetime]:
        """Open tasks waiting out a retry's backoff or a ``wait``, with the time they may
        run again; and a ``parallel`` fork whose timeout is still to come, with its time."""
        now = self.change.now
        waits = {
            t.id: t.scheduled_at
            for t in self.tasks.values()
            if t.status is run.TaskStatus.OPEN and t.scheduled_at and t.scheduled_at > now
        }
        timeouts = forks.deadlines(self.forks_now()) if Flow.FORK in self.flows else {}
        return {**waits, **{k: v for k, v in timeouts.items() if v > now}}

    def outputs(self) -> dict[str, dict[str, Any]]:
        """Results of completed tasks, by task id and by the plan's step ``ref``."""
        found: dict[str, dict[str, Any]] = {}
        for t in self.tasks.values():
            if t.status is run.TaskStatus.COMPLETED and t.result is not None:
                found[t.id] = t.result
                if t.metadata.get("ref"):
                    found[str(t.metadata["ref"])] = t.result
        return found


def wake(change: RunChange, conversation_id: str) -> job.Job | None:
    """Have a worker drive the run: queue its run job unless one is already waiting.

    A running run job may be about to end without seeing this transaction's change,
    so a new one is queued beside it; with no job at all, this process's worker (if
    any, and while it has a free run slot) gets it already claimed: returned, for the
    caller to hand over once the transaction commits (the slot is given back if it
    does not).
    """
    key = f"run:{change.run_id}"
    conn, now, services = change.conn, change.now, change.services
    live = queue.live_statuses(conn, key)
    if job.JobStatus.QUEUED.value in live:
        queue.hurry(conn, key, now)  # a run job queued for a wait's end: due now
        return None
    work = job.payload(job.RunJob(run_id=change.run_id, conversation_id=conversation_id))
    worker = services.local_worker
    if worker is None or live or not worker.reserve_run_slot():
        queue.enqueue(conn, change.tenant_id, job.JobKind.RUN, work, now, key=key)
        return None
    change.batch.after_commit(lambda: None, or_else=lambda: worker.release_run_slots(1))
    lease_until = now + timedelta(seconds=services.settings.lease_seconds)
    return queue.enqueue_claimed(
        conn,
        change.tenant_id,
        job.JobKind.RUN,
        work,
        now,
        owner=worker.owner,
        lease_until=lease_until,
        key=key,
    )


def next_tasks(book: Book, r: run.Run, *, busy: int) -> list[run.Task]:
    """Move running run ``r`` forward; returns the open tasks to start now.

    A task is ready when every task it depends on is final and none of them failed
    (``dependencies``: a plan's step groups compile to "every task of the group before").
    Ready tasks start in order under the concurrency cap (``busy`` tasks run already;
    ``held`` ones, ``Book.held``, wait for a retry, a ``wait`` or a fork's timeout); an
    irreversible one waits for the user's confirmation instead. When nothing is ready,
    running, held or waiting for confirmation, the run ends: the tasks left behind a
    failure are cancelled and the run fails, or it completes (a preempted, cancelled task
    does not fail its run; the rest carried on).

    What is held is read after a fork's losers were stopped: a held ``wait`` that lost a
    race holds nothing any more, and the run ends without it.
    """
    if Flow.LOOP in book.flows:
        loops.materialise(book, book.after(), book.change.services.settings.max_tasks_per_run)
    after = book.after()  # with a materialised body's copies
    forking = Flow.FORK in book.flows
    if forking:
        for task, target, why in forks.losers(book.forks_now(), book.change.now):
            book.move(task.id, target, error=why, announce=True)
    _skip_branches_not_taken(book, after)
    tasks = list(book.tasks.values())
    absorbed = forks.settled(book.forks_now()) if forking else set()  # a settle's failures
    ready = [
        t
        for t in tasks
        if t.status is run.TaskStatus.OPEN
        and all(
            book.tasks[d].status in _SATISFIED
            or (d in absorbed and book.tasks[d].status in run.TASK_FINAL)
            for d in after[t.id]
        )
    ]
    moving = [t for t in tasks if t.status in _MOVING]
    held = set(book.held())
    if ready or moving or busy or held:
        return _fill(book, ready, busy=busy, held=held)
    failed = any(t.status in _FAILED and t.id not in absorbed for t in tasks)
    left = [t for t in tasks if t.status is run.TaskStatus.OPEN]
    _cancel(book, left, "an earlier step failed")
    final = run.RunStatus.FAILED if failed else run.RunStatus.COMPLETED
    finish_run(book.change, r, final, list(book.tasks.values()))
    return []


def _skip_branches_not_taken(book: Book, after: dict[str, list[str]]) -> None:
    """Skip the open tasks on a branch a graph did not take: behind a ``condition`` that
    chose the other branch (the task's ``metadata.when`` names the branch each of its
    dependencies must have chosen), or behind skipped tasks only. Tasks are stored in the
    graph's order, so one pass reaches every task behind a skipped one."""
    for task in list(book.tasks.values()):
        if task.status is not run.TaskStatus.OPEN or not after[task.id]:
            continue
        when: dict[str, str] = task.metadata.get("when") or {}
        deps = [book.tasks[d] for d in after[task.id]]
        not_taken = any(
            d.status is run.TaskStatus.COMPLETED
            and d.id in when
            and str((d.result or {}).get("branch")) != when[d.id]
            for d in deps
        )
        gone = (run.TaskStatus.SKIPPED, run.TaskStatus.CANCELLED)  # a branch that lost a race
        behind_gone = task.node_id is not None and all(d.status in gone for d in deps)
        if not_taken or behind_gone or all(d.status is run.TaskStatus.SKIPPED for d in deps):
            book.move(task.id, run.TaskStatus.SKIPPED, announce=True)


def dependencies(tasks: list[run.Task]) -> dict[str, list[str]]:
    """The tasks each task waits for: its own ``depends_on``, or (a plan's step) every task
    of the closest step group before its own."""
    groups = sorted({t.step_group for t in tasks if t.depends_on is None})
    members: dict[str, list[str]] = {}
    for t in tasks:
        if t.depends_on is None:
            members.setdefault(t.step_group, []).append(t.id)
    before = {g: members[groups[i - 1]] if i else [] for i, g in enumerate(groups)}
    return {t.id: t.depends_on if t.depends_on is not None else before[t.step_group] for t in tasks}


def _fill(book: Book, ready: list[run.Task], *, busy: int, held: set[str]) -> list[run.Task]:
    services, batch = book.change.services, book.change.batch
    _say_who_works(book, ready, busy=busy, held=held)
    joining = story.Joining(book.change, book.tasks)
    chosen: list[run.Task] = []
    for task in ready:
        if task.id in held:
            continue
        if not task.is_reversible_by_system and task.confirmed_hash != task.parameters_hash:
            book.move(task.id, run.TaskStatus.AWAITING_CONFIRMATION, announce=True)
            name = services.agents.display_name(
                book.change.conn, book.change.tenant_id, task.created_by
            )
            batch.status(
                f"{name} needs your confirmation before: {task.summary} (this cannot be undone)",
                agent_id=task.created_by,
            )
            continue
        if busy + len(chosen) < services.settings.task_concurrency:
            chosen.append(task)
    joining.say(book.tasks, chosen)
    return chosen


def _say_who_works(book: Book, ready: list[run.Task], *, busy: int, held: set[str]) -> None:
    """A plan's step group that opens now (nothing of it started yet): say who works on it."""
    if busy or held:
        return
    for group in sorted({t.step_group for t in ready if t.node_id is None}):
        members = [t for t in book.tasks.values() if t.step_group == group and t.node_id is None]
        if not all(t.status is run.TaskStatus.OPEN and not t.attempts for t in members):
            continue
        change = book.change
        names = sorted(
            {
                change.services.agents.display_name(change.conn, change.tenant_id, t.created_by)
                for t in members
            }
        )
        together = " and ".join(names) + (" are" if len(names) > 1 else " is")
        book.change.batch.thinking(
            f"Group {group}: {together} working" + (" in parallel" if len(members) > 1 else ""),
            agent_id=book.change.services.supervisor.id,
            phase=message.Phase.EXECUTION,
            group=group,
        )


def _cancel(book: Book, tasks: list[run.Task], reason: str) -> None:
    for task in tasks:
        if task.status in run.TASK_FINAL or task.status is run.TaskStatus.IN_PROGRESS:
            continue
        book.move(task.id, run.TaskStatus.CANCELLED, error=reason, announce=True)


def finish_run(change: RunChange, r: run.Run, final: run.RunStatus, tasks: list[run.Task]) -> None:
    """End run ``r`` as ``final``; Hans answers in the same transaction, or after the turn
    or summary the conversation is busy with (a job keyed by the conversation, like a turn).
    """
    services, conn = change.services, change.conn
    runs.move(conn, r.tenant_id, r.id, final, change.now)
    change.batch.event(
        event.RunStatusData(status=final, previous=r.status), agent_id=services.supervisor.id
    )
    story.finished(change, final, tasks)
    if queue.live_statuses(conn, r.conversation_id):
        work = job.payload(job.SummaryJob(run_id=r.id, tenant_id=r.tenant_id))
        queue.enqueue(
            conn, r.tenant_id, job.JobKind.RUN_SUMMARY, work, change.now, key=r.conversation_id
        )
        return
    crash_point(services.settings, "summary.before_write")
    ended = r.model_copy(update={"status": final})
    summary.answer(services, conn, ended, tasks, change.batch)


def cancel_run(change: RunChange) -> bool:
    """Cancel a run: waiting tasks are cancelled; running ones finish and are then ignored.

    Returns False when the run was already final (a repeated cancel is a no-op).
    """
    conn, run_id = change.conn, change.run_id
    status = runs.lock(conn, run_id, change.now)
    if status in run.RUN_FINAL:
        return False
    book = Book(change, runs.tasks_of(conn, run_id))
    _cancel(book, list(book.tasks.values()), "the run was cancelled")
    current = runs.get(conn, change.tenant_id, run_id)
    if status in (run.RunStatus.RUNNING, run.RunStatus.PAUSED):
        finish_run(change, current, run.RunStatus.CANCELLED, list(book.tasks.values()))
    else:
        runs.move(conn, change.tenant_id, run_id, run.RunStatus.CANCELLED, change.now)
        change.batch.event(
            event.RunStatusData(status=run.RunStatus.CANCELLED, previous=status),
            agent_id=change.services.supervisor.id,
        )
    return True
