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

from sqlalchemy import Connection

from hansa.domain import event, job, run
from hansa.engine.runs import summary
from hansa.engine.runtime.faults import crash_point
from hansa.engine.runtime.recorder import Batch
from hansa.engine.runtime.services import Services
from hansa.store import queue, runs

_FAILED = (run.TaskStatus.FAILED, run.TaskStatus.AMBIGUOUS)


class Book:
    """A run's tasks as one transaction sees them; every move is written through."""

    def __init__(self, conn: Connection, tenant_id: str, tasks: list[run.Task]) -> None:
        self.conn = conn
        self.tenant_id = tenant_id
        self.tasks = {t.id: t for t in tasks}

    def move(
        self,
        task_id: str,
        target: run.TaskStatus,
        now: datetime,
        *,
        result: dict[str, Any] | None = None,
        error: str | None = None,
        attempt: bool = False,
        not_before: datetime | None = None,
        batch: Batch | None = None,
    ) -> run.Task:
        """Move a task along its transition table in the store and here; with ``batch``,
        announce it there (a ``task_status`` event with the result or retry time, if any)."""
        runs.move_task(self.conn, self.tenant_id, task_id, target, now, result=result,
                       error=error, attempt=attempt, not_before=not_before)  # fmt: skip
        before = self.tasks[task_id]
        if batch is not None:
            batch.event(
                event.TaskStatusData(status=target.value, previous=before.status.value,
                                     result=result, retry_at=not_before),
                agent_id=before.created_by, task_id=task_id,
            )  # fmt: skip
        changes: dict[str, Any] = {"status": target, "updated_at": now, "scheduled_at": not_before}
        if attempt:
            changes["attempts"] = before.attempts + 1
        if result is not None:
            changes["result"] = result
        if error is not None:
            changes["error"] = error
        self.tasks[task_id] = after = before.model_copy(update=changes)
        return after

    def held(self, now: datetime) -> dict[str, datetime]:
        """Open tasks waiting out a retry's backoff, with the time they may run again."""
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


def wake(
    services: Services,
    conn: Connection,
    tenant_id: str,
    run_id: str,
    conversation_id: str,
    batch: Batch,
) -> None:
    """Have a worker drive the run: queue its run job unless one is already waiting.

    A running run job may be about to end without seeing this transaction's change,
    so a new one is queued beside it; with no job at all, this process's worker (if
    any, and while it has a free run slot) gets it already claimed.
    """
    key = f"run:{run_id}"
    live = queue.live_statuses(conn, key)
    if job.JobStatus.QUEUED.value in live:
        return
    payload = {"runId": run_id, "conversationId": conversation_id}
    now = services.clock()
    owner = services.worker_owner
    if owner is None or live or not services.reserve_run_slot():
        queue.enqueue(conn, tenant_id, job.JobKind.RUN, payload, now, key=key)
        return
    lease_until = now + timedelta(seconds=services.settings.lease_seconds)
    batch.adopted.append(
        queue.enqueue_claimed(
            conn,
            tenant_id,
            job.JobKind.RUN,
            payload,
            now,
            owner=owner,
            lease_until=lease_until,
            key=key,
        )  # fmt: skip
    )


def next_tasks(
    services: Services,
    book: Book,
    r: run.Run,
    batch: Batch,
    *,
    busy: int,
    held: set[str],
) -> list[run.Task]:
    """Move running run ``r`` forward; returns the open tasks to start now.

    ``busy`` tasks are running already; ``held`` tasks wait for a retry.
    """
    now = services.clock()
    tasks = list(book.tasks.values())
    for group in sorted({t.step_group for t in tasks}):
        members = [t for t in tasks if t.step_group == group]
        if all(t.status in run.TASK_FINAL for t in members):
            if any(t.status in _FAILED for t in members):
                later = [t for t in tasks if t.step_group > group]
                _cancel(book, later, now, batch, "an earlier step failed")
                finish_run(
                    services, book.conn, r, run.RunStatus.FAILED, list(book.tasks.values()), batch
                )
                return []
            continue
        return _fill(services, book, group, members, now, batch, busy=busy, held=held)
    # a preempted (cancelled) task does not fail its run; the rest carried on
    finish_run(services, book.conn, r, run.RunStatus.COMPLETED, tasks, batch)
    return []


