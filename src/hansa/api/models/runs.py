"""Runs and their cards, tasks, task types, run logs, and the seed's chat and execute answers."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from pydantic import Field

from hansa.api.models.base import Masked, MaskedText, Out, Time
from hansa.domain.base import Wire
from hansa.domain.message import Message, Phase
from hansa.domain.run import Run, RunStatus, Task, TaskStatus
from hansa.domain.run_log import LogEntry

_CREATED_BY = Field(alias="createdByAgentId")
"""A run's or task's ``created_by``: ``createdByAgentId`` on the wire."""


class TaskOut(Out):
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
    created_by: str = _CREATED_BY
    status: TaskStatus
    task_type: str
    parameters: Masked
    parameters_hash: str
    """SHA-256 of the canonical JSON of ``parameters``: what ``confirm`` consents to."""
    summary: MaskedText
    is_reversible_by_system: bool
    irreversible_confirmed_at: Time | None
    attempts: int
    scheduled_at: Time | None
    result: Masked | None
    error: MaskedText | None
    created_at: Time
    updated_at: Time
    metadata: Masked


class RunSummary(Out):
    """A run as ``GET /api/runs`` lists it: its card without its tasks."""

    id: str
    conversation_id: str
    project_id: str | None
    title: str
    status: RunStatus
    created_by: str = _CREATED_BY
    created_at: Time
    updated_at: Time
    metadata: Masked
    """The plan, ``validation`` (Hans's read-back of the completed steps)…"""


class RunAgent(Out):
    """An agent with a step in the run."""

    id: str
    display_name: str


class ThinkingEntry(Out):
    """A thinking entry of the run (a step group's, or the run's own)."""

    agent_id: str | None
    content: str = Field(alias="summary")
    """What the agent thought (a thinking message's ``content``), as ``summary``."""
    created_at: Time


class StepGroup(Out):
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

    @classmethod
    def of_run(
        cls,
        r: Run,
        tasks: list[Task],
        thinking: list[Message],
        names: dict[str, str],
        undoable: Iterable[str],
    ) -> RunCard:
        """The card of run ``r``: its agents (the chief first, named by ``names``), its tasks
        by step group with each group's thinking, the run's own thinking."""
        agents = sorted({t.created_by for t in tasks}, key=lambda a: (a != "chief", a))
        groups = sorted({t.step_group for t in tasks})
        return cls.model_construct(
            **dict(RunSummary.of(r)),
            agents=[RunAgent(id=a, display_name=names.get(a, a)) for a in agents],
            groups=[
                StepGroup(
                    step_group=g,
                    tasks=[TaskOut.of(t) for t in tasks if t.step_group == g],
                    thinking=[
                        ThinkingEntry.of(m) for m in thinking if m.metadata.get("group") == g
                    ],
                )
                for g in groups
            ],
            thinking=[ThinkingEntry.of(m) for m in thinking if not m.metadata.get("group")],
            undoable_task_ids=list(undoable),
        )


class TaskType(Out):
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


class Executed(Out):
    """``POST /api/assistant/execute`` (seed 000 §12.2): 200 when the task is final, 202 while
    it awaits confirmation or is still running."""

    task_id: str
    run_id: str
    status: TaskStatus
    details: dict[str, Any]
    """The task's result, secrets as ``***``; a page's id also as ``cmsId``."""
    parameters_hash: str
    error: MaskedText | None = None
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
