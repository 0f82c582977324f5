"""Runs from plans or from the API: create (checked by the laws), approve, confirm, cancel."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from sqlalchemy import Connection

from hansa import errors
from hansa.domain import conversation, event, message, run, secrets
from hansa.domain.base import new_id
from hansa.domain.plan import Plan
from hansa.engine.runs import run_job, scheduler, story
from hansa.engine.runs.change import RunChange
from hansa.engine.runs.connectors import secret_box
from hansa.engine.runs.drafts import (
    TaskDraft,
    judge_drafts,
    new_task,
)
from hansa.engine.runtime.recorder import Batch, Recorder, Step
from hansa.engine.runtime.services import Services
from hansa.store import conversations, messages, projects, runs

T = TypeVar("T")


@dataclass(frozen=True)
class NewRun:
    """What a run is created from: its conversation, title, project and proposed tasks."""

    conversation_id: str
    title: str
    project_id: str | None
    drafts: list[TaskDraft]
    plan: Plan | None = None
    """The plan it was made from, kept in the run's metadata for the panel."""
    metadata: dict[str, Any] = field(default_factory=dict)
    """More for the run's metadata (a graph run: its graph, version and inputs)."""
    opened: bool = False
    """The run exists already, in ``planning`` (``open_planning``): it gets its plan now."""


def open_planning(change: RunChange, conversation_id: str, title: str) -> run.Run:
    """Store a run in ``planning`` with no tasks yet: Hans is asking what the plan needs
    (seed 000 §12.1: ``runCreated`` comes back with the questions). ``store_run`` with
    ``NewRun.opened`` gives it its plan."""
    hans = change.services.supervisor.id
    opened = run.Run(
        id=change.run_id,
        tenant_id=change.tenant_id,
        conversation_id=conversation_id,
        project_id=None,
        created_by=hans,
        title=title,
        status=run.RunStatus.PLANNING,
        created_at=change.now,
        updated_at=change.now,
        metadata={},
    )
    runs.create(change.conn, opened, [])
    change.batch.event(event.RunCreatedData(title=title, status=opened.status), agent_id=hans)
    return opened


def store_run(change: RunChange, new: NewRun) -> run.Run:
    """Check every task against the laws, then store the run (awaiting approval) and its tasks.

    A scope refusal or a missing parameter refuses the whole run, naming the law. A run
    opened in planning (``new.opened``) gets the tasks and moves to awaiting approval.
    """
    services, conn, tenant_id = change.services, change.conn, change.tenant_id
    drafts = new.drafts
    if not drafts:
        raise errors.InvalidInput("a run needs at least one task", details={"field": "tasks"})
    if len(drafts) > services.settings.max_tasks_per_run:
        raise errors.InvalidInput(
            f"a run has at most {services.settings.max_tasks_per_run} tasks",
            details={"field": "tasks"},
        )
    conversations.get(conn, tenant_id, new.conversation_id)
    named = [new.project_id, *(d.project_id for d in drafts)]
    for project_id in sorted({p for p in named if p is not None}):
        projects.get(conn, tenant_id, project_id)  # another tenant's project: not found
    verdicts = judge_drafts(services, conn, tenant_id, drafts)
    for verdict in verdicts:
        verdict.raise_for_refusal()
    now = change.now
    plan = new.plan
    shown = secrets.mask(plan.model_dump(mode="json", by_alias=True)) if plan else None
    metadata: dict[str, Any] = {**new.metadata, **({"plan": shown} if plan else {})}
    hans = services.supervisor.id
    new_run = run.Run(
        id=change.run_id,
        tenant_id=tenant_id,
        conversation_id=new.conversation_id,
        project_id=new.project_id,
        created_by=hans,
        title=new.title,
        status=run.RunStatus.AWAITING_APPROVAL,
        created_at=now,
        updated_at=now,
        metadata=metadata,
    )
    box = secret_box(services)
    ids = {d.node_id: new_id() for d in drafts if d.node_id is not None}
    tasks = [new_task(new_run, d, v, now, box, ids) for d, v in zip(drafts, verdicts, strict=True)]
    batch = change.batch
    if new.opened:
        _fill_planning(change, new_run, tasks)
    else:
        runs.create(conn, new_run, tasks)
        graph_id = (new.metadata.get("graph") or {}).get("id")
        announced = event.RunCreatedData(title=new.title, status=new_run.status, graph_id=graph_id)
        batch.event(announced, agent_id=hans)
    for t in tasks:
        created = event.TaskCreatedData(
            task_type=t.task_type, step_group=t.step_group, summary=t.summary
        )
        batch.event(created, agent_id=t.created_by, task_id=t.id)
    story.created(change, new_run, tasks)
    return new_run


