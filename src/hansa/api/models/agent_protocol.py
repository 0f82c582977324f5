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
    """A thread's values: its newest messages (and, after a run, what it waits for). The
    routes leave out what is unset: ``__interrupt__`` and ``__error__`` are there only when
    the thread waits or the turn failed."""

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
