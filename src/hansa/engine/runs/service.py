"""Runs from plans or from the API: create (checked by the laws), approve, confirm, cancel."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection

from hansa import errors
from hansa.domain import event, message, run
from hansa.domain.base import new_id
from hansa.domain.job import JobKind
from hansa.domain.plan import Plan
from hansa.engine import laws
from hansa.engine.project_context import build_project_context
from hansa.engine.runs import run_job, scheduler
from hansa.engine.runtime.recorder import Batch, Recorder
from hansa.engine.runtime.services import Services
from hansa.store import conversations, messages, runs


@dataclass(frozen=True)
class TaskDraft:
    """A task as a plan or an API caller proposes it."""

    step_group: str
    task_type: str
    parameters: dict[str, Any]
    created_by: str
    summary: str
    sequence_order: int = 0
    project_id: str | None = None
    ref: str | None = None


def default_summary(task_type: str, parameters: dict[str, Any]) -> str:
    """A readable summary when the caller gave none: the type and what it acts on."""
    for key in ("title", "name", "url", "pageId", "entityId", "seconds"):
        if key in parameters:
            return f"{task_type.replace('_', ' ')}: {parameters[key]}"
    return task_type.replace("_", " ")


def drafts_from_plan(plan: Plan, project_id: str | None) -> list[TaskDraft]:
    """One draft per plan step, in stage order."""
    return [
        TaskDraft(
            step_group=stage.group, task_type=step.task_type, parameters=step.parameters,
            created_by=step.owner, summary=step.summary, sequence_order=i,
            project_id=step.project_id or project_id, ref=step.ref,
        )
        for stage in plan.stages
        for i, step in enumerate(stage.steps)
    ]  # fmt: skip


def judge_drafts(
    services: Services, conn: Connection, tenant_id: str, drafts: list[TaskDraft]
) -> list[laws.Verdict]:
    """The laws' verdict on each draft, at plan time (step references allowed)."""
    verdicts = []
    for draft in drafts:
        if not services.has_agent(draft.created_by):
            raise errors.InvalidInput(
                f"unknown agent {draft.created_by!r}", details={"field": "createdByAgentId"}
            )
        project = build_project_context(conn, tenant_id, draft.project_id)
        verdicts.append(
            laws.judge(services.registry, draft.task_type, draft.parameters,
                       services.agent(draft.created_by), project, resolved=False)
        )  # fmt: skip
    return verdicts


def store_run(
    services: Services,
    conn: Connection,
    tenant_id: str,
    conversation_id: str,
    title: str,
    project_id: str | None,
    drafts: list[TaskDraft],
    batch: Batch,
    *,
    plan: Plan | None = None,
) -> run.Run:
    """Check every task against the laws, then store the run (awaiting approval) and its tasks.

    A scope refusal or a missing parameter refuses the whole run, naming the law.
    """
    if not drafts:
        raise errors.InvalidInput("a run needs at least one task", details={"field": "tasks"})
    if len(drafts) > services.settings.max_tasks_per_run:
        raise errors.InvalidInput(
            f"a run has at most {services.settings.max_tasks_per_run} tasks",
            details={"field": "tasks"},
        )
    conversations.get(conn, tenant_id, conversation_id)
    verdicts = judge_drafts(services, conn, tenant_id, drafts)
    for verdict in verdicts:
        verdict.raise_for_refusal()
    now = services.clock()
    metadata: dict[str, Any] = {"plan": plan.model_dump(mode="json", by_alias=True)} if plan else {}
    new_run = run.Run(
        id=new_id(), tenant_id=tenant_id, conversation_id=conversation_id, project_id=project_id,
        created_by=services.roster[0].id, title=title, status=run.RunStatus.AWAITING_APPROVAL,
        created_at=now, updated_at=now, metadata=metadata,
    )  # fmt: skip
    tasks = [
        run.Task(
            id=new_id(), run_id=new_run.id, conversation_id=conversation_id,
            project_id=d.project_id, parent_task_id=None, step_group=d.step_group,
            sequence_order=d.sequence_order, created_by=d.created_by, status=run.TaskStatus.OPEN,
            task_type=d.task_type, parameters=d.parameters, summary=d.summary,
            is_reversible_by_system=v.reversible, irreversible_confirmed_at=None,
            confirmed_hash=None, attempts=0, scheduled_at=None, result=None, error=None,
            created_at=now, updated_at=now, metadata={"ref": d.ref, "lawChecks": v.checks},
        )
        for d, v in zip(drafts, verdicts, strict=True)
    ]  # fmt: skip
    runs.create(conn, new_run, tasks)
    batch.run_id = new_run.id
    chief = services.roster[0].id
    batch.event(event.RunCreatedData(title=title, status=new_run.status.value), agent_id=chief)
    for t in tasks:
        created = event.TaskCreatedData(
            task_type=t.task_type, step_group=t.step_group, summary=t.summary
        )
        batch.event(created, agent_id=t.created_by, task_id=t.id)
    return new_run


