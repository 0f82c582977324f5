"""Runs and tasks (seed 000 §8.1, §13.3–13.4): lifecycles and the records themselves."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from enum import StrEnum
from typing import Any

from hansa.domain.base import Wire


class RunStatus(StrEnum):
    """A run: planning -> awaiting_approval -> running -> completed | failed | cancelled;
    an ended run whose completed steps were all undone is ``rolled_back``."""

    PLANNING = "planning"
    AWAITING_APPROVAL = "awaiting_approval"
    RUNNING = "running"
    PAUSED = "paused"
    """No new task starts; running ones finish."""
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"
    ROLLED_BACK = "rolled_back"
    """Every step that could be undone was undone (``POST /api/runs/{id}/rollback``)."""


RUN_TRANSITIONS: dict[RunStatus, frozenset[RunStatus]] = {
    RunStatus.PLANNING: frozenset({RunStatus.AWAITING_APPROVAL, RunStatus.CANCELLED}),
    RunStatus.AWAITING_APPROVAL: frozenset({RunStatus.RUNNING, RunStatus.CANCELLED}),
    RunStatus.RUNNING: frozenset(
        {RunStatus.PAUSED, RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELLED}
    ),
    RunStatus.PAUSED: frozenset({RunStatus.RUNNING, RunStatus.CANCELLED}),
    # an ended run may be rolled back (law of no return): its steps' undo, newest first
    RunStatus.COMPLETED: frozenset({RunStatus.ROLLED_BACK}),
    RunStatus.FAILED: frozenset({RunStatus.ROLLED_BACK}),
    RunStatus.CANCELLED: frozenset({RunStatus.ROLLED_BACK}),
    RunStatus.ROLLED_BACK: frozenset(),
}
RUN_FINAL = frozenset(
    {RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELLED, RunStatus.ROLLED_BACK}
)
RUN_ENDED = frozenset({RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELLED})
"""How a run's execution ends; only such a run's steps may be undone."""


class TaskStatus(StrEnum):
    """A task's lifecycle.

    ``open`` waits for the tasks it depends on; ``awaiting_confirmation`` is an
    irreversible task waiting for the user's consent; ``ambiguous`` means the outcome of
    an irreversible call is unknown after a crash (it goes back to the user); ``undone``
    is a completed task whose task type's undo ran (``POST /api/tasks/{id}/undo``);
    ``skipped`` is a graph's node on a branch not taken (it counts as done for the nodes
    after it).
    """

    OPEN = "open"
    AWAITING_CONFIRMATION = "awaiting_confirmation"
    IN_PROGRESS = "in_progress"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"
    AMBIGUOUS = "ambiguous"
    UNDONE = "undone"
    SKIPPED = "skipped"


TASK_TRANSITIONS: dict[TaskStatus, frozenset[TaskStatus]] = {
    TaskStatus.OPEN: frozenset(
        {
            TaskStatus.IN_PROGRESS,
            TaskStatus.AWAITING_CONFIRMATION,
            TaskStatus.CANCELLED,
            TaskStatus.FAILED,
            TaskStatus.SKIPPED,
        }
    ),
    TaskStatus.AWAITING_CONFIRMATION: frozenset({TaskStatus.OPEN, TaskStatus.CANCELLED}),
    # in_progress -> open: a retry of a reversible task after a retryable failure
    TaskStatus.IN_PROGRESS: frozenset(
        {
            TaskStatus.COMPLETED,
            TaskStatus.FAILED,
            TaskStatus.CANCELLED,
            TaskStatus.OPEN,
            TaskStatus.AMBIGUOUS,
        }
    ),
    TaskStatus.COMPLETED: frozenset({TaskStatus.UNDONE}),
    TaskStatus.UNDONE: frozenset(),
    TaskStatus.FAILED: frozenset(),
    TaskStatus.CANCELLED: frozenset(),
    TaskStatus.AMBIGUOUS: frozenset({TaskStatus.CANCELLED}),
    TaskStatus.SKIPPED: frozenset(),
}
TASK_FINAL = frozenset(
    {
        TaskStatus.COMPLETED,
        TaskStatus.FAILED,
        TaskStatus.CANCELLED,
        TaskStatus.AMBIGUOUS,
        TaskStatus.UNDONE,
        TaskStatus.SKIPPED,
    }
)


def parameters_hash(parameters: dict[str, Any]) -> str:
    """SHA-256 of the canonical JSON of ``parameters`` (sorted keys, no spaces)."""
    canonical = json.dumps(parameters, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


class Run(Wire):
    """An approved (or proposed) plan being executed."""

    id: str
    tenant_id: str
    conversation_id: str
    project_id: str | None
    created_by: str
    title: str
    status: RunStatus
    created_at: datetime
    updated_at: datetime
    metadata: dict[str, Any]


class Task(Wire):
    """One executable action of a run."""

    id: str
    run_id: str
    conversation_id: str
    project_id: str | None
    parent_task_id: str | None
    step_group: str
    sequence_order: int
    created_by: str
    status: TaskStatus
    task_type: str
    parameters: dict[str, Any]
    summary: str
    is_reversible_by_system: bool
    irreversible_confirmed_at: datetime | None
    confirmed_hash: str | None
    attempts: int
    scheduled_at: datetime | None
    """Not before this time: set while a retry waits out its backoff, None otherwise."""
    result: dict[str, Any] | None
    error: str | None
    created_at: datetime
    updated_at: datetime
    metadata: dict[str, Any]
    node_id: str | None = None
    """The graph node the task stands for; None for a plan's step."""
    depends_on: list[str] | None = None
    """The tasks that must be final before it starts; None: every task of the step group
    before its own (a plan's order, compiled by the scheduler)."""

    @property
    def parameters_hash(self) -> str:
        """The hash a confirmation must quote."""
        return parameters_hash(self.parameters)

    @property
    def idempotency_key(self) -> str:
        """Stable across attempts: passed to connectors."""
        return f"hansa-{self.id}"
