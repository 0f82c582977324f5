"""``POST /api/assistant/execute`` (seed 000 §12.2): one task, the same laws as planned ones."""

from __future__ import annotations

from typing import Any

from hansa.domain import run
from hansa.engine.runs import service
from hansa.engine.runtime.follow import follow
from hansa.engine.runtime.services import Services


async def execute(
    services: Services,
    tenant_id: str,
    *,
    conversation_id: str,
    project_id: str | None,
    agent_id: str,
    task_type: str,
    parameters: dict[str, Any],
    summary: str,
) -> run.Task:
    """Check the laws, then run the task as a one-step run; returns it once it settled.

    An irreversible task comes back ``awaiting_confirmation`` without running.
    """
    draft = service.TaskDraft(
        "A",
        task_type,
        parameters,
        agent_id,
        summary or service.default_summary(task_type, parameters),
        project_id=project_id,
    )
    new = service.NewRun(conversation_id, draft.summary, project_id, [draft])
    run_id, stored = await service.create_run(services, tenant_id, new)
    await service.approve(services, tenant_id, run_id)
    (task,) = (await service.view(services, tenant_id, run_id)).tasks
    if task.status in run.TASK_FINAL or task.status is run.TaskStatus.AWAITING_CONFIRMATION:
        return task
    after = stored[-1].seq if stored else 0
    async for ev in follow(
        services, tenant_id, conversation_id, after, idle_seconds=services.settings.poll_seconds
    ):
        if ev is not None and ev.task_id != task.id:
            continue
        task = await service.get_task(services, tenant_id, task.id)
        if task.status in run.TASK_FINAL or task.status is run.TaskStatus.AWAITING_CONFIRMATION:
            return task
    raise AssertionError("unreachable: follow() never ends")
