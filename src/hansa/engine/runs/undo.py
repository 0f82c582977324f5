"""Undo and rollback (law of no return): a completed step's undo, as a recorded step.

``POST /api/tasks/{id}/undo`` undoes one completed step of an ended run;
``POST /api/runs/{id}/rollback`` undoes every completed step that can be undone, newest
first, and the run becomes ``rolled_back``. Each undo is checked by the laws again (the
step's agent still holds the capability, the project still allows the type, the step's
parameters as it ran), runs its task type's ``undo`` through the executor path the step
itself took (``invoke.perform``: connectors, time limit, reported operations), and is
recorded in a transaction of its own: ``task_status`` ``undone`` with what the undo
returned, a status chip, and at the end Hans's summary. Decision 0016 says why the undo
runs in the request.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, TypeVar

from sqlalchemy import Connection

from hansa import errors
from hansa.domain import event, message, run, secrets
from hansa.engine import laws
from hansa.engine.runs.asking import Doer
from hansa.engine.runs.change import RunChange
from hansa.engine.runs.connectors import secret_box
from hansa.engine.runs.invoke import Execution, perform
from hansa.engine.runs.judge import Judge, UnknownAgent
from hansa.engine.runtime.recorder import Batch, Recorder
from hansa.engine.runtime.services import Services
from hansa.store import llm_calls, runs
from hansa.tasks.base import TaskFailed
from hansa.tasks.registry import TaskRegistry

T = TypeVar("T")

UNDO = "undo"
"""The task metadata key of an undo: ``{startedAt, lawChecks, finishedAt | error}``."""


class NotUndoable(errors.Conflict):
    """This step, or this run, has nothing the system can undo (HTTP 409)."""

    code = "not_undoable"


class UndoFailed(errors.Conflict):
    """The undo of a step did not work; the step stays as it was (HTTP 409)."""

    code = "undo_failed"


def undoable(registry: TaskRegistry, tasks: list[run.Task]) -> list[run.Task]:
    """The completed tasks whose undo the system can run, newest first."""
    found = [t for t in tasks if _refusal(registry, t) is None]
    return sorted(found, key=lambda t: (t.step_group, t.updated_at, t.sequence_order), reverse=True)


def _refusal(registry: TaskRegistry, task: run.Task) -> str | None:
    """Why ``task`` cannot be undone; None when it can."""
    if task.status is run.TaskStatus.UNDONE:
        return f"“{task.summary}” is undone already"
    if task.status is not run.TaskStatus.COMPLETED:
        return f"“{task.summary}” is {task.status.value}; only a completed step can be undone"
    if not task.is_reversible_by_system:
        return (
            f"“{task.summary}” cannot be undone: {task.task_type} is irreversible "
            "(it ran with your confirmation)"
        )
    if task.task_type not in registry or registry.get(task.task_type).undo is None:
        return f"“{task.summary}” changed nothing that needs undoing"
    return None


def _irreversible(tasks: list[run.Task]) -> list[run.Task]:
    done = run.TaskStatus.COMPLETED
    return [t for t in tasks if t.status is done and not t.is_reversible_by_system]


@dataclass
class _Undo:
    """One prepared undo: the task as it stood and the execution of its undo."""

    task: run.Task
    agent_name: str
    execution: Execution


async def undo_task(services: Services, tenant_id: str, task_id: str) -> run.Task:
    """Undo one completed step of an ended run; the task, now ``undone``.

    Raises:
        errors.NotFound: The tenant has no such task.
        NotUndoable: The step is not completed, irreversible, or changed nothing.
        UndoFailed: Its undo failed (recorded; the step stays ``completed``).
    """
    task = await services.db.read(lambda conn: runs.get_task(conn, tenant_id, task_id))
    await _undo(services, tenant_id, task.run_id, task.conversation_id, only=task_id)
    return await services.db.read(lambda conn: runs.get_task(conn, tenant_id, task_id))


async def rollback(services: Services, tenant_id: str, run_id: str) -> None:
    """Undo every completed step of an ended run that can be undone, newest first; the run
    becomes ``rolled_back``.

    Raises:
        errors.NotFound: The tenant has no such run.
        NotUndoable: The run has not ended, or nothing of it can be undone.
        UndoFailed: An undo failed: the ones before it stay undone, the rest as they were.
    """
    r = await services.db.read(lambda conn: runs.get(conn, tenant_id, run_id))
    await _undo(services, tenant_id, run_id, r.conversation_id, only=None)


async def _undo(
    services: Services, tenant_id: str, run_id: str, conversation_id: str, only: str | None
) -> None:
    prepared = await _transaction(
        services, tenant_id, run_id, conversation_id, lambda c: _prepare(c, only)
    )
    undone: list[_Undo] = []
    failure: tuple[_Undo, TaskFailed] | None = None
    for u in prepared:
        result, failed = await perform(services, tenant_id, u.execution)
        record = functools.partial(_record, u=u, result=result, failed=failed)
        await _transaction(services, tenant_id, run_id, conversation_id, record)
        if failed is not None:
            failure = (u, failed)
            break
        undone.append(u)
    left = prepared[len(undone) + (failure is not None) :]
    await _transaction(
        services,
        tenant_id,
        run_id,
        conversation_id,
        lambda c: _finish(c, undone, failure, left, rollback=only is None),
    )
    if failure is not None:
        u, failed = failure
        raise UndoFailed(
            f"could not undo “{u.task.summary}”: {failed.message}",
            details={"taskId": u.task.id, "reason": failed.code},
        )


async def _transaction(
    services: Services,
    tenant_id: str,
    run_id: str,
    conversation_id: str,
    step: Callable[[RunChange], T],
) -> T:
    """``step`` in a transaction of its own, holding the run; what it returned."""
    batch = Batch(conversation_id, None, run_id=run_id)

    def write(conn: Connection) -> T:
        return step(RunChange.of(services, conn, tenant_id, run_id, batch))

    return await Recorder(services, tenant_id, conversation_id).write_then(batch, write)


def _prepare(change: RunChange, only: str | None) -> list[_Undo]:
    """Check the run, the steps and the laws; mark each step's undo as started."""
    services, conn, now = change.services, change.conn, change.now
    r = runs.locked(conn, change.run_id, now)
    if r.status not in run.RUN_ENDED:
        raise NotUndoable(
            f"run {r.id} is {r.status.value}; its steps can be undone once it has ended",
            details={"status": r.status.value},
        )
    tasks = runs.tasks_of(conn, r.id)
    registry = services.registry
    if only is not None:
        (task,) = [t for t in tasks if t.id == only]
        refusal = _refusal(registry, task)
        if refusal is not None:
            raise NotUndoable(refusal, details={"taskId": task.id, "status": task.status.value})
        chosen = [task]
    else:
        chosen = undoable(registry, tasks)
        if not chosen:
            raise NotUndoable(f"nothing of the run “{r.title}” can be undone")
    busy = [t for t in chosen if _under_way(t, change)]
    if busy:
        raise errors.Conflict(f"an undo of “{busy[0].summary}” is under way")
    outputs: dict[str, Any] = {}
    for t in tasks:  # as the run's steps saw them: by task id and by the plan's step ref
        if t.status is run.TaskStatus.COMPLETED and t.result is not None:
            outputs[t.id] = t.result
            if t.metadata.get("ref"):
                outputs[str(t.metadata["ref"])] = t.result
    judge = Judge(change.services, change.conn, change.tenant_id)
    return [_prepare_one(change, t, outputs, judge) for t in chosen]


