"""Runs, tasks, task types and the seed-compatible execution route."""

from __future__ import annotations

from fastapi import APIRouter, Response

from hansa.api.deps import PrincipalDep, ServicesDep, TenantDep
from hansa.api.models import runs as models
from hansa.api.models.base import answers
from hansa.api.schemas import ExecuteRequest, RunApprove, RunCreate, TaskConfirm
from hansa.domain import run
from hansa.domain.principal import Forbidden
from hansa.engine import runs
from hansa.engine.runtime.services import Services

router = APIRouter()


async def card(services: Services, tenant: str, run_id: str) -> models.RunCard:
    """The run as its card shows it: its tasks, thinking, and what Undo offers (the steps a
    rollback would undo, newest first)."""
    return await _card_of(services, tenant, await runs.view(services, tenant, run_id))


async def _card_of(services: Services, tenant: str, shown: runs.RunView) -> models.RunCard:
    names = await services.agents.display_names(tenant, (t.created_by for t in shown.tasks))
    undoable = [t.id for t in runs.undoable(services.registry, shown.tasks)]
    return models.RunCard.of_run(shown.current, shown.tasks, shown.thinking, names, undoable)


@router.get(
    "/api/task-types",
    tags=["tasks"],
    operation_id="listTaskTypes",
)
async def task_types(services: ServicesDep) -> list[models.TaskType]:
    """The registry: names, parameter schemas, reversibility, capability."""
    return [
        models.TaskType(
            name=t.name,
            description=t.description,
            parameters_schema=t.schema(),
            is_reversible_by_system=t.is_reversible_by_system,
            capability=t.capability,
            graph_node=t.graph_node,
        )
        for t in services.registry.all()
    ]


@router.post(
    "/api/runs",
    status_code=201,
    tags=["runs"],
    responses=answers(None, 404),
)
async def create_run(body: RunCreate, services: ServicesDep, tenant: TenantDep) -> models.RunCard:
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
    # the card is read in the run's own transaction (decision 0028)
    return await _card_of(services, tenant, await runs.create_viewed(services, tenant, new))


@router.get("/api/runs/{run_id}", tags=["runs"])
async def get_run(run_id: str, services: ServicesDep, tenant: TenantDep) -> models.RunCard:
    """The run card."""
    return await card(services, tenant, run_id)


@router.post(
    "/api/runs/{run_id}/approve",
    tags=["runs"],
    responses=answers(None, 409),
)
async def approve_run(
    run_id: str, services: ServicesDep, tenant: TenantDep, body: RunApprove | None = None
) -> models.RunCard:
    """Approve (optionally editing steps first); execution starts in the background."""
    edits = [e.model_dump(by_alias=True, exclude_none=True) for e in (body.edits if body else [])]
    # the card as the approval left it, read in its transaction (decision 0028)
    return await _card_of(services, tenant, await runs.approve(services, tenant, run_id, edits))


@router.post(
    "/api/runs/{run_id}/cancel",
    tags=["runs"],
    responses=answers(None, 409),
)
async def cancel_run(run_id: str, services: ServicesDep, tenant: TenantDep) -> models.RunCard:
    """Cancel the run (a repeated cancel changes nothing)."""
    await runs.cancel(services, tenant, run_id)
    return await card(services, tenant, run_id)


@router.post(
    "/api/runs/{run_id}/pause",
    tags=["runs"],
    responses=answers(None, 409),
)
async def pause_run(run_id: str, services: ServicesDep, tenant: TenantDep) -> models.RunCard:
    """No new task starts; running ones finish."""
    await runs.pause(services, tenant, run_id)
    return await card(services, tenant, run_id)


@router.post(
    "/api/runs/{run_id}/resume",
    tags=["runs"],
    responses=answers(None, 409),
)
async def resume_run(run_id: str, services: ServicesDep, tenant: TenantDep) -> models.RunCard:
    """Continue a paused run."""
    await runs.resume(services, tenant, run_id)
    return await card(services, tenant, run_id)


@router.post(
    "/api/runs/{run_id}/rollback",
    tags=["runs"],
    responses=answers(None, 409),
)
async def rollback_run(run_id: str, services: ServicesDep, tenant: TenantDep) -> models.RunCard:
    """Undo every completed step of an ended run that can be undone, newest first (law of no
    return); the run becomes ``rolled_back``. 409 ``not_undoable`` when nothing can be undone
    or the run has not ended; 409 ``undo_failed`` when an undo failed (recorded)."""
    await runs.rollback(services, tenant, run_id)
    return await card(services, tenant, run_id)


@router.post(
    "/api/tasks/{task_id}/undo",
    tags=["tasks"],
    responses=answers(None, 409),
)
async def undo_task(task_id: str, services: ServicesDep, tenant: TenantDep) -> models.TaskOut:
    """Undo one completed step of an ended run with its task type's undo; the task, now
    ``undone``. 409 ``not_undoable`` for an irreversible step or one that changed nothing."""
    return models.TaskOut.of(await runs.undo_task(services, tenant, task_id))


@router.post(
    "/api/tasks/{task_id}/preempt",
    tags=["tasks"],
    responses=answers(None, 409),
)
async def preempt_task(task_id: str, services: ServicesDep, tenant: TenantDep) -> models.TaskOut:
    """Cancel this task only; the run continues."""
    return models.TaskOut.of(await runs.preempt(services, tenant, task_id))


@router.get("/api/tasks/{task_id}", tags=["tasks"])
async def get_task(task_id: str, services: ServicesDep, tenant: TenantDep) -> models.TaskOut:
    """One task."""
    return models.TaskOut.of(await runs.get_task(services, tenant, task_id))


@router.post(
    "/api/tasks/{task_id}/confirm",
    tags=["tasks"],
    responses=answers(None, 409),
)
async def confirm_task(
    task_id: str, body: TaskConfirm, services: ServicesDep, tenant: TenantDep
) -> models.TaskOut:
    """Consent to an irreversible task for exactly the parameters with this hash."""
    return models.TaskOut.of(await runs.confirm(services, tenant, task_id, body.parameters_hash))


@router.post(
    "/api/assistant/execute",
    tags=["chat"],
    response_model_exclude_unset=True,  # ``error`` only when the task failed
    responses={
        **answers(None, 404, 409),
        200: {"description": "The task is final"},
        **answers(models.Executed, status=202, description="Awaiting confirmation, or running"),
    },
)
async def assistant_execute(
    body: ExecuteRequest, services: ServicesDep, principal: PrincipalDep, response: Response
) -> models.Executed:
    """Run one task under the laws, on its own or (``runId``) as the next step of that run;
    202 with ``awaiting_confirmation`` for an irreversible one (or its current status for one
    still running after ``execute_timeout_seconds``, or added to a run that is not running).
    An agent's token runs tasks only as that agent, within its capabilities."""
    if not principal.may_act_as(body.created_by_agent_id):
        raise Forbidden(
            f"this token acts only as {principal.id!r}", details={"field": "createdByAgentId"}
        )
    task = await runs.execute(
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
    # not final: awaiting confirmation, or still running past execute_timeout_seconds
    response.status_code = 200 if task.status in run.TASK_FINAL else 202
    failed = {"error": task.error} if task.error else {}
    return models.Executed(
        task_id=task.id,
        run_id=task.run_id,
        status=task.status,
        details=runs.details(task),
        parameters_hash=task.parameters_hash,
        **failed,
    )
