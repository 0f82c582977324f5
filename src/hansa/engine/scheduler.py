"""The run scheduler: groups in order, tasks of a group concurrently under a cap.

``advance`` runs inside the transaction of whatever changed a run (approval, a
task finishing, a confirmation). It takes the run's row lock, looks at the tasks,
and decides what happens next: queue more tasks of the current group, hold an
irreversible task for confirmation, open the next group, or end the run (a
failed task fails the run once its siblings finish; later groups are cancelled).
Ending a run queues Hans's summary, keyed by the conversation like a turn.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import Connection

from hansa.domain import event, job, run
from hansa.engine.recorder import Batch
from hansa.engine.services import Services
from hansa.store import queue, runs

_FAILED = (run.TaskStatus.FAILED, run.TaskStatus.AMBIGUOUS)


def advance(
    services: Services, conn: Connection, tenant_id: str, run_id: str, batch: Batch
) -> None:
    """Move run ``run_id`` forward as far as it can go now."""
    now = services.clock()
    if runs.lock(conn, run_id, now) is not run.RunStatus.RUNNING:
        return
    tasks = runs.tasks_of(conn, run_id)
    for group in sorted({t.step_group for t in tasks}):
        members = [t for t in tasks if t.step_group == group]
        if all(t.status in run.TASK_FINAL for t in members):
            if any(t.status in _FAILED for t in members):
                later = [t for t in tasks if t.step_group > group]
                _cancel(conn, tenant_id, later, now, batch, "an earlier step failed")
                _finish(services, conn, tenant_id, run_id, run.RunStatus.FAILED, now, batch)
                return
            continue
        _fill(services, conn, tenant_id, group, members, now, batch)
        return
    # a preempted (cancelled) task does not fail its run; the rest carried on
    _finish(services, conn, tenant_id, run_id, run.RunStatus.COMPLETED, now, batch)


def _fill(
    services: Services,
    conn: Connection,
    tenant_id: str,
    group: str,
    members: list[run.Task],
    now: datetime,
    batch: Batch,
) -> None:
    busy = sum(
        1
        for t in members
        if t.status is run.TaskStatus.IN_PROGRESS
        or (t.status is run.TaskStatus.OPEN and t.scheduled_at is not None)
    )
    if busy == 0 and not any(t.scheduled_at or t.attempts for t in members):
        names = sorted({services.agent(t.created_by).display_name for t in members})
        together = " and ".join(names) + (" are" if len(names) > 1 else " is")
        batch.thinking(
            f"Group {group}: {together} working" + (" in parallel" if len(members) > 1 else ""),
            agent_id=services.roster[0].id, phase="execution", group=group,
        )  # fmt: skip
    for task in members:
        if task.status is not run.TaskStatus.OPEN or task.scheduled_at is not None:
            continue
        if not task.is_reversible_by_system and task.confirmed_hash != task.parameters_hash:
            runs.move_task(conn, tenant_id, task.id, run.TaskStatus.AWAITING_CONFIRMATION, now)
            agent = services.agent(task.created_by)
            batch.event(
                event.TaskStatusData(status="awaiting_confirmation", previous="open"),
                agent_id=agent.id, task_id=task.id,
            )  # fmt: skip
            batch.status(
                f"{agent.display_name} needs your confirmation before: {task.summary} "
                "(this cannot be undone)",
                agent_id=agent.id,
            )
            continue
        if busy >= services.settings.task_concurrency:
            continue
        runs.update_task(conn, task.id, now, scheduled_at=now)
        payload = {"taskId": task.id}
        if batch.claimer is not None and batch.claimer.lease_owner:
            lease = timedelta(seconds=services.settings.lease_seconds)
            batch.adopted.append(
                queue.enqueue_claimed(
                    conn,
                    tenant_id,
                    job.JobKind.TASK,
                    payload,
                    now,
                    owner=batch.claimer.lease_owner,
                    lease_until=now + lease,
                )
            )
        else:
            queue.enqueue(conn, tenant_id, job.JobKind.TASK, payload, now)
        busy += 1


def _cancel(
    conn: Connection,
    tenant_id: str,
    tasks: list[run.Task],
    now: datetime,
    batch: Batch,
    reason: str,
) -> None:
    for task in tasks:
        if task.status in run.TASK_FINAL or task.status is run.TaskStatus.IN_PROGRESS:
            continue
        runs.move_task(conn, tenant_id, task.id, run.TaskStatus.CANCELLED, now, error=reason)
        batch.event(
            event.TaskStatusData(status="cancelled", previous=task.status.value),
            agent_id=task.created_by, task_id=task.id,
        )  # fmt: skip


def _finish(
    services: Services,
    conn: Connection,
    tenant_id: str,
    run_id: str,
    final: run.RunStatus,
    now: datetime,
    batch: Batch,
) -> None:
    previous = runs.get(conn, tenant_id, run_id).status.value
    runs.move(conn, tenant_id, run_id, final, now)
    batch.event(
        event.RunStatusData(status=final.value, previous=previous), agent_id=services.roster[0].id
    )
    queue.enqueue(
        conn, tenant_id, job.JobKind.RUN_SUMMARY, {"runId": run_id, "tenantId": tenant_id}, now,
        key=batch.conversation_id,
    )  # fmt: skip


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
    tasks = runs.tasks_of(conn, run_id)
    _cancel(conn, tenant_id, tasks, now, batch, "the run was cancelled")
    if status in (run.RunStatus.RUNNING, run.RunStatus.PAUSED):
        _finish(services, conn, tenant_id, run_id, run.RunStatus.CANCELLED, now, batch)
    else:
        runs.move(conn, tenant_id, run_id, run.RunStatus.CANCELLED, now)
        batch.event(
            event.RunStatusData(status="cancelled", previous=status.value),
            agent_id=services.roster[0].id,
        )
    return True