async def create_run(
    services: Services,
    tenant_id: str,
    conversation_id: str,
    title: str,
    project_id: str | None,
    drafts: list[TaskDraft],
) -> tuple[run.Run, list[event.Event]]:
    """``store_run`` in a transaction of its own: the run and the events announcing it."""
    batch = Batch(conversation_id, None)
    created: list[run.Run] = []

    def store(conn: Connection) -> None:
        created.append(store_run(services, conn, tenant_id, conversation_id, title,
                                 project_id, drafts, batch))  # fmt: skip

    stored = await Recorder(services, tenant_id, conversation_id).write(batch, prepare=store)
    return created[0], stored


def _awaiting(conn: Connection, tenant_id: str, run_id: str) -> run.Run:
    current = runs.get(conn, tenant_id, run_id)
    if current.status is not run.RunStatus.AWAITING_APPROVAL:
        raise errors.Conflict(
            f"run {run_id} is {current.status.value}, not awaiting approval",
            details={"status": current.status.value},
        )
    return current


def apply_edits(
    services: Services,
    conn: Connection,
    tenant_id: str,
    run_id: str,
    edits: list[dict[str, Any]],
    batch: Batch,
) -> None:
    """Change steps before approval: parameters (merged), owner, summary. Laws re-checked;
    each edited step is announced (``task_updated``)."""
    tasks = {t.id: t for t in runs.tasks_of(conn, run_id)}
    now = services.clock()
    for edit in edits:
        task = tasks.get(str(edit.get("taskId")))
        if task is None:
            raise errors.InvalidInput(
                f"edit names task {edit.get('taskId')!r}, which is not in this run",
                details={"field": "edits.taskId"},
            )
        params = {**task.parameters, **dict(edit.get("parameters") or {})}
        owner = str(edit.get("createdByAgentId") or task.created_by)
        draft = TaskDraft(task.step_group, task.task_type, params, owner, task.summary,
                          project_id=task.project_id)  # fmt: skip
        (verdict,) = judge_drafts(services, conn, tenant_id, [draft])
        verdict.raise_for_refusal()
        changes: dict[str, Any] = {"parameters": params, "created_by": owner,
                                   "is_reversible_by_system": verdict.reversible}  # fmt: skip
        if "summary" in edit:
            changes["summary"] = str(edit["summary"])
        new_hash = run.parameters_hash(params)
        voided = task.confirmed_hash is not None and new_hash != task.confirmed_hash
        if new_hash != task.confirmed_hash:  # changed parameters void consent
            changes.update(confirmed_hash=None, irreversible_confirmed_at=None)
        runs.update_task(conn, task.id, now, **changes)
        changed = [wire for wire, before, after in (
            ("parameters", task.parameters, params),
            ("createdByAgentId", task.created_by, owner),
            ("summary", task.summary, changes.get("summary", task.summary)),
        ) if before != after]  # fmt: skip
        batch.event(
            event.TaskUpdatedData(changed=changed, summary=changes.get("summary", task.summary),
                                  parameters_hash=new_hash, confirmation_voided=voided),
            agent_id=owner, task_id=task.id,
        )  # fmt: skip


def _wake(
    services: Services,
    conn: Connection,
    tenant_id: str,
    run_id: str,
    conversation_id: str,
    batch: Batch,
) -> None:
    """Queue the run's job; if this process's worker gets it, start its first tasks now."""
    scheduler.wake(services, conn, tenant_id, run_id, conversation_id, batch)
    for adopted in batch.adopted:
        if adopted.kind is JobKind.RUN and adopted.payload.get("runId") == run_id:
            run_job.start_in(services, conn, adopted, batch)


