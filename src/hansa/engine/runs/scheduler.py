"""The run scheduler: groups in order, tasks of a group concurrently under a cap.

A run is driven by one job at a time (its *run job*, keyed ``run:<id>``; see
``engine/execution.py``). Whatever changes a run from outside — approval, a
confirmation, a resume, a preemption — calls :func:`wake` in its transaction,
which queues the run job unless one is already waiting.

Inside the run job's transaction, :func:`next_tasks` decides what happens next on
the run's :class:`Book`: which open tasks of the current group start now, which
irreversible task waits for the user's confirmation, whether the next group opens,
or whether the run ends (a failed task fails the run once its siblings finish;
later groups are cancelled). Ending a run queues Hans's summary, keyed by the
conversation like a turn.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from hansa.domain import event, job, message, run, secrets
from hansa.engine.runs import summary
from hansa.engine.runs.change import RunChange
from hansa.engine.runtime.faults import crash_point
from hansa.store import queue, runs

_FAILED = (run.TaskStatus.FAILED, run.TaskStatus.AMBIGUOUS)


class Book:
    """A run's tasks as one transaction sees them; every move is written through."""

    def __init__(self, change: RunChange, tasks: list[run.Task]) -> None:
        self.change = change
        self.tasks = {t.id: t for t in tasks}

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
        """Open tasks waiting out a retry's backoff, with the time they may run again."""
        now = self.change.now
        return {
            t.id: t.scheduled_at
            for t in self.tasks.values()
            if t.status is run.TaskStatus.OPEN and t.scheduled_at and t.scheduled_at > now
        }

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
        return None
    work = job.payload(job.RunJob(run_id=change.run_id, conversation_id=conversation_id))
    worker = services.local_worker
    if worker is None or live or not worker.reserve_run_slot():
        queue.enqueue(conn, change.tenant_id, job.JobKind.RUN, work, now, key=key)
        change.batch.after_commit(services.wake_worker)
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


def next_tasks(book: Book, r: run.Run, *, busy: int, held: set[str]) -> list[run.Task]:
    """Move running run ``r`` forward; returns the open tasks to start now.

    ``busy`` tasks are running already; ``held`` tasks wait for a retry.
    """
    tasks = list(book.tasks.values())
    for group in sorted({t.step_group for t in tasks}):
        members = [t for t in tasks if t.step_group == group]
        if all(t.status in run.TASK_FINAL for t in members):
            if any(t.status in _FAILED for t in members):
                later = [t for t in tasks if t.step_group > group]
                _cancel(book, later, "an earlier step failed")
                finish_run(book.change, r, run.RunStatus.FAILED, list(book.tasks.values()))
                return []
            continue
        return _fill(book, group, members, busy=busy, held=held)
    # a preempted (cancelled) task does not fail its run; the rest carried on
    finish_run(book.change, r, run.RunStatus.COMPLETED, tasks)
    return []


def _fill(
    book: Book, group: str, members: list[run.Task], *, busy: int, held: set[str]
) -> list[run.Task]:
    services, batch = book.change.services, book.change.batch
    fresh = all(t.status is run.TaskStatus.OPEN and not t.attempts for t in members)
    if busy == 0 and not held and fresh:  # the group opens now: say who works on it
        names = sorted({services.agent(t.created_by).display_name for t in members})
        together = " and ".join(names) + (" are" if len(names) > 1 else " is")
        batch.thinking(
            f"Group {group}: {together} working" + (" in parallel" if len(members) > 1 else ""),
            agent_id=services.supervisor.id,
            phase=message.Phase.EXECUTION,
            group=group,
        )
    chosen: list[run.Task] = []
    for task in members:
        if task.status is not run.TaskStatus.OPEN or task.id in held:
            continue
        if not task.is_reversible_by_system and task.confirmed_hash != task.parameters_hash:
            book.move(task.id, run.TaskStatus.AWAITING_CONFIRMATION, announce=True)
            agent = services.agent(task.created_by)
            batch.status(
                f"{agent.display_name} needs your confirmation before: {task.summary} "
                "(this cannot be undone)",
                agent_id=agent.id,
            )
            continue
        if busy + len(chosen) < services.settings.task_concurrency:
            chosen.append(task)
    return chosen


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
    if queue.live_statuses(conn, r.conversation_id):
        work = job.payload(job.SummaryJob(run_id=r.id, tenant_id=r.tenant_id))
        queue.enqueue(
            conn, r.tenant_id, job.JobKind.RUN_SUMMARY, work, change.now, key=r.conversation_id
        )
        change.batch.after_commit(services.wake_worker)
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