def _fill_planning(change: RunChange, planned: run.Run, tasks: list[run.Task]) -> None:
    conn, tenant_id = change.conn, change.tenant_id
    current = runs.locked(conn, change.run_id, change.now)
    if current.tenant_id != tenant_id or current.status is not run.RunStatus.PLANNING:
        raise errors.Conflict(
            f"run {change.run_id} is {current.status.value}, not planning",
            details={"status": current.status.value},
        )
    runs.set_plan(conn, planned)
    runs.add_tasks(conn, tenant_id, tasks)
    runs.move(conn, tenant_id, change.run_id, planned.status, change.now)
    shown = event.RunStatusData(status=planned.status, previous=current.status)
    change.batch.event(shown, agent_id=change.services.supervisor.id)


def on_run(
    services: Services,
    tenant_id: str,
    run_id: str,
    batch: Batch,
    change: Callable[[RunChange], T],
) -> Callable[[Connection], T]:
    """``change`` as a step of ``batch``'s transaction, holding run ``run_id``; the step
    returns what ``change`` returned (``Batch.then``'s ``Later``)."""

    def step(conn: Connection) -> T:
        return change(RunChange.of(services, conn, tenant_id, run_id, batch))

    return step


async def create_run(
    services: Services, tenant_id: str, new: NewRun
) -> tuple[str, list[event.Event]]:
    """``store_run`` in a transaction of its own: the run's id and the events announcing it."""
    batch = Batch(new.conversation_id, None)
    run_id = new_id()
    batch.then(on_run(services, tenant_id, run_id, batch, lambda change: store_run(change, new)))
    stored = await Recorder(services, tenant_id, new.conversation_id).write(batch)
    _known(tenant_id, run_id, new.conversation_id)
    return run_id, stored


async def create_viewed(services: Services, tenant_id: str, new: NewRun) -> RunView:
    """``create_run``, answering the new run as ``view`` reads it, in the same transaction."""
    batch = Batch(new.conversation_id, None)
    run_id = new_id()
    batch.then(on_run(services, tenant_id, run_id, batch, lambda change: store_run(change, new)))
    shown = batch.last(lambda conn: _load(conn, tenant_id, run_id))
    await Recorder(services, tenant_id, new.conversation_id).write(batch)
    _known(tenant_id, run_id, new.conversation_id)
    return shown.value


def _awaiting(change: RunChange) -> run.Run:
    current = runs.get(change.conn, change.tenant_id, change.run_id)
    if current.status is not run.RunStatus.AWAITING_APPROVAL:
        raise errors.Conflict(
            f"run {change.run_id} is {current.status.value}, not awaiting approval",
            details={"status": current.status.value},
        )
    return current


def apply_edits(change: RunChange, edits: list[dict[str, Any]]) -> None:
    """Change steps before approval: parameters (merged), owner, summary. Laws re-checked;
    each edited step is announced (``task_updated``)."""
    conn = change.conn
    tasks = {t.id: t for t in runs.tasks_of(conn, change.run_id)}
    for edit in edits:
        task = tasks.get(str(edit.get("taskId")))
        if task is None:
            raise errors.InvalidInput(
                f"edit names task {edit.get('taskId')!r}, which is not in this run",
                details={"field": "edits.taskId"},
            )
        _edit(change, task, edit)