def _under_way(task: run.Task, change: RunChange) -> bool:
    """Whether another request started this step's undo and may still be running it."""
    mark = task.metadata.get(UNDO) or {}
    if "startedAt" not in mark or "finishedAt" in mark or "error" in mark:
        return False
    limit = timedelta(seconds=change.services.settings.task_timeout_seconds)
    return change.now - datetime.fromisoformat(str(mark["startedAt"])) < limit


def _prepare_one(
    change: RunChange,
    task: run.Task,
    outputs: dict[str, Any],
    judge: Judge,
) -> _Undo:
    services, conn = change.services, change.conn
    params = laws.resolve_refs(secret_box(services).open(task.parameters), outputs)
    try:
        judged = judge.task(task.task_type, params, task.created_by, task.project_id)
    except UnknownAgent as exc:  # removed since: nobody may undo in its name
        raise NotUndoable(exc.message) from exc
    agent, project, verdict = judged.agent, judged.project, judged.verdict
    verdict.raise_for_refusal()
    registry = services.registry
    assert verdict.params is not None
    mark = {"startedAt": change.now.isoformat(), "lawChecks": verdict.checks}
    runs.update_task(conn, task.id, change.now, metadata={**task.metadata, UNDO: mark})
    change.batch.thinking(
        f"{agent.display_name} is undoing: {task.summary}",
        agent_id=agent.id,
        phase=message.Phase.EXECUTION,
        group=task.step_group,
    )
    task_type = registry.get(task.task_type)
    assert task_type.undo is not None
    execution = Execution(
        dataclasses.replace(task_type, executor=task_type.undo),
        verdict.params,
        project,
        task.project_id,
        Doer(task.conversation_id, task.created_by, task.run_id, task.id),
        task.id,
        f"{task.idempotency_key}-undo",
        {**outputs, "self": task.result or {}},
        Batch(task.conversation_id, None, run_id=task.run_id),
        [],
    )
    return _Undo(task, agent.display_name, execution)


