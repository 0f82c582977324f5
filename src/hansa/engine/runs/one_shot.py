"""``POST /api/assistant/execute`` (seed 000 §12.2): one task, the same laws as planned ones."""

from __future__ import annotations

import asyncio
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
    """Check the laws, then run the task as a one-step run; returns it once it settled,
    or as it stands after ``execute_timeout_seconds`` (it goes on: follow it by its id).

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
    title = (
        draft.summary
        if len(draft.summary) <= _TITLE_CHARS
        else draft.summary[: _TITLE_CHARS - 1] + "…"
    )
    new = service.NewRun(conversation_id, title, project_id, [draft])
    run_id, stored = await service.create_run(services, tenant_id, new)
    await service.approve(services, tenant_id, run_id)
    (task,) = (await service.view(services, tenant_id, run_id)).tasks
    if _settled(task):
        return task
    after = stored[-1].seq if stored else 0
    try:
        async with asyncio.timeout(services.settings.execute_timeout_seconds):
            async for ev in follow(
                services,
                tenant_id,
                conversation_id,
                after,
                idle_seconds=services.settings.poll_seconds,
            ):
                if ev is not None and ev.task_id != task.id:
                    continue
                task = await service.get_task(services, tenant_id, task.id)
                if _settled(task):
                    return task
    except TimeoutError:
        pass
    return await service.get_task(services, tenant_id, task.id)


_TITLE_CHARS = 200
"""A run's title column is this wide; a longer summary is cut for the title only."""


def _settled(task: run.Task) -> bool:
    return task.status in run.TASK_FINAL or task.status is run.TaskStatus.AWAITING_CONFIRMATION