async def approve(
    services: Services,
    tenant_id: str,
    run_id: str,
    edits: list[dict[str, Any]] | None = None,
    *,
    turn_id: str | None = None,
) -> run.Run:
    """Approve a run awaiting approval (after optional edits); the scheduler starts it."""
    conversation_id = await services.db.read(
        lambda conn: runs.get(conn, tenant_id, run_id).conversation_id
    )
    batch = Batch(conversation_id, turn_id, run_id=run_id)
    chief = services.roster[0]

    approved: list[run.Run] = []

    def go(conn: Connection) -> None:
        current = _awaiting(conn, tenant_id, run_id)
        if edits:
            apply_edits(services, conn, tenant_id, run_id, edits, batch)
        now = services.clock()
        runs.move(conn, tenant_id, run_id, run.RunStatus.RUNNING, now)
        approved.append(current.model_copy(update={"status": run.RunStatus.RUNNING,
                                                   "updated_at": now}))  # fmt: skip
        batch.event(event.RunStatusData(status="running", previous="awaiting_approval"),
                    agent_id=chief.id)  # fmt: skip
        batch.thinking(f"{chief.display_name} is starting the approved run", agent_id=chief.id,
                       phase="execution")  # fmt: skip
        _wake(services, conn, tenant_id, run_id, conversation_id, batch)

    await Recorder(services, tenant_id, conversation_id).write(batch, prepare=go)
    services.wake_worker()
    return approved[0]


async def confirm(services: Services, tenant_id: str, task_id: str, quoted_hash: str) -> run.Task:
    """Record the user's consent to an irreversible task, for exactly these parameters."""
    task = await services.db.read(lambda conn: runs.get_task(conn, tenant_id, task_id))
    batch = Batch(task.conversation_id, None, run_id=task.run_id)

    def go(conn: Connection) -> None:
        status = runs.lock(conn, task.run_id, services.clock())  # before the task row, as steps do
        current = runs.get_task(conn, tenant_id, task_id)
        if current.is_reversible_by_system:
            raise errors.Conflict("this task can be undone by the system; it needs no confirmation")
        if current.status not in (run.TaskStatus.AWAITING_CONFIRMATION, run.TaskStatus.OPEN):
            raise errors.Conflict(f"task {task_id} is {current.status.value}; nothing to confirm")
        if quoted_hash != current.parameters_hash:
            raise errors.Conflict(
                "the parameters changed since you saw them; review the task and confirm again",
                details={"parametersHash": current.parameters_hash, "code": "stale_hash"},
            )
        now = services.clock()
        runs.update_task(conn, task_id, now, confirmed_hash=quoted_hash,
                         irreversible_confirmed_at=now)  # fmt: skip
        if current.status is run.TaskStatus.AWAITING_CONFIRMATION:
            runs.move_task(conn, tenant_id, task_id, run.TaskStatus.OPEN, now)
            batch.event(event.TaskStatusData(status="open", previous="awaiting_confirmation"),
                        agent_id=current.created_by, task_id=task_id)  # fmt: skip
        batch.thinking("The user confirmed an irreversible step", agent_id=current.created_by,
                       phase="execution", group=current.step_group)  # fmt: skip
        if status is run.RunStatus.RUNNING:
            _wake(services, conn, tenant_id, task.run_id, task.conversation_id, batch)

    await Recorder(services, tenant_id, task.conversation_id).write(batch, prepare=go)
    services.wake_worker()
    return await services.db.read(lambda conn: runs.get_task(conn, tenant_id, task_id))


async def cancel(services: Services, tenant_id: str, run_id: str) -> run.Run:
    """Cancel a run (idempotent)."""
    conversation_id = await services.db.read(
        lambda conn: runs.get(conn, tenant_id, run_id).conversation_id
    )
    batch = Batch(conversation_id, None, run_id=run_id)

    def go(conn: Connection) -> None:
        scheduler.cancel_run(services, conn, tenant_id, run_id, batch)

    await Recorder(services, tenant_id, conversation_id).write(batch, prepare=go)
    services.wake_worker()
    return await services.db.read(lambda conn: runs.get(conn, tenant_id, run_id))


