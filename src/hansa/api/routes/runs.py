"""Runs, tasks, task types and the seed-compatible execution route."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from hansa.api.deps import PrincipalDep, ServicesDep, TenantDep
from hansa.api.models import runs as models
from hansa.api.models.base import answers
from hansa.api.schemas import (
    ExecuteRequest,
    RunApprove,
    RunCreate,
    TaskConfirm,
    run_card,
    task_out,
)
from hansa.domain import run, secrets
from hansa.domain.principal import Forbidden
from hansa.engine import runs
from hansa.engine.runs.one_shot import details, execute
from hansa.engine.runtime.services import Services

router = APIRouter()


async def card(services: Services, tenant: str, run_id: str) -> dict[str, Any]:
    """The run as its card shows it: its tasks, thinking, and what Undo offers."""
    shown = await runs.view(services, tenant, run_id)
    names = await services.agents.display_names(tenant, (t.created_by for t in shown.tasks))
    out = run_card(shown.current, shown.tasks, shown.thinking, names)
    # what the panel's Undo offers: the steps a rollback would undo, newest first
    out["undoableTaskIds"] = [t.id for t in runs.undoable(services.registry, shown.tasks)]
    return out


@router.get(
    "/api/task-types",
    tags=["tasks"],
    operation_id="listTaskTypes",
    response_model=None,
    responses=answers(list[models.TaskType]),
)
async def task_types(services: ServicesDep) -> list[dict[str, Any]]:
    """The registry: names, parameter schemas, reversibility, capability."""
    return [
        {
            "name": t.name,
            "description": t.description,
            "parametersSchema": t.schema(),
            "isReversibleBySystem": t.is_reversible_by_system,
            "capability": t.capability,
            "graphNode": t.graph_node,
        }
        for t in services.registry.all()
    ]


@router.post(
    "/api/runs",
    status_code=201,
    tags=["runs"],
    response_model=None,
    responses=answers(models.RunCard, 404, status=201),
)
async def create_run(body: RunCreate, services: ServicesDep, tenant: TenantDep) -> dict[str, Any]:
    """A programmatic plan: checked by the same laws, stored awaiting approval."""
    drafts = [
        runs.TaskDraft(
            step_group=t.step_group,
            task_type=t.task_type,
            parameters=t.parameters,
            created_by=t.created_by_agent_id,
            summary=t.summary or runs.default_summary(t.task_type, t.parameters),
            sequence_order=t.sequence_order,
            project_id=t.project_id or body.project_id,
            ref=t.ref,
        )
        for t in body.tasks
    ]
    new = runs.NewRun(body.conversation_id, body.title, body.project_id, drafts)
    run_id, _ = await runs.create_run(services, tenant, new)
    return await card(services, tenant, run_id)


@router.get(
    "/api/runs/{run_id}", tags=["runs"], response_model=None, responses=answers(models.RunCard)
)
async def get_run(run_id: str, services: ServicesDep, tenant: TenantDep) -> dict[str, Any]:
    """The run card."""
    return await card(services, tenant, run_id)


@router.post(
    "/api/runs/{run_id}/approve",
    tags=["runs"],
    response_model=None,
    responses=answers(models.RunCard, 409),
)
async def approve_run(
    run_id: str, services: ServicesDep, tenant: TenantDep, body: RunApprove | None = None
) -> dict[str, Any]:
    """Approve (optionally editing steps first); execution starts in the background."""
    edits = [e.model_dump(by_alias=True, exclude_none=True) for e in (body.edits if body else [])]
    await runs.approve(services, tenant, run_id, edits)
    return await card(services, tenant, run_id)


@router.post(
    "/api/runs/{run_id}/cancel",
    tags=["runs"],
    response_model=None,
    responses=answers(models.RunCard, 409),
)
async def cancel_run(run_id: str, services: ServicesDep, tenant: TenantDep) -> dict[str, Any]:
    """Cancel the run (a repeated cancel changes nothing)."""
    await runs.cancel(services, tenant, run_id)
    return await card(services, tenant, run_id)


@router.post(
    "/api/runs/{run_id}/pause",
    tags=["runs"],
    response_model=None,
    responses=answers(models.RunCard, 409),
)
async def pause_run(run_id: str, services: ServicesDep, tenant: TenantDep) -> dict[str, Any]:
    """No new task starts; running ones finish."""
    await runs.pause(services, tenant, run_id)
    return await card(services, tenant, run_id)


@router.post(
    "/api/runs/{run_id}/resume",
    tags=["runs"],
    response_model=None,
    responses=answers(models.RunCard, 409),
)
async def resume_run(run_id: str, services: ServicesDep, tenant: TenantDep) -> dict[str, Any]:
    """Continue a paused run."""
    await runs.resume(services, tenant, run_id)
    return await card(services, tenant, run_id)


@router.post(
    "/api/runs/{run_id}/rollback",
    tags=["runs"],
    response_model=None,
    responses=answers(models.RunCard, 409),
)
async def rollback_run(run_id: str, services: ServicesDep, tenant: TenantDep) -> dict[str, Any]:
    """Undo every completed step of an ended run that can be undone, newest first (law of no
    return); the run becomes ``rolled_back``. 409 ``not_undoable`` when nothing can be undone
    or the run has not ended; 409 ``undo_failed`` when an undo failed (recorded)."""
    await runs.rollback(services, tenant, run_id)
    return await card(services, tenant, run_id)


@router.post(
    "/api/tasks/{task_id}/undo",
    tags=["tasks"],
    response_model=None,
    responses=answers(models.TaskOut, 409),
)
async def undo_task(task_id: str, services: ServicesDep, tenant: TenantDep) -> dict[str, Any]:
    """Undo one completed step of an ended run with its task type's undo; the task, now
    ``undone``. 409 ``not_undoable`` for an irreversible step or one that changed nothing."""
    return task_out(await runs.undo_task(services, tenant, task_id))


@router.post(
    "/api/tasks/{task_id}/preempt",
    tags=["tasks"],
    response_model=None,
    responses=answers(models.TaskOut, 409),
)
async def preempt_task(task_id: str, services: ServicesDep, tenant: TenantDep) -> dict[str, Any]:
    """Cancel this task only; the run continues."""
    return task_out(await runs.preempt(services, tenant, task_id))


@router.get(
    "/api/tasks/{task_id}", tags=["tasks"], response_model=None, responses=answers(models.TaskOut)
)
async def get_task(task_id: str, services: ServicesDep, tenant: TenantDep) -> dict[str, Any]:
    """One task."""
    return task_out(await runs.get_task(services, tenant, task_id))


@router.post(
    "/api/tasks/{task_id}/confirm",
    tags=["tasks"],
    response_model=None,
    responses=answers(models.TaskOut, 409),
)
async def confirm_task(
    task_id: str, body: TaskConfirm, services: ServicesDep, tenant: TenantDep
) -> dict[str, Any]:
    """Consent to an irreversible task for exactly the parameters with this hash."""
    return task_out(await runs.confirm(services, tenant, task_id, body.parameters_hash))


@router.post(
    "/api/assistant/execute",
    tags=["chat"],
    response_model=None,
    responses={
        **answers(models.Executed, 404, 409, description="The task is final"),
        **answers(models.Executed, status=202, description="Awaiting confirmation, or running"),
    },
)
async def assistant_execute(
    body: ExecuteRequest, services: ServicesDep, principal: PrincipalDep
) -> JSONResponse:
    """Run one task under the laws, on its own or (``runId``) as the next step of that run;
    202 with ``awaiting_confirmation`` for an irreversible one (or its current status for one
    still running after ``execute_timeout_seconds``, or added to a run that is not running).
    An agent's token runs tasks only as that agent, within its capabilities."""
    if not principal.may_act_as(body.created_by_agent_id):
        raise Forbidden(
            f"this token acts only as {principal.id!r}", details={"field": "createdByAgentId"}
        )
    task = await execute(
        services,
        principal.tenant_id,
        conversation_id=body.conversation_id,
        project_id=body.project_id,
        agent_id=body.created_by_agent_id,
        task_type=body.task_type,
        parameters=body.parameters,
        summary=body.summary,
        run_id=body.run_id,
    )
    payload = {
        "taskId": task.id,
        "runId": task.run_id,
        "status": task.status.value,
        "details": details(task),
        "parametersHash": task.parameters_hash,
    }
    if task.error:
        payload["error"] = secrets.mask_text(task.error)
    # not final: awaiting confirmation, or still running past execute_timeout_seconds
    return JSONResponse(payload, status_code=200 if task.status in run.TASK_FINAL else 202)
