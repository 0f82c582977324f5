"""Calling one task's executor: its context and connectors, its time limit, its failures.

Nothing here touches the database: what the executor reports (operations, entity
patches, model calls) is collected in the :class:`Outcome`, which the run job
records in its next transaction.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from hansa import errors
from hansa.domain import event, run, secrets
from hansa.domain.llm_call import LlmCall
from hansa.domain.project import ProjectContext
from hansa.engine.llm import CallScope, RecordedCall
from hansa.engine.prompts import persona
from hansa.engine.runs.connectors import connectors_for
from hansa.engine.runtime.recorder import Batch
from hansa.engine.runtime.services import Services
from hansa.models.base import ChatMessage, ModelSettings, RequestParams
from hansa.tasks.base import TaskContext, TaskFailed, TaskType


@dataclass
class Started:
    """A task moved to ``in_progress``, with everything its executor needs."""

    task: run.Task
    task_type: TaskType[Any]
    params: BaseModel
    project: ProjectContext
    outputs: dict[str, dict[str, Any]]


@dataclass
class Outcome:
    """What one execution produced: a result or a failure, and what it reported."""

    task: run.Task
    batch: Batch
    calls: list[LlmCall] = field(default_factory=list)
    result: dict[str, Any] | None = None
    failure: TaskFailed | None = None


@dataclass
class _Reports:
    outcome: Outcome

    async def __call__(
        self,
        action: str,
        entity_type: str,
        entity_name: str,
        status: str,
        entity_id: str | None = None,
        patch: dict[str, Any] | None = None,
    ) -> None:
        task, batch = self.outcome.task, self.outcome.batch
        name = f"{action} {entity_type} “{entity_name}”: {status}"
        batch.event(event.OperationData(name=name), agent_id=task.created_by, task_id=task.id)
        if patch is not None and entity_id is not None:
            batch.event(
                event.EntityPatchData(entity=entity_type, entity_id=entity_id, patch=patch),
                agent_id=task.created_by,
                task_id=task.id,
            )


async def invoke(services: Services, tenant_id: str, started: Started) -> Outcome:
    """Run the executor under the task time limit; every failure becomes a ``TaskFailed``.

    The connectors live as long as the execution: their HTTP clients are closed after it.
    """
    task = started.task
    outcome = Outcome(task, Batch(task.conversation_id, None, run_id=task.run_id))
    try:
        outcome.result = await asyncio.wait_for(
            _execute(services, tenant_id, started, outcome),
            services.settings.task_timeout_seconds,
        )
    except TaskFailed as exc:
        outcome.failure = exc
    except TimeoutError:
        outcome.failure = TaskFailed(
            "the step took too long and was stopped", code="timeout", retryable=True
        )
    except errors.HansaError as exc:
        outcome.failure = TaskFailed(exc.message, code=exc.code)
    except Exception as exc:  # an executor bug: the run fails truthfully, the worker lives
        outcome.failure = TaskFailed(
            f"an unexpected error stopped the step ({type(exc).__name__})", code="internal_error"
        )
    return outcome


async def _execute(
    services: Services, tenant_id: str, started: Started, outcome: Outcome
) -> dict[str, Any]:
    task = started.task
    async with connectors_for(services, tenant_id, started.project) as connectors:
        ctx = TaskContext(
            tenant_id=tenant_id,
            project_id=task.project_id,
            task_id=task.id,
            idempotency_key=task.idempotency_key,
            project_config=secrets.mask(started.project.config),  # secrets reach connectors only
            connectors=connectors,
            outputs=started.outputs,
            report=_Reports(outcome),
            generate=_generator(services, tenant_id, outcome),
        )
        return await started.task_type.executor(started.params, ctx)


def _generator(services: Services, tenant_id: str, outcome: Outcome) -> Any:
    task = outcome.task
    agent = services.agent(task.created_by)

    async def generate(instructions: str, material: str) -> str:
        scope = CallScope(
            tenant_id=tenant_id,
            conversation_id=task.conversation_id,
            run_id=task.run_id,
            node_id=task.id,
            agent_id=agent.id,
        )
        model = services.model_for(agent)
        call = RecordedCall(model, scope, services.clock)
        prompt = [
            ChatMessage(
                "system",
                f"{persona(agent)} {instructions}",
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
                outcome.calls.append(call.record)
        return "".join(parts)

    return generate
