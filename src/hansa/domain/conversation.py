"""Conversations and their states."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from hansa.domain.base import Wire
from hansa.domain.plan import PlanningState


class State(StrEnum):
    """Who holds a conversation right now.

    ``idle`` waits for the user; ``ai_active`` has a turn in progress;
    ``waiting_for_user`` has asked the user a question; ``handoff_pending``
    and ``agent_active`` belong to a human agent; ``resolved`` and
    ``archived`` are closed.
    """

    IDLE = "idle"
    AI_ACTIVE = "ai_active"
    WAITING_FOR_USER = "waiting_for_user"
    HANDOFF_PENDING = "handoff_pending"
    AGENT_ACTIVE = "agent_active"
    RESOLVED = "resolved"
    ARCHIVED = "archived"


TRANSITIONS: dict[State, frozenset[State]] = {
    State.IDLE: frozenset({State.AI_ACTIVE, State.HANDOFF_PENDING, State.RESOLVED, State.ARCHIVED}),
    State.AI_ACTIVE: frozenset(
        {State.IDLE, State.WAITING_FOR_USER, State.HANDOFF_PENDING, State.AI_ACTIVE}
    ),
    State.WAITING_FOR_USER: frozenset(
        {State.AI_ACTIVE, State.HANDOFF_PENDING, State.RESOLVED, State.ARCHIVED, State.IDLE}
    ),
    State.HANDOFF_PENDING: frozenset(
        {State.AGENT_ACTIVE, State.AI_ACTIVE, State.RESOLVED, State.IDLE}
    ),
    State.AGENT_ACTIVE: frozenset({State.AI_ACTIVE, State.RESOLVED, State.IDLE}),
    State.RESOLVED: frozenset({State.AI_ACTIVE, State.ARCHIVED}),
    State.ARCHIVED: frozenset(),
}
"""Allowed moves; a new user message moves a resolved conversation back to ai_active."""


class Conversation(Wire):
    """A thread between a user and the team of agents."""

    id: str
    tenant_id: str
    project_id: str | None
    title: str | None
    state: State
    current_agent: str
    last_seq: int
    created_at: datetime
    updated_at: datetime
    metadata: dict[str, Any]
    user: dict[str, Any] | None = None
    """Who the conversation is with (``{id, displayName?, email?, …}`` and the caller's own
    attributes): the ``user.*`` facts of rules, templates and context packs; None: nobody."""

    @property
    def context(self) -> dict[str, Any]:
        """What rules and callers keep about the conversation (``context.*`` facts)."""
        found = self.metadata.get("context")
        return dict(found) if isinstance(found, dict) else {}

    @property
    def focus_entity_id(self) -> str | None:
        """The workspace entity the conversation focuses on (its prompts carry the entity
        pack), set with ``PATCH /api/conversations/{id} {focusEntityId}``."""
        focus = self.metadata.get("focus")
        found = focus.get("entityId") if isinstance(focus, dict) else None
        return found if isinstance(found, str) else None

    @property
    def planning(self) -> PlanningState | None:
        """The plan Hans is working on with the user, if any."""
        state = self.metadata.get("planning")
        return PlanningState.model_validate(state) if state else None