def _edit(change: RunChange, task: run.Task, edit: dict[str, Any]) -> None:
    sent = dict(edit.get("parameters") or {})
    params = secrets.keep_secrets(sent, task.parameters, "parameters", partial=True)
    box = secret_box(change.services)
    owner = str(edit.get("createdByAgentId") or task.created_by)
    summary = secrets.mask_text(str(edit["summary"])) if "summary" in edit else task.summary
    draft = TaskDraft(
        task.step_group,
        task.task_type,
        box.open(params),
        owner,
        summary,
        project_id=task.project_id,
    )
    (verdict,) = judge_drafts(change.services, change.conn, change.tenant_id, [draft])
    verdict.raise_for_refusal()
    params = box.seal(params)
    changes: dict[str, Any] = {
        "parameters": params,
        "created_by": owner,
        "is_reversible_by_system": verdict.reversible,
        "summary": summary,
    }
    new_hash = run.parameters_hash(params)
    voided = task.confirmed_hash is not None and new_hash != task.confirmed_hash
    if new_hash != task.confirmed_hash:  # changed parameters void consent
        changes.update(confirmed_hash=None, irreversible_confirmed_at=None)
    runs.update_task(change.conn, task.id, change.now, **changes)
    compared = (
        ("parameters", task.parameters, params),
        ("createdByAgentId", task.created_by, owner),
        ("summary", task.summary, summary),
    )
    changed = [wire for wire, before, after in compared if before != after]
    updated = event.TaskUpdatedData(
        changed=changed, summary=summary, parameters_hash=new_hash, confirmation_voided=voided
    )
    change.batch.event(updated, agent_id=owner, task_id=task.id)


def _wake(change: RunChange, conversation_id: str) -> None:
    """Queue the run's job; if this process's worker gets it, start its first tasks now."""
    claimed = scheduler.wake(change, conversation_id)
    if claimed is not None:
        run_job.hand_over(change, claimed)


def approving(
    services: Services,
    tenant_id: str,
    run_id: str,
    batch: Batch,
    edits: list[dict[str, Any]] | None = None,
) -> Step:
    """The approval of a run awaiting it (after optional edits), as a step of ``batch``'s
    transaction: the run becomes ``running`` and the scheduler starts it."""
    return on_run(services, tenant_id, run_id, batch, lambda change: _approve(change, edits))


def _approve(change: RunChange, edits: list[dict[str, Any]] | None) -> None:
    current = _awaiting(change)
    if edits:
        apply_edits(change, edits)
    runs.move(change.conn, change.tenant_id, change.run_id, run.RunStatus.RUNNING, change.now)
    hans = change.services.supervisor
    started = event.RunStatusData(status=run.RunStatus.RUNNING, previous=current.status)
    change.batch.event(started, agent_id=hans.id)
    change.batch.thinking(
        f"{hans.display_name} is starting the approved run",
        agent_id=hans.id,
        phase=message.Phase.EXECUTION,
    )
    story.queued(change)
    _wake(change, current.conversation_id)


def cancelling(services: Services, tenant_id: str, run_id: str, batch: Batch) -> Step:
    """Cancelling a run (idempotent), as a step of ``batch``'s transaction."""
    return on_run(services, tenant_id, run_id, batch, scheduler.cancel_run)


_CONVERSATIONS_KNOWN = 10_000
"""Runs whose conversation this process remembers at most (``_conversation_of``)."""
_conversation_by_run: dict[tuple[str, str], str] = {}


def _known(tenant_id: str, run_id: str, conversation_id: str) -> None:
    if len(_conversation_by_run) >= _CONVERSATIONS_KNOWN:
        _conversation_by_run.pop(next(iter(_conversation_by_run)))  # the oldest
    _conversation_by_run[(tenant_id, run_id)] = conversation_id


