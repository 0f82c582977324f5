"""Calling one task's executor: its context and connectors, its time limit, its failures.

Nothing here touches the database: what the executor reports (operations, entity
patches, model calls) is collected in the :class:`Outcome`, which the run job
records in its next transaction. ``perform`` runs an :class:`Execution`, which need
not be a stored task: the agent loop runs a turn's tool calls through it too.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from opentelemetry import trace
from pydantic import BaseModel

from hansa import errors, tracing
from hansa.domain import event, message, run, secrets
from hansa.domain.llm_call import LlmCall
from hansa.domain.project import ProjectContext
from hansa.engine.runs import asking
from hansa.engine.runs.asking import Doer
from hansa.engine.runs.connectors import connectors_for
from hansa.engine.runtime.recorder import Batch
from hansa.engine.runtime.services import Services
from hansa.tasks.base import Change, TaskContext, TaskFailed, TaskType


@dataclass
class Started:
    """A task moved to ``in_progress``, with everything its executor needs."""

    task: run.Task
    task_type: TaskType[Any]
    params: BaseModel
    project: ProjectContext
    outputs: dict[str, dict[str, Any]]
    calls: list[LlmCall] = field(default_factory=list)
    """The model calls its execution makes, kept here too: a cut execution has no outcome,
    and its calls are recorded all the same."""
    grounds: tuple[str, ...] = ()
    """What its run was given and found, for Hans's review (``TaskContext.grounds``)."""


@dataclass
class Outcome:
    """What one execution produced: a result or a failure, and what it reported."""

    task: run.Task
    batch: Batch
    calls: list[LlmCall] = field(default_factory=list)
    result: dict[str, Any] | None = None
    failure: TaskFailed | None = None
    changes: list[Change] = field(default_factory=list)
    """Changes to the conversation the executor asked for (``TaskContext.changes``)."""


VALIDATION = "validation"
"""The key of a reviewed result that holds what the review found: ``{checked,
discrepancies: [text...]}`` (``runs/summary.py`` reports them)."""

Announce = Callable[[Batch], Awaitable[object]]
"""Commits a batch at once (``Recorder.write``): how a ``start`` operation is written
before the change it announces is made."""


@dataclass
class _Reports:
    """The executor's ``report``: ``operation`` events, and ``entity_patch`` with a patch.

    With ``announce``, a ``start`` is committed before the executor goes on; the others
    join ``batch``, which commits with the result. A ``start`` left without its end when
    the executor fails gets an ``error`` (:meth:`close`).
    """

    doer: Doer
    batch: Batch
    announce: Announce | None = None
    open: dict[tuple[str, str, str], str | None] = field(default_factory=dict)
    """Operations started and not yet ended: (action, type, name) -> entity id."""

    async def __call__(
        self,
        action: str,
        entity_type: str,
        entity_name: str,
        status: str,
        entity_id: str | None = None,
        patch: dict[str, Any] | None = None,
    ) -> None:
        doer = self.doer
        key = (action, entity_type, entity_name)
        if status == "start":
            self.open[key] = entity_id
        else:
            self.open.pop(key, None)
        payload = _operation(action, entity_type, entity_name, status, entity_id)
        if status == "start" and self.announce is not None:
            now = Batch(self.batch.conversation_id, self.batch.turn_id, run_id=self.batch.run_id)
            now.event(payload, agent_id=doer.agent_id, task_id=doer.task_id)
            await self.announce(now)
            return
        self.batch.event(payload, agent_id=doer.agent_id, task_id=doer.task_id)
        if patch is not None and entity_id is not None:
            self.batch.event(
                event.EntityPatchData(entity=entity_type, entity_id=entity_id, patch=patch),
                agent_id=doer.agent_id,
                task_id=doer.task_id,
            )

    def close(self) -> None:
        """End every operation still open with ``error`` (the executor failed)."""
        for (action, entity_type, entity_name), entity_id in self.open.items():
            payload = _operation(action, entity_type, entity_name, "error", entity_id)
            self.batch.event(payload, agent_id=self.doer.agent_id, task_id=self.doer.task_id)
        self.open.clear()


_STATUSES: dict[str, event.OperationStatus] = {
    "start": "start",
    "success": "success",
    "error": "error",
}


def _operation(
    action: str, entity_type: str, entity_name: str, status: str, entity_id: str | None
) -> event.OperationData:
    return event.OperationData(
        name=f"{action} {entity_type} “{entity_name}”: {status}",
        action=action,
        entity_type=entity_type,
        entity_name=entity_name,
        status=_STATUSES.get(status, "success"),
        entity_id=entity_id,
    )


async def invoke(services: Services, tenant_id: str, started: Started) -> Outcome:
    """Run the executor under the task time limit; every failure becomes a ``TaskFailed``.

    The connectors live as long as the execution: their HTTP clients are closed after it.
    """
    task = started.task
    outcome = Outcome(
        task, Batch(task.conversation_id, None, run_id=task.run_id), calls=started.calls
    )
    doer = Doer(task.conversation_id, task.created_by, task.run_id, task.id, task.node_id)
    execution = Execution(
        started.task_type,
        started.params,
        started.project,
        task.project_id,
        doer,
        task.id,
        task.idempotency_key,
        started.outputs,
        outcome.batch,
        outcome.calls,
        review=True,
        changes=outcome.changes,
        grounds=started.grounds,
    )
    outcome.result, outcome.failure = await perform(services, tenant_id, execution)
    return outcome


