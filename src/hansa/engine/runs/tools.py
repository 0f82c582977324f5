"""Tool calls of a turn (the agent loop, ``engine/turns/agent_loop.py``) or of a session's
step, as task executions.

A reversible call runs its task type's executor at once, as a run's step does but with
no task row: what it reports is recorded with the turn. An irreversible call never runs
here: it becomes a one-step run, started at once, whose task the scheduler holds in
``awaiting_confirmation`` until the user confirms its exact parameters (decision 0013).
"""

from __future__ import annotations

import asyncio
import hashlib
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel
from sqlalchemy import Connection

from hansa.domain import event, run
from hansa.domain.base import new_id
from hansa.domain.llm_call import LlmCall
from hansa.domain.project import ProjectContext
from hansa.engine.runs import drafts, service
from hansa.engine.runs.asking import Doer
from hansa.engine.runs.invoke import Announce, Execution, perform
from hansa.engine.runtime.recorder import Batch
from hansa.engine.runtime.services import Services
from hansa.engine.toolbox import Settled
from hansa.models.base import ToolCall
from hansa.store import runs
from hansa.tasks.base import TaskFailed, TaskType


@dataclass(frozen=True)
class ToolRun:
    """One reversible tool call the laws allowed, and the turn or session step it belongs to."""

    call_id: str
    task_type: TaskType[Any]
    params: BaseModel
    conversation_id: str
    turn_id: str | None
    """The turn it belongs to; None for a session's step."""
    agent_id: str
    project: ProjectContext
    origin: str
    """What the call belongs to, for its idempotency key: the turn's id, or a session's step
    (``session:<id>:<n>``), so that a step run again after a crash repeats its keys."""
    announce: Announce | None = None
    """Commits the executor's ``start`` operations at once (the turn's ``Recorder.write``)."""
    keeps_state: bool = True
    """Whether the executor may propose scratchpad deltas (a turn); a session's step keeps
    its state in its frame, so there ``agent_state.update`` fails (``no_agent_state``)."""


@dataclass
class ToolDone:
    """What a tool call's execution produced."""

    batch: Batch
    """The ``operation`` and ``entity_patch`` events it reported, tagged with the turn."""
    result: dict[str, Any] | None = None
    failure: TaskFailed | None = None
    calls: list[LlmCall] = field(default_factory=list)
    """Model calls the executor made (``TaskContext.generate``)."""
    deltas: list[dict[str, Any]] = field(default_factory=list)
    """Deltas to the agent's scratchpad the executor proposed (applied with the result)."""


async def run_tool(services: Services, tenant_id: str, tool: ToolRun) -> ToolDone:
    """Run the call's executor under the task time limit; a failure is a ``TaskFailed``."""
    done = ToolDone(Batch(tool.conversation_id, tool.turn_id))
    key = hashlib.sha256(f"{tool.origin}:{tool.call_id}".encode()).hexdigest()[:40]
    execution = Execution(
        tool.task_type,
        tool.params,
        tool.project,
        tool.project.project_id,
        Doer(tool.conversation_id, tool.agent_id),
        new_id(),
        f"hansa-tool-{key}",
        {},
        done.batch,
        done.calls,
        announce=tool.announce,
        state_deltas=done.deltas if tool.keeps_state else None,
    )
    done.result, done.failure = await perform(services, tenant_id, execution)
    return done


async def settle_tool(
    services: Services, tenant_id: str, tool: ToolRun, call: ToolCall, slots: asyncio.Semaphore
) -> tuple[Settled, ToolDone]:
    """Run ``call``'s executor once a slot is free: its answer as the model reads it (a
    result, or its failure as a tool error), and what the execution produced."""
    async with slots:
        done = await run_tool(services, tenant_id, tool)
    name = tool.task_type.name
    if done.failure is not None:
        failed = event.ToolError(code=done.failure.code, message=done.failure.message)
        return Settled(call, name, error=failed), done
    return Settled(call, name, result=done.result), done


def hold_for_confirmation(
    services: Services, tenant_id: str, batch: Batch, draft: drafts.TaskDraft, title: str
) -> tuple[str, list[run.Task]]:
    """Add to ``batch`` the steps that store a one-step run of ``draft`` (checked by the
    laws again) and start it, so that the scheduler holds its irreversible task for consent.

    Returns the run's id and a list that holds its task once the batch has committed.
    """
    new = service.NewRun(batch.conversation_id, title[:200], draft.project_id, [draft])
    run_id = new_id()
    stored: list[run.Task] = []

    def read_task(conn: Connection) -> None:
        stored.extend(runs.tasks_of(conn, run_id))

    batch.then(
        service.on_run(services, tenant_id, run_id, batch, lambda c: service.store_run(c, new))
    )
    batch.then(service.approving(services, tenant_id, run_id, batch))
    batch.then(read_task)
    batch.after_commit(services.wake_worker)
    return run_id, stored