async def _conversation_of(services: Services, tenant_id: str, run_id: str) -> str:
    """The run's conversation (NotFound for another tenant's run). A run never changes
    conversation, so this process remembers the runs it created or looked up: approving
    a run created here costs no transaction of its own (decision 0028)."""
    found = _conversation_by_run.get((tenant_id, run_id))
    if found is None:
        found = await services.db.read(
            lambda conn: runs.get(conn, tenant_id, run_id).conversation_id
        )
        _known(tenant_id, run_id, found)
    return found


async def _change(
    services: Services, tenant_id: str, run_id: str, change: Callable[[RunChange], object]
) -> None:
    """Make ``change`` to the run in a transaction of its own."""
    await _changed(services, tenant_id, run_id, change, viewed=False)


async def _change_viewed(
    services: Services, tenant_id: str, run_id: str, change: Callable[[RunChange], object]
) -> RunView:
    """``_change``; the run as ``view`` reads it at the end of that transaction."""
    shown = await _changed(services, tenant_id, run_id, change, viewed=True)
    assert shown is not None
    return shown


async def _changed(
    services: Services,
    tenant_id: str,
    run_id: str,
    change: Callable[[RunChange], object],
    *,
    viewed: bool,
) -> RunView | None:
    conversation_id = await _conversation_of(services, tenant_id, run_id)
    batch = Batch(conversation_id, None, run_id=run_id)
    batch.then(on_run(services, tenant_id, run_id, batch, change))
    shown = batch.last(lambda conn: _load(conn, tenant_id, run_id)) if viewed else None
    await Recorder(services, tenant_id, conversation_id).write(batch)
    return None if shown is None else shown.value


async def approve(
    services: Services,
    tenant_id: str,
    run_id: str,
    edits: list[dict[str, Any]] | None = None,
) -> RunView:
    """Approve a run awaiting approval (after optional edits); the scheduler starts it. The
    run as its approval's transaction left it."""

    def go(change: RunChange) -> None:
        _approve(change, edits)
        _forget_plan(change)

    return await _change_viewed(services, tenant_id, run_id, go)


async def cancel(services: Services, tenant_id: str, run_id: str) -> None:
    """Cancel a run (idempotent)."""

    def go(change: RunChange) -> None:
        scheduler.cancel_run(change)
        _forget_plan(change)

    await _change(services, tenant_id, run_id, go)


def _forget_plan(change: RunChange) -> None:
    """A plan approved or cancelled on its card (not in the chat) is settled too: the
    conversation forgets it and stops waiting, so the next message is a new request, not
    an answer to the plan."""
    conn, tenant, now = change.conn, change.tenant_id, change.now
    cid = runs.get(conn, tenant, change.run_id).conversation_id
    state = conversations.get(conn, tenant, cid).planning
    if state is None or change.run_id not in (state.run_id, state.planning_run_id):
        return
    conversations.set_planning(conn, tenant, cid, None, now)
    waiting = (conversation.State.WAITING_FOR_USER,)
    conversations.move(
        conn, tenant, cid, conversation.State.IDLE, now, strict=False, only_from=waiting
    )


async def confirm(services: Services, tenant_id: str, task_id: str, quoted_hash: str) -> run.Task:
    """Record the user's consent to an irreversible task, for exactly these parameters."""
    task = await get_task(services, tenant_id, task_id)

    def go(change: RunChange) -> None:
        conn, now = change.conn, change.now
        status = runs.lock(conn, task.run_id, now)  # before the task row, as steps do
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
        runs.update_task(
            conn, task_id, now, confirmed_hash=quoted_hash, irreversible_confirmed_at=now
        )
        batch = change.batch
        if current.status is run.TaskStatus.AWAITING_CONFIRMATION:
            runs.move_task(conn, tenant_id, task_id, run.TaskStatus.OPEN, now)
            moved = event.TaskStatusData(status=run.TaskStatus.OPEN, previous=current.status)
            batch.event(moved, agent_id=current.created_by, task_id=task_id)
        batch.thinking(
            "The user confirmed an irreversible step",
            agent_id=current.created_by,
            phase=message.Phase.EXECUTION,
            group=current.step_group,
        )
        if status is run.RunStatus.RUNNING:
            _wake(change, task.conversation_id)

    await _change(services, tenant_id, task.run_id, go)
    return await get_task(services, tenant_id, task_id)


