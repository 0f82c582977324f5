"""``POST /api/assistant/execute`` (seed 000 §12.2): one task, the same laws as planned ones."""

from __future__ import annotations

import asyncio
from typing import Any

from hansa.domain import event, run, secrets
from hansa.engine.runs import drafts, service
from hansa.engine.runs.append import add_task
from hansa.engine.runs.change import RunChange
from hansa.engine.runtime.follow import follow
from hansa.engine.runtime.recorder import Batch, Recorder
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
    run_id: str | None = None,
) -> run.Task:
    """Check the laws, then run the task: as a one-step run, or with ``run_id`` as the next
    step group of that run (its tenant's and conversation's, not over: 404 or 409 otherwise).
    Returns the task once it settled, or as it stands after ``execute_timeout_seconds`` (it
    goes on: follow it by its id); a task added to a run that is not running (awaiting
    approval, paused) comes back open at once: it runs when its run does.

    An irreversible task comes back ``awaiting_confirmation`` without running.
    """
    draft = drafts.TaskDraft(
        "A",
        task_type,
        parameters,
        agent_id,
        summary or drafts.default_summary(task_type, parameters),
        project_id=project_id,
    )
    if run_id is not None:
        task, stored, status = await _append(services, tenant_id, conversation_id, run_id, draft)
        if status is not run.RunStatus.RUNNING:
            return task
    else:
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


async def _append(
    services: Services,
    tenant_id: str,
    conversation_id: str,
    run_id: str,
    draft: drafts.TaskDraft,
) -> tuple[run.Task, list[event.Event], run.RunStatus]:
    """``add_task`` in a transaction of its own: the task, the events, the run's status."""
    batch = Batch(conversation_id, None, run_id=run_id)

    def step(change: RunChange) -> tuple[run.Task, run.RunStatus]:
        return add_task(change, conversation_id, draft)

    added = batch.then(service.on_run(services, tenant_id, run_id, batch, step))
    stored = await Recorder(services, tenant_id, conversation_id).write(batch)
    task, status = added.value
    return task, stored, status


def details(task: run.Task) -> dict[str, Any]:
    """The task's result as the seed's ``details`` (§12.2): secrets masked, and a page's id
    also as ``cmsId`` (a number, as WordPress's ids are, when it is one)."""
    shown: dict[str, Any] = secrets.mask(task.result or {})
    page_id = shown.get("pageId")
    if isinstance(page_id, str) and "cmsId" not in shown:
        shown["cmsId"] = int(page_id) if page_id.isdigit() and len(page_id) < 16 else page_id
    return shown


_TITLE_CHARS = 200
"""A run's title column is this wide; a longer summary is cut for the title only."""


def _settled(task: run.Task) -> bool:
    return task.status in run.TASK_FINAL or task.status is run.TaskStatus.AWAITING_CONFIRMATION
