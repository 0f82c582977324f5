"""The Agent Protocol's (LangGraph Platform's) answers at ``/ap``, as ``langgraph_sdk.schema``
has them (snake_case, as the protocol spells them); ``api/ap_shapes.py`` builds them."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from hansa.api.models.base import Time


class _Out(BaseModel):
    model_config = ConfigDict(populate_by_name=True)


class AssistantOut(_Out):
    """An agent of the tenant, as an assistant (``graph_id`` is its id too)."""

    assistant_id: str
    graph_id: str
    name: str
    description: str
    config: dict[str, Any]
    context: dict[str, Any]
    metadata: dict[str, Any]
    version: int
    created_at: Time
    updated_at: Time


class LcMessage(_Out):
    """A stored user (``human``) or assistant (``ai``) message, as LangChain has it; a
    ``human`` one leaves ``name`` and ``tool_calls`` unset, and out of the JSON."""

    type: Literal["human", "ai"]
    content: str
    id: str
    name: str | None = None
    """The agent that wrote an ``ai`` message."""
    tool_calls: list[dict[str, Any]] | None = None


class InterruptValue(_Out):
    kind: Literal["question", "approval", "confirmation"]
    question: str
    """Hans's last message."""
    runId: str | None  # noqa: N815 - Hansa's run, in Hansa's spelling
    taskIds: list[str]  # noqa: N815
    resume: str
    """How to answer it."""


class Interrupt(_Out):
    """What the thread waits for."""

    value: InterruptValue
    id: str


class RunError(_Out):
    error: str
    message: str


class Values(_Out):
    """A thread's values: its newest messages, its conversation's context keys beside them
    (secrets masked; ``update_state`` sets them), and, after a run, what it waits for. The
    routes leave out what is unset: ``__interrupt__`` and ``__error__`` are there only when
    the thread waits or the turn failed."""

    model_config = ConfigDict(populate_by_name=True, extra="allow")

    messages: list[LcMessage]
    interrupt: list[Interrupt] | None = Field(default=None, alias="__interrupt__")
    error: RunError | None = Field(default=None, alias="__error__")


class ThreadOut(_Out):
    """A conversation, as a thread."""

    thread_id: str
    created_at: Time
    updated_at: Time
    metadata: dict[str, Any]
    status: Literal["idle", "busy", "interrupted", "error"]
    values: Values
    interrupts: dict[str, list[Interrupt]]


class StateTask(_Out):
    id: str
    name: str
    path: list[str]
    error: str | None
    interrupts: list[Interrupt]
    state: dict[str, Any] | None = None
    """A subgraph's state (none here; ``RemoteGraph.get_state`` reads the key)."""
    checkpoint: dict[str, Any] | None = None


class Checkpoint(_Out):
    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str
    checkpoint_map: dict[str, Any] | None


class ThreadStateOut(_Out):
    """A thread's one checkpoint: the conversation as it is now."""

    values: Values
    next: list[str]
    tasks: list[StateTask]
    interrupts: list[Interrupt]
    metadata: dict[str, Any]
    created_at: Time
    checkpoint: Checkpoint
    parent_checkpoint: Checkpoint | None


class RunMetadata(_Out):
    turnId: str  # noqa: N815
    runId: str | None  # noqa: N815
    """The plan's run this run approved, if it did."""


class RunOut(_Out):
    """A turn and what came of it, as a run."""

    run_id: str
    thread_id: str
    assistant_id: str
    created_at: Time
    updated_at: Time
    status: Literal["pending", "running", "error", "success", "timeout", "interrupted"]
    metadata: RunMetadata
    multitask_strategy: str
    kwargs: dict[str, Any]


class StateUpdated(_Out):
    """What ``update_state`` answers: the thread's checkpoint after the change."""

    checkpoint: Checkpoint


class GraphNode(_Out):
    id: str
    type: Literal["schema", "runnable"]
    data: str | dict[str, Any]


class GraphEdge(_Out):
    source: str
    target: str
    conditional: bool = False


class GraphOut(_Out):
    """An assistant's graph as LangGraph draws it: ``__start__`` → the agent → ``__end__``
    (Hans: → the agents he routes to, each edge conditional)."""

    nodes: list[GraphNode]
    edges: list[GraphEdge]


class SchemasOut(_Out):
    """An assistant's JSON Schemas: its input, output and state are a thread's values."""

    graph_id: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]
    state_schema: dict[str, Any]
    config_schema: dict[str, Any]
    context_schema: dict[str, Any]


class CronOut(_Out):
    """A schedule that posts a message, as a cron of the protocol."""

    cron_id: str
    assistant_id: str
    thread_id: str | None
    on_run_completed: Literal["keep"] | None
    end_time: Time | None
    schedule: str
    timezone: str
    created_at: Time
    updated_at: Time
    payload: dict[str, Any]
    user_id: str | None
    next_run_date: Time | None
    metadata: dict[str, Any]
    enabled: bool