def _switch(change: RunChange, source: run.RunStatus, target: run.RunStatus) -> bool:
    """Move the run from ``source`` to ``target`` and say so; False if it is there already."""
    status = runs.lock(change.conn, change.run_id, change.now)
    if status is target:
        return False
    if status is not source:
        raise errors.Conflict(
            f"run {change.run_id} is {status.value}; "
            f"only a {source.value} run can become {target.value}"
        )
    runs.move(change.conn, change.tenant_id, change.run_id, target, change.now)
    change.batch.event(
        event.RunStatusData(status=target, previous=source),
        agent_id=change.services.supervisor.id,
    )
    return True


RUNNING, PAUSED = run.RunStatus.RUNNING, run.RunStatus.PAUSED


def _pause(change: RunChange) -> None:
    if _switch(change, RUNNING, PAUSED):
        change.batch.status(
            "The run is paused: no new step starts until you resume it",
            agent_id=change.services.supervisor.id,
        )


def _resume(change: RunChange) -> None:
    if _switch(change, PAUSED, RUNNING):
        _wake(change, change.batch.conversation_id)


def pausing(services: Services, tenant_id: str, run_id: str, batch: Batch) -> Step:
    """Pausing a running run, as a step of ``batch``'s transaction."""
    return on_run(services, tenant_id, run_id, batch, _pause)


def resuming(services: Services, tenant_id: str, run_id: str, batch: Batch) -> Step:
    """Resuming a paused run, as a step of ``batch``'s transaction."""
    return on_run(services, tenant_id, run_id, batch, _resume)


async def pause(services: Services, tenant_id: str, run_id: str) -> None:
    """No new task starts; running ones finish. Pausing a paused run changes nothing."""
    await _change(services, tenant_id, run_id, _pause)


async def resume(services: Services, tenant_id: str, run_id: str) -> None:
    """Continue a paused run. Resuming a running run changes nothing."""
    await _change(services, tenant_id, run_id, _resume)


async def preempt(services: Services, tenant_id: str, task_id: str) -> run.Task:
    """Cancel one task (waiting or running); the run goes on without it."""
    task = await get_task(services, tenant_id, task_id)

    def step(change: RunChange) -> None:
        conn, now = change.conn, change.now
        status = runs.lock(conn, task.run_id, now)  # before the task row, as steps do
        current = runs.get_task(conn, tenant_id, task_id)
        if current.status in run.TASK_FINAL:
            return
        runs.move_task(
            conn, tenant_id, task_id, run.TaskStatus.CANCELLED, now, error="preempted by the user"
        )
        change.batch.event(
            event.TaskStatusData(status=run.TaskStatus.CANCELLED, previous=current.status),
            agent_id=current.created_by,
            task_id=task_id,
        )
        if status is run.RunStatus.RUNNING:
            _wake(change, task.conversation_id)

    await _change(services, tenant_id, task.run_id, step)
    return await get_task(services, tenant_id, task_id)


@dataclass(frozen=True)
class RunView:
    """What a run card shows: the run, its tasks, and the thinking entries of its groups."""

    current: run.Run
    tasks: list[run.Task]
    thinking: list[message.Message]


async def view(services: Services, tenant_id: str, run_id: str) -> RunView:
    """The run with its tasks and thinking, read in one transaction."""

    return await services.db.read(_load, tenant_id, run_id)


def _load(conn: Connection, tenant_id: str, run_id: str) -> RunView:
    r = runs.get(conn, tenant_id, run_id)
    return RunView(
        r, runs.tasks_of(conn, run_id), messages.thinking_of_run(conn, tenant_id, run_id)
    )


async def get_task(services: Services, tenant_id: str, task_id: str) -> run.Task:
    """One task (404 if the tenant has no such task)."""
    return await services.db.read(lambda conn: runs.get_task(conn, tenant_id, task_id))
