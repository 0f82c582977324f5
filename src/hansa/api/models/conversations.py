"""Conversations, their messages and timeline, claims, control, turns and handoffs."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, WithJsonSchema, field_validator

from hansa.api.models.base import Masked, Out, Time
from hansa.domain import agent_state_fields, secrets
from hansa.domain.agent_state import AgentState
from hansa.domain.base import Wire
from hansa.domain.claims import Claim
from hansa.domain.conversation import State
from hansa.domain.handoff import Handoff
from hansa.domain.handoff import Status as HandoffStatus
from hansa.domain.message import Author, Kind, Message
from hansa.domain.run import RunStatus, TaskStatus
from hansa.domain.turn import TurnStatus


class ConversationOut(Out):
    """A conversation; the secrets in its ``context`` and ``metadata`` show as ``***``."""

    id: str
    state: State
    current_agent: str
    project_id: str | None
    title: str | None
    last_seq: int
    """The seq of its last event (0: none yet)."""
    created_at: Time
    updated_at: Time
    context: Masked
    metadata: Masked
    """The planning state (its steps' parameters), the focus (``focus.entityId``), the claim
    window…"""
    user: dict[str, Any] | None = None
    """Who it is with (``{id, displayName?, email?, …}``); null: nobody named."""


class MessageOut(Out):
    """A message of a conversation."""

    id: str
    kind: Kind
    author: Author
    agent_id: str | None
    content: str
    run_id: str | None
    turn_id: str | None
    created_at: Time
    metadata: Masked


class Posted(Out):
    """``POST /api/conversations/{id}/messages``: the message stored, its turn started
    (``turnId`` null: an agent's own message, which starts none)."""

    message_id: str
    turn_id: str | None
    seq: int
    """The seq of the message's event: follow the stream from ``seq - 1``."""


class TimelineEntry(Out):
    """One line of the experience timeline (seed 000 §9.2), from ``engine/turns/timeline.py``'s
    entry."""

    time: Time
    seq: int
    actor: str
    kind: str
    run_id: str | None
    turn_id: str | None
    summary: str


class AgentStateOut(AgentState, Out):
    """An agent's scratchpad; the secrets it names show as ``***``."""

    state: Annotated[Masked, WithJsonSchema(agent_state_fields.json_schema())]
    """Its typed keys (goal, facts, decisions, openQuestions, entities, dependencies,
    assumptions) and free notes (``domain/agent_state_fields.py``)."""


class AgentStates(Out):
    """The agents' scratchpads in a conversation."""

    conversation_id: str
    agent_states: list[AgentStateOut]


class HandoffOut(Handoff, Out):
    """A handoff; the secrets of its metadata and of its snapshot's plan and context show as
    ``***`` (the snapshot's messages are the conversation's, shown as written)."""

    metadata: Masked = Field(default_factory=dict)

    @field_validator("snapshot")
    @classmethod
    def _masked(cls, snapshot: dict[str, Any]) -> dict[str, Any]:
        parts = ("plan", "context")
        return {k: secrets.mask(v) if k in parts else v for k, v in snapshot.items()}


class RunControlled(Wire):
    """``stream.pause``, ``stream.resume``, ``stream.cancel``: the run's status now."""

    event: Literal["stream.pause", "stream.resume", "stream.cancel"]
    run_id: str
    status: RunStatus


class TaskControlled(Wire):
    """``stream.preempt``: the task's status now."""

    event: Literal["stream.preempt"]
    task_id: str
    status: TaskStatus


class HandoffControlled(Wire):
    """``stream.handoff``: the conversation's open handoff."""

    event: Literal["stream.handoff"]
    handoff_id: str
    status: HandoffStatus


Controlled = RunControlled | TaskControlled | HandoffControlled
"""``POST /api/control``: what the control event acted on, and its status now."""


class TurnCancelled(Wire):
    """``POST /api/turns/{id}/cancel``."""

    turn_id: str
    conversation_id: str
    status: TurnStatus


__all__ = [
    "AgentState",
    "AgentStateOut",
    "AgentStates",
    "Claim",
    "Controlled",
    "ConversationOut",
    "Handoff",
    "HandoffControlled",
    "HandoffOut",
    "Message",
    "MessageOut",
    "Posted",
    "RunControlled",
    "TaskControlled",
    "TimelineEntry",
    "TurnCancelled",
]
