"""Runs and their cards, tasks, task types, run logs, and the seed's chat and execute answers."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from hansa.domain.base import Wire
from hansa.domain.message import Phase
from hansa.domain.run import RunStatus, TaskStatus
from hansa.domain.run_log import LogEntry


class TaskOut(Wire):
    """A task with every seed 000 §8.1 field and its ``parametersHash``; secrets as ``***``."""

    id: str
    run_id: str
    conversation_id: str
    project_id: str | None
    parent_task_id: str | None
    step_group: str
    sequence_order: int
    node_id: str | None
    """The graph node it runs (a graph's run), else null."""
    depends_on: list[str] | None
    """The tasks it waits for (a graph's run), else null: its step group's order."""
    created_by_agent_id: str
    status: TaskStatus
    task_type: str
    parameters: dict[str, Any]
    parameters_hash: str
    """SHA-256 of the canonical JSON of ``parameters``: what ``confirm`` consents to."""
    summary: str
    is_reversible_by_system: bool
    irreversible_confirmed_at: datetime | None
    attempts: int
    scheduled_at: datetime | None
    result: dict[str, Any] | None
    error: str | None
    created_at: datetime
    updated_at: datetime
    metadata: dict[str, Any]


class RunSummary(Wire):
    """A run as ``GET /api/runs`` lists it: its card without its tasks."""

    id: str
    conversation_id: str
    project_id: str | None
    title: str
    status: RunStatus
    created_by_agent_id: str
    created_at: datetime
    updated_at: datetime
    metadata: dict[str, Any]
    """The plan, ``validation`` (Hans's read-back of the completed steps)…"""


class RunAgent(Wire):
    """An agent with a step in the run."""

    id: str
    display_name: str


class ThinkingEntry(Wire):
    """A thinking entry of the run (a step group's, or the run's own)."""

    agent_id: str | None
    summary: str
    created_at: datetime


class StepGroup(Wire):
    """The tasks of one step group (``A``, ``B``…) and the thinking about them."""

    step_group: str
    tasks: list[TaskOut]
    thinking: list[ThinkingEntry]


class RunCard(RunSummary):
    """``GET /api/runs/{id}``: the run, its agents, its tasks by step group, what Undo offers."""

    agents: list[RunAgent]
    groups: list[StepGroup]
    thinking: list[ThinkingEntry]
    undoable_task_ids: list[str]
    """The completed steps a rollback would undo, newest first."""


class TaskType(Wire):
    """A registered task type."""

    name: str
    description: str
    parameters_schema: dict[str, Any]
    """The JSON Schema of its ``parameters``."""
    is_reversible_by_system: bool
    capability: str | None
    """The capability an agent needs to use it (law of allowed scope)."""
    graph_node: bool
    """A prompt graph's node type: never offered to agents or the planner."""


class Executed(Wire):
    """``POST /api/assistant/execute`` (seed 000 §12.2): 200 when the task is final, 202 while
    it awaits confirmation or is still running."""

    task_id: str
    run_id: str
    status: TaskStatus
    details: dict[str, Any]
    """The task's result, secrets as ``***``; a page's id also as ``cmsId``."""
    parameters_hash: str
    error: str | None = None
    """Why it failed (only when it did)."""


class ChatMessageOut(Wire):
    """An assistant message of the turn."""

    id: str
    role: Literal["assistant"]
    agent_id: str | None
    content: str


class ChatThinking(Wire):
    """A thinking entry of the turn."""

    kind: Phase
    summary: str


class RunCreated(Wire):
    """The run the turn created."""

    run_id: str
    title: str


class ChatAnswer(Wire):
    """``POST /api/assistant/chat`` (seed 000 §12.1), when the turn is done."""

    conversation_id: str
    messages: list[ChatMessageOut]
    thinking: list[ChatThinking]
    routed_agent_id: str | None
    run_created: RunCreated | None


class ChatRunning(ChatAnswer):
    """202: the turn goes on past ``HANSA_CHAT_TIMEOUT_SECONDS``; what it produced so far."""

    status: Literal["running"]
    message_id: str
    turn_id: str


__all__ = [
    "ChatAnswer",
    "ChatRunning",
    "Executed",
    "LogEntry",
    "RunCard",
    "RunSummary",
    "TaskOut",
    "TaskType",
]