async def _control(services: Services, tenant_id: str, run_id: str, step: Any) -> run.Run:
    conversation_id = await services.db.read(
        lambda conn: runs.get(conn, tenant_id, run_id).conversation_id
    )
    batch = Batch(conversation_id, None, run_id=run_id)
    await Recorder(services, tenant_id, conversation_id).write(
        batch, prepare=lambda conn: step(conn, batch)
    )
    services.wake_worker()
    return await services.db.read(lambda conn: runs.get(conn, tenant_id, run_id))


def _switch(
    services: Services,
    conn: Connection,
    batch: Batch,
    tenant_id: str,
    run_id: str,
    source: run.RunStatus,
    target: run.RunStatus,
) -> bool:
    """Move the run from ``source`` to ``target`` and say so; False if it is there already."""
    status = runs.lock(conn, run_id, services.clock())
    if status is target:
        return False
    if status is not source:
        raise errors.Conflict(
            f"run {run_id} is {status.value}; only a {source.value} run can become {target.value}"
        )
    runs.move(conn, tenant_id, run_id, target, services.clock())
    batch.event(
        event.RunStatusData(status=target.value, previous=source.value),
        agent_id=services.roster[0].id,
    )
    return True


RUNNING, PAUSED = run.RunStatus.RUNNING, run.RunStatus.PAUSED


async def pause(services: Services, tenant_id: str, run_id: str) -> run.Run:
    """No new task starts; running ones finish. Pausing a paused run changes nothing."""

    def step(conn: Connection, batch: Batch) -> None:
        if _switch(services, conn, batch, tenant_id, run_id, RUNNING, PAUSED):
            batch.status(
                "The run is paused: no new step starts until you resume it",
                agent_id=services.roster[0].id,
            )

    return await _control(services, tenant_id, run_id, step)


async def resume(services: Services, tenant_id: str, run_id: str) -> run.Run:
    """Continue a paused run. Resuming a running run changes nothing."""

    def step(conn: Connection, batch: Batch) -> None:
        if _switch(services, conn, batch, tenant_id, run_id, PAUSED, RUNNING):
            _wake(services, conn, tenant_id, run_id, batch.conversation_id, batch)

    return await _control(services, tenant_id, run_id, step)


async def preempt(services: Services, tenant_id: str, task_id: str) -> run.Task:
    """Cancel one task (waiting or running); the run goes on without it."""
    task = await services.db.read(lambda conn: runs.get_task(conn, tenant_id, task_id))

    def step(conn: Connection, batch: Batch) -> None:
        now = services.clock()
        status = runs.lock(conn, task.run_id, now)  # before the task row, as steps do
        current = runs.get_task(conn, tenant_id, task_id)
        if current.status in run.TASK_FINAL:
            return
        runs.move_task(
            conn, tenant_id, task_id, run.TaskStatus.CANCELLED, now, error="preempted by the user"
        )
        batch.event(
            event.TaskStatusData(status="cancelled", previous=current.status.value),
            agent_id=current.created_by,
            task_id=task_id,
        )
        if status is run.RunStatus.RUNNING:
            _wake(services, conn, tenant_id, task.run_id, task.conversation_id, batch)

    await _control(services, tenant_id, task.run_id, step)
    return await services.db.read(lambda conn: runs.get_task(conn, tenant_id, task_id))


@dataclass(frozen=True)
class RunView:
    """What a run card shows: the run, its tasks, and the thinking entries of its groups."""

    current: run.Run
    tasks: list[run.Task]
    thinking: list[message.Message]


async def view(services: Services, tenant_id: str, run_id: str) -> RunView:
    """The run with its tasks and thinking, read in one transaction."""

    def load(conn: Connection) -> RunView:
        r = runs.get(conn, tenant_id, run_id)
        return RunView(
            r, runs.tasks_of(conn, run_id), messages.thinking_of_run(conn, tenant_id, run_id)
        )

    return await services.db.read(load)


async def get_task(services: Services, tenant_id: str, task_id: str) -> run.Task:
    """One task (404 if the tenant has no such task)."""
    return await services.db.read(lambda conn: runs.get_task(conn, tenant_id, task_id))