def _fill(
    services: Services,
    book: Book,
    group: str,
    members: list[run.Task],
    now: datetime,
    batch: Batch,
    *,
    busy: int,
    held: set[str],
) -> list[run.Task]:
    fresh = all(t.status is run.TaskStatus.OPEN and not t.attempts for t in members)
    if busy == 0 and not held and fresh:  # the group opens now: say who works on it
        names = sorted({services.agent(t.created_by).display_name for t in members})
        together = " and ".join(names) + (" are" if len(names) > 1 else " is")
        batch.thinking(
            f"Group {group}: {together} working" + (" in parallel" if len(members) > 1 else ""),
            agent_id=services.roster[0].id, phase="execution", group=group,
        )  # fmt: skip
    chosen: list[run.Task] = []
    for task in members:
        if task.status is not run.TaskStatus.OPEN or task.id in held:
            continue
        if not task.is_reversible_by_system and task.confirmed_hash != task.parameters_hash:
            book.move(task.id, run.TaskStatus.AWAITING_CONFIRMATION, now, batch=batch)
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


def _cancel(book: Book, tasks: list[run.Task], now: datetime, batch: Batch, reason: str) -> None:
    for task in tasks:
        if task.status in run.TASK_FINAL or task.status is run.TaskStatus.IN_PROGRESS:
            continue
        book.move(task.id, run.TaskStatus.CANCELLED, now, error=reason, batch=batch)


def finish_run(
    services: Services,
    conn: Connection,
    r: run.Run,
    final: run.RunStatus,
    tasks: list[run.Task],
    batch: Batch,
) -> None:
    """End run ``r`` as ``final``; Hans answers in the same transaction, or after the turn
    or summary the conversation is busy with (a job keyed by the conversation, like a turn).
    """
    runs.move(conn, r.tenant_id, r.id, final, services.clock())
    batch.event(
        event.RunStatusData(status=final.value, previous=r.status.value),
        agent_id=services.roster[0].id,
    )
    if queue.live_statuses(conn, r.conversation_id):
        payload = {"runId": r.id, "tenantId": r.tenant_id}
        queue.enqueue(conn, r.tenant_id, job.JobKind.RUN_SUMMARY, payload, services.clock(),
                      key=r.conversation_id)  # fmt: skip
        return
    crash_point(services, "summary.before_write")
    summary.answer(services, r.model_copy(update={"status": final}), tasks, batch)


def cancel_run(
    services: Services, conn: Connection, tenant_id: str, run_id: str, batch: Batch
) -> bool:
    """Cancel a run: waiting tasks are cancelled; running ones finish and are then ignored.

    Returns False when the run was already final (a repeated cancel is a no-op).
    """
    now = services.clock()
    status = runs.lock(conn, run_id, now)
    if status in run.RUN_FINAL:
        return False
    book = Book(conn, tenant_id, runs.tasks_of(conn, run_id))
    _cancel(book, list(book.tasks.values()), now, batch, "the run was cancelled")
    current = runs.get(conn, tenant_id, run_id)
    if status in (run.RunStatus.RUNNING, run.RunStatus.PAUSED):
        tasks = list(book.tasks.values())
        finish_run(services, conn, current, run.RunStatus.CANCELLED, tasks, batch)
    else:
        runs.move(conn, tenant_id, run_id, run.RunStatus.CANCELLED, now)
        batch.event(
            event.RunStatusData(status="cancelled", previous=status.value),
            agent_id=services.roster[0].id,
        )
    return True
