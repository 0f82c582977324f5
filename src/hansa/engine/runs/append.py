"""A task added to a run that is not over: ``POST /api/assistant/execute`` with ``runId``
(seed 000 §8.3: an agent adds the work it does to the run it works in).

The task gets a step group of its own after the run's last one, so it runs once the work
planned before it is done, under the same laws as a planned task: judged now, and again
when it starts.
"""

from __future__ import annotations

import dataclasses

from hansa import errors
from hansa.domain import event, run
from hansa.engine.runs import run_job, scheduler
from hansa.engine.runs.change import RunChange
from hansa.engine.runs.connectors import secret_box
from hansa.engine.runs.drafts import TaskDraft, judge_drafts, new_task
from hansa.store import projects, runs


def next_group(group: str) -> str:
    """The step group after ``group`` in the scheduler's (string) order: B after A, ZA
    after Z."""
    if group and group[-1] < "Z":
        return group[:-1] + chr(ord(group[-1]) + 1)
    return group + "A"


def add_task(
    change: RunChange, conversation_id: str, draft: TaskDraft
) -> tuple[run.Task, run.RunStatus]:
    """Add ``draft`` to the change's run as a new last step group; a running run starts
    it when its turn comes. Returns the task and the run's status.

    Raises:
        errors.NotFound: The tenant has no such run, or no such project.
        errors.Conflict: The run is over, or belongs to another conversation.
        errors.InvalidInput: The run has its most tasks already, or the draft is incomplete.
        laws.ScopeDenied: The law of allowed scope refuses the task.
    """
    conn, tenant_id, run_id = change.conn, change.tenant_id, change.run_id
    runs.get(conn, tenant_id, run_id)  # another tenant's run is not found
    if draft.project_id is not None:
        projects.get(conn, tenant_id, draft.project_id)  # nor another tenant's project
    current = runs.locked(conn, run_id, change.now)
    if current.conversation_id != conversation_id:
        raise errors.Conflict(
            f"run {run_id} belongs to another conversation",
            details={"field": "runId", "conversationId": current.conversation_id},
        )
    if current.status in run.RUN_FINAL:
        raise errors.Conflict(
            f"run {run_id} is {current.status.value}; a task can join only a run that is not over",
            details={"field": "runId", "status": current.status.value},
        )
    tasks = runs.tasks_of(conn, run_id)
    limit = change.services.settings.max_tasks_per_run
    if len(tasks) >= limit:
        raise errors.InvalidInput(f"a run has at most {limit} tasks", details={"field": "runId"})
    last = max((t.step_group for t in tasks), default="")
    draft = dataclasses.replace(
        draft,
        step_group=next_group(last) if last else "A",
        sequence_order=0,
        project_id=draft.project_id or current.project_id,
    )
    (verdict,) = judge_drafts(change.services, conn, tenant_id, [draft])
    verdict.raise_for_refusal()
    task = new_task(current, draft, verdict, change.now, secret_box(change.services))
    runs.add_tasks(conn, tenant_id, [task])
    created = event.TaskCreatedData(
        task_type=task.task_type, step_group=task.step_group, summary=task.summary
    )
    change.batch.event(created, agent_id=task.created_by, task_id=task.id)
    if current.status is run.RunStatus.RUNNING:
        claimed = scheduler.wake(change, conversation_id)
        if claimed is not None:
            run_job.hand_over(change, claimed)
    return task, current.status