@dataclass
class Execution:
    """One call of a task type's executor: what runs, for whom, and where its reports go."""

    task_type: TaskType[Any]
    params: BaseModel
    project: ProjectContext
    project_id: str | None
    """The ``TaskContext.project_id`` the executor sees (the task's own)."""
    doer: Doer
    key: str
    """The ``TaskContext.task_id`` the executor sees."""
    idempotency_key: str
    outputs: dict[str, dict[str, Any]]
    batch: Batch
    """Collects the ``operation`` and ``entity_patch`` events the executor reports."""
    calls: list[LlmCall]
    """Collects the model calls the executor makes (``TaskContext.generate``)."""
    announce: Announce | None = None
    """Commits a ``start`` operation before the executor goes on (a turn's tool call);
    None: it joins ``batch`` (a run's step, whose ``in_progress`` committed before)."""
    state_deltas: list[dict[str, Any]] | None = None
    """Collects the scratchpad deltas the executor proposes (a turn's tool call)."""
    changes: list[Change] | None = None
    """Collects the changes to the conversation it asks for (a run's step)."""
    review: bool = False
    """Read a completed step back with its task type's ``check`` (a run's step): what it
    finds is kept in the result's ``validation``."""
    grounds: tuple[str, ...] = ()
    """What its run was given and found (``TaskContext.grounds``): a run's step only."""


async def perform(
    services: Services, tenant_id: str, execution: Execution
) -> tuple[dict[str, Any] | None, TaskFailed | None]:
    """Run ``execution`` under the task time limit: its result, or its failure as a
    ``TaskFailed`` (a timeout, a Hansa error or an executor bug included)."""
    doer = execution.doer
    attributes = {
        "hansa.task_id": execution.key,
        "hansa.run_id": doer.run_id,
        "hansa.agent_id": doer.agent_id,
    }
    with tracing.tool_execution(execution.task_type.name, execution.key, attributes) as current:
        result, failure = await _timed(services, tenant_id, execution)
        if failure is not None:
            current.set_status(trace.Status(trace.StatusCode.ERROR, failure.code))
    return result, failure


async def _timed(
    services: Services, tenant_id: str, execution: Execution
) -> tuple[dict[str, Any] | None, TaskFailed | None]:
    try:
        result = await asyncio.wait_for(
            _execute(services, tenant_id, execution), services.settings.task_timeout_seconds
        )
    except TaskFailed as exc:
        return None, exc
    except TimeoutError:
        return None, TaskFailed(
            "the step took too long and was stopped", code="timeout", retryable=True
        )
    except errors.HansaError as exc:
        return None, TaskFailed(exc.message, code=exc.code)
    except Exception as exc:  # an executor bug: the run fails truthfully, the worker lives
        return None, TaskFailed(
            f"an unexpected error stopped the step ({type(exc).__name__})", code="internal_error"
        )
    return result, None


async def _execute(services: Services, tenant_id: str, execution: Execution) -> dict[str, Any]:
    reports = _Reports(execution.doer, execution.batch, execution.announce)
    async with connectors_for(services, tenant_id, execution.project) as connectors:
        ctx = TaskContext(
            tenant_id=tenant_id,
            project_id=execution.project_id,
            task_id=execution.key,
            idempotency_key=execution.idempotency_key,
            project_config=secrets.mask(execution.project.config),  # secrets reach connectors only
            connectors=connectors,
            outputs=execution.outputs,
            report=reports,
            generate=asking.generator(
                services, tenant_id, execution.doer, execution.calls, execution.project
            ),
            complete=asking.completer(
                services, tenant_id, execution.doer, execution.calls, execution.project
            ),
            say=_sayer(execution) if execution.doer.task_id is not None else None,
            state_deltas=execution.state_deltas,
            changes=execution.changes,
            grounds=execution.grounds,
        )
        try:
            result = await execution.task_type.executor(execution.params, ctx)
        except BaseException:
            reports.close()
            raise
        check = execution.task_type.check
        if not execution.review or check is None:
            return result
        ctx.outputs = {**ctx.outputs, "self": result}
        try:
            found = await check(execution.params, ctx)
        except errors.HansaError as exc:  # the review never fails the step it reviews
            found = [f"the result could not be checked: {exc.message}"]
        except Exception as exc:
            found = [f"the result could not be checked ({type(exc).__name__})"]
        return {**result, VALIDATION: {"checked": True, "discrepancies": found}}


def _sayer(execution: Execution) -> Callable[[str], None]:
    """A run step's messages join its outcome's batch: said once the step is recorded."""
    doer = execution.doer

    def say(text: str) -> None:
        meta = {"runId": doer.run_id, "taskId": doer.task_id, "nodeId": doer.node_id}
        execution.batch.message(
            message.Kind.ASSISTANT,
            message.Author.ASSISTANT,
            text,
            agent_id=doer.agent_id,
            metadata={k: v for k, v in meta.items() if v is not None},
        )

    return say