def _record(
    change: RunChange, u: _Undo, result: dict[str, Any] | None, failed: TaskFailed | None
) -> None:
    """One undo's outcome: ``undone`` with its result, or the failure; a status chip."""
    conn, now, batch = change.conn, change.now, change.batch
    runs.lock(conn, change.run_id, now)
    task = runs.get_task(conn, change.tenant_id, u.task.id)
    for call in u.execution.calls:
        llm_calls.record(conn, call)
    batch.items.extend(u.execution.batch.items)
    mark = dict(task.metadata.get(UNDO) or {})
    if failed is not None:
        mark["error"] = {"code": failed.code, "message": failed.message}
        runs.update_task(conn, task.id, now, metadata={**task.metadata, UNDO: mark})
        batch.thinking(
            f"Could not undo the step: {failed.message}",
            agent_id=task.created_by,
            phase=message.Phase.EXECUTION,
            group=task.step_group,
        )
        batch.status(f"Could not undo: {task.summary}", agent_id=task.created_by)
        return
    mark["finishedAt"] = now.isoformat()
    runs.update_task(conn, task.id, now, metadata={**task.metadata, UNDO: mark})
    kept = {**(task.result or {}), "undone": result or {}}
    runs.move_task(conn, change.tenant_id, task.id, run.TaskStatus.UNDONE, now, result=kept)
    moved = event.TaskStatusData(
        status=run.TaskStatus.UNDONE, previous=task.status, result=secrets.mask(kept)
    )
    batch.event(moved, agent_id=task.created_by, task_id=task.id)
    batch.status(f"{u.agent_name} undid: {task.summary}", agent_id=task.created_by)


def _finish(
    change: RunChange,
    undone: list[_Undo],
    failure: tuple[_Undo, TaskFailed] | None,
    left: list[_Undo],
    *,
    rollback: bool,
) -> None:
    """Clear the marks of undos never tried; a rollback moves the run; Hans sums it up."""
    services, conn, now, batch = change.services, change.conn, change.now, change.batch
    r = runs.locked(conn, change.run_id, now)
    for u in left:
        task = runs.get_task(conn, change.tenant_id, u.task.id)
        mark = {**(task.metadata.get(UNDO) or {}), "error": {"code": "not_tried"}}
        runs.update_task(conn, task.id, now, metadata={**task.metadata, UNDO: mark})
    status = r.status
    hans = services.supervisor
    if rollback and failure is None and r.status in run.RUN_ENDED:
        status = run.RunStatus.ROLLED_BACK
        runs.move(conn, change.tenant_id, r.id, status, now)
        batch.event(event.RunStatusData(status=status, previous=r.status), agent_id=hans.id)
    tasks = runs.tasks_of(conn, r.id)
    text = _summary(r, undone, failure, _irreversible(tasks), rollback=rollback)
    batch.thinking(
        f"{hans.display_name} is summing up the undo",
        agent_id=hans.id,
        phase=message.Phase.VALIDATION,
    )
    batch.message(
        message.Kind.ASSISTANT,
        message.Author.ASSISTANT,
        text,
        agent_id=hans.id,
        metadata={
            "runId": r.id,
            "runStatus": status.value,
            "undone": [u.task.id for u in undone],
            "undoFailed": failure[0].task.id if failure else None,
        },
    )


def _summary(
    r: run.Run,
    undone: list[_Undo],
    failure: tuple[_Undo, TaskFailed] | None,
    irreversible: list[run.Task],
    *,
    rollback: bool,
) -> str:
    lines: list[str] = []
    if rollback and failure is None:
        lines.append(f"I rolled back “{r.title}”. Undone, newest first:")
    elif undone:
        lines.append("Undone:" if failure is None else "These steps were undone:")
    lines += [f"- {u.agent_name}: {u.task.summary}" for u in undone]
    if failure is not None:
        u, failed = failure
        lines.append(
            f"I could not undo “{u.task.summary}”: {failed.message}. It stays as it was; "
            "tell me how to go on, or try the undo again in a moment."
        )
    if rollback and irreversible:
        lines.append(
            "These steps cannot be undone and stay as they are: "
            + "; ".join(t.summary for t in irreversible)
            + "."
        )
    return "\n".join(lines)
