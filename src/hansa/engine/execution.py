"""Executing one task: re-check the laws, record the intent, call the executor, record the result.

Three steps, each its own transaction guarded by the job's lease:

1. start — the laws again (with earlier results filled in); an irreversible task
   without a confirmation for these exact parameters goes back to the user; the
   task becomes ``in_progress`` (for an irreversible task this is the intent row:
   if the worker dies after it, the task becomes ``ambiguous``, never re-run);
2. the executor runs, outside any transaction;
3. finish — ``completed`` with its result, or ``failed`` with a plain reason,
   or back to ``open`` for another attempt of a reversible task; then the
   scheduler advances the run.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from pydantic import BaseModel
from sqlalchemy import Connection

from hansa import errors
from hansa.domain import event, job, run
from hansa.domain.job import Job
from hansa.domain.llm_call import LlmCall
from hansa.domain.project import ProjectContext
from hansa.engine import laws, scheduler
from hansa.engine.connectors import connectors_for
from hansa.engine.context import build_project_context
from hansa.engine.faults import crash_point
from hansa.engine.llm import CallScope, RecordedCall
from hansa.engine.recorder import Batch, Recorder
from hansa.engine.services import Services
from hansa.models.base import ChatMessage, ModelSettings, RequestParams
from hansa.store import llm_calls, queue, runs
from hansa.tasks.base import TaskContext, TaskFailed, TaskType


@dataclass
class _Started:
    task: run.Task
    task_type: TaskType[Any]
    params: BaseModel
    project: ProjectContext
    outputs: dict[str, dict[str, Any]]


@dataclass
class _Reports:
    batch: Batch
    task: run.Task
    calls: list[LlmCall] = field(default_factory=list)

    async def __call__(
        self,
        action: str,
        entity_type: str,
        entity_name: str,
        status: str,
        entity_id: str | None = None,
        patch: dict[str, Any] | None = None,
    ) -> None:
        name = f"{action} {entity_type} “{entity_name}”: {status}"
        self.batch.event(
            event.OperationData(name=name), agent_id=self.task.created_by, task_id=self.task.id
        )
        if patch is not None and entity_id is not None:
            self.batch.event(
                event.EntityPatchData(entity=entity_type, entity_id=entity_id, patch=patch),
                agent_id=self.task.created_by,
                task_id=self.task.id,
            )


def _outputs(tasks: list[run.Task]) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for t in tasks:
        if t.status is run.TaskStatus.COMPLETED and t.result is not None:
            found[t.id] = t.result
            if t.metadata.get("ref"):
                found[str(t.metadata["ref"])] = t.result
    return found


async def run_task_job(services: Services, claimed: Job) -> None:
    """Execute the task a job stands for."""
    task_id = str(claimed.payload["taskId"])
    tenant_id = claimed.tenant_id
    first = await services.db.read(lambda conn: runs.get_task(conn, tenant_id, task_id))
    recorder = Recorder(services, tenant_id, first.conversation_id, claimed)
    batch = Batch(first.conversation_id, None, run_id=first.run_id)
    started: list[_Started] = []

    def start(conn: Connection) -> None:
        if claimed.attempts > claimed.max_attempts:
            task = runs.get_task(conn, tenant_id, task_id)
            if task.status in (run.TaskStatus.OPEN, run.TaskStatus.IN_PROGRESS):
                message = "the step was interrupted too many times"
                _fail(services, conn, tenant_id, task, message, batch, services.clock())
            queue.finish(conn, claimed, services.clock())
            return
        result = _start(services, conn, tenant_id, task_id, batch)
        if result is None:
            queue.finish(conn, claimed, services.clock())
        else:
            started.append(result)

    await recorder.write(batch, prepare=start)
    if not started:
        return
    crash_point(services, "task.before_execute")
    await _execute(services, recorder, claimed, started[0])


def _start(
    services: Services, conn: Connection, tenant_id: str, task_id: str, batch: Batch
) -> _Started | None:
    now = services.clock()
    task = runs.get_task(conn, tenant_id, task_id)
    agent = services.agent(task.created_by)
    if task.status is run.TaskStatus.IN_PROGRESS and not task.is_reversible_by_system:
        # a worker died between the irreversible call and its result: ask, never repeat
        runs.move_task(
            conn,
            tenant_id,
            task_id,
            run.TaskStatus.AMBIGUOUS,
            now,
            error="the outcome of this irreversible step is unknown",
        )
        batch.event(
            event.TaskStatusData(status="ambiguous", previous="in_progress"),
            agent_id=agent.id,
            task_id=task_id,
        )
        scheduler.advance(services, conn, tenant_id, task.run_id, batch)
        return None
    if task.status not in (run.TaskStatus.OPEN, run.TaskStatus.IN_PROGRESS):
        return None
    if runs.get(conn, tenant_id, task.run_id).status is not run.RunStatus.RUNNING:
        if task.status is run.TaskStatus.OPEN:  # paused: the scheduler queues it again on resume
            runs.update_task(conn, task_id, now, scheduled_at=None)
        return None
    task_type = services.registry.get(task.task_type)
    project = build_project_context(conn, tenant_id, task.project_id)
    outputs = _outputs(runs.tasks_of(conn, task.run_id))
    try:
        params = laws.resolve_refs(task.parameters, outputs)
        verdict = laws.judge(services.registry, task.task_type, params, agent, project)
        verdict.raise_for_refusal()
    except errors.UserError as exc:
        _fail(services, conn, tenant_id, task, exc.message, batch, now)
        return None
    if not verdict.reversible and task.confirmed_hash != task.parameters_hash:
        runs.update_task(conn, task_id, now, scheduled_at=None)
        scheduler.advance(services, conn, tenant_id, task.run_id, batch)  # holds it for consent
        return None
    previous = task.status.value
    if task.status is run.TaskStatus.IN_PROGRESS:  # a takeover: run the reversible task again
        runs.move_task(conn, tenant_id, task_id, run.TaskStatus.OPEN, now)
    runs.move_task(conn, tenant_id, task_id, run.TaskStatus.IN_PROGRESS, now, attempt=True)
    batch.event(
        event.TaskStatusData(status="in_progress", previous=previous),
        agent_id=agent.id,
        task_id=task_id,
    )
    batch.thinking(
        f"{agent.display_name} is working on: {task.summary}",
        agent_id=agent.id,
        phase="execution",
        group=task.step_group,
    )
    assert verdict.params is not None
    return _Started(task, task_type, verdict.params, project, outputs)


async def _execute(services: Services, recorder: Recorder, claimed: Job, started: _Started) -> None:
    task = started.task
    batch = Batch(task.conversation_id, None, run_id=task.run_id)
    reports = _Reports(batch, task)
    ctx = TaskContext(
        tenant_id=claimed.tenant_id,
        project_id=task.project_id,
        task_id=task.id,
        idempotency_key=task.idempotency_key,
        project_config=started.project.config,
        connectors=connectors_for(services, claimed.tenant_id, started.project),
        outputs=started.outputs,
        report=reports,
        generate=_generator(services, claimed.tenant_id, task, reports),
    )
    outcome: dict[str, Any] | None = None
    failure: TaskFailed | None = None
    try:
        outcome = await asyncio.wait_for(
            started.task_type.executor(started.params, ctx), services.settings.task_timeout_seconds
        )
    except TaskFailed as exc:
        failure = exc
    except TimeoutError:
        failure = TaskFailed(
            "the step took too long and was stopped", code="timeout", retryable=True
        )
    except errors.HansaError as exc:
        failure = TaskFailed(exc.message, code=exc.code)
    except Exception as exc:  # an executor bug: the run fails truthfully, the worker lives
        failure = TaskFailed(
            f"an unexpected error stopped the step ({type(exc).__name__})", code="internal_error"
        )

    crash_point(services, "task.after_execute")

    def finish(conn: Connection) -> None:
        now = services.clock()
        for call in reports.calls:
            llm_calls.record(conn, call)
        if runs.get_task(conn, claimed.tenant_id, task.id).status is run.TaskStatus.CANCELLED:
            batch.thinking(
                "A preempted step finished; its result is set aside",
                agent_id=task.created_by,
                phase="execution",
                group=task.step_group,
            )
            queue.finish(conn, claimed, now)
            return
        if failure is None:
            runs.move_task(
                conn, claimed.tenant_id, task.id, run.TaskStatus.COMPLETED, now, result=outcome
            )
            batch.event(
                event.TaskStatusData(status="completed", previous="in_progress", result=outcome),
                agent_id=task.created_by,
                task_id=task.id,
            )
        elif _retry(services, started, failure, task):
            delay = min(30.0, 0.5 * 2 ** (task.attempts)) * random.uniform(0.8, 1.2)
            runs.move_task(
                conn, claimed.tenant_id, task.id, run.TaskStatus.OPEN, now, error=failure.message
            )
            batch.event(
                event.TaskStatusData(status="open", previous="in_progress"),
                agent_id=task.created_by,
                task_id=task.id,
            )
            batch.thinking(
                f"Retrying after a temporary problem: {failure.message}",
                agent_id=task.created_by,
                phase="execution",
                group=task.step_group,
            )
            queue.enqueue(
                conn,
                claimed.tenant_id,
                job.JobKind.TASK,
                {"taskId": task.id},
                now,
                run_at=now + timedelta(seconds=delay),
            )
        else:
            _fail(
                services,
                conn,
                claimed.tenant_id,
                task,
                failure.message,
                batch,
                now,
                code=failure.code,
            )
            queue.finish(conn, claimed, now)  # _fail advanced the run already
            return
        scheduler.advance(services, conn, claimed.tenant_id, task.run_id, batch)
        queue.finish(conn, claimed, now)

    await recorder.write(batch, prepare=finish)
    services.wake_worker()


def _retry(services: Services, started: _Started, failure: TaskFailed, task: run.Task) -> bool:
    return (
        failure.retryable
        and started.task_type.retryable
        and task.is_reversible_by_system
        and task.attempts + 1 < services.settings.task_max_attempts
    )


def _fail(
    services: Services,
    conn: Connection,
    tenant_id: str,
    task: run.Task,
    message: str,
    batch: Batch,
    now: datetime,
    *,
    code: str = "refused",
) -> None:
    current = runs.get_task(conn, tenant_id, task.id)
    if current.status is run.TaskStatus.OPEN:
        runs.move_task(conn, tenant_id, task.id, run.TaskStatus.IN_PROGRESS, now, attempt=True)
    runs.move_task(
        conn,
        tenant_id,
        task.id,
        run.TaskStatus.FAILED,
        now,
        error=message,
        result={"error": {"code": code, "message": message}},
    )
    batch.event(
        event.TaskStatusData(
            status="failed",
            previous="in_progress",
            result={"error": {"code": code, "message": message}},
        ),
        agent_id=task.created_by,
        task_id=task.id,
    )
    batch.thinking(
        f"Marking the step as failed: {message}",
        agent_id=task.created_by,
        phase="execution",
        group=task.step_group,
    )
    scheduler.advance(services, conn, tenant_id, task.run_id, batch)


def _generator(services: Services, tenant_id: str, task: run.Task, reports: _Reports) -> Any:
    agent = services.agent(task.created_by)

    async def generate(instructions: str, material: str) -> str:
        scope = CallScope(
            tenant_id=tenant_id,
            conversation_id=task.conversation_id,
            run_id=task.run_id,
            node_id=task.id,
            agent_id=agent.id,
        )
        call = RecordedCall(services.model, scope, services.clock)
        prompt = [
            ChatMessage(
                "system",
                f"You are {agent.display_name}, the {agent.role}. "
                f"{agent.role_summary} {instructions}",
            ),
            ChatMessage("user", material),
        ]
        settings = ModelSettings(temperature=agent.model_settings.temperature, max_tokens=400)
        parts: list[str] = []
        try:
            async for delta in call.stream(prompt, settings, RequestParams(purpose="draft")):
                parts.append(delta)
        except errors.HansaError as exc:
            raise TaskFailed(
                f"the language model did not answer ({exc.code})",
                code="model_failed",
                retryable=True,
            ) from exc
        finally:
            if call.record is not None:
                reports.calls.append(call.record)
        return "".join(parts)

    return generate
