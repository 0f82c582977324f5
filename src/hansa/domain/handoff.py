"""Human handoff (seed 001): a conversation handed from the assistants to a person, and back."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import Field

from hansa.domain.base import Wire


class Status(StrEnum):
    """pending -> active (a person accepted) -> resolved | returned; pending -> cancelled."""

    PENDING = "pending"
    ACTIVE = "active"
    RESOLVED = "resolved"
    """The person closed the matter: the conversation is resolved."""
    RETURNED = "returned"
    """The person gave the conversation back to the assistants."""
    CANCELLED = "cancelled"


TRANSITIONS: dict[Status, frozenset[Status]] = {
    Status.PENDING: frozenset({Status.ACTIVE, Status.RETURNED, Status.RESOLVED, Status.CANCELLED}),
    Status.ACTIVE: frozenset({Status.RESOLVED, Status.RETURNED}),
    Status.RESOLVED: frozenset(),
    Status.RETURNED: frozenset(),
    Status.CANCELLED: frozenset(),
}
OPEN = (Status.PENDING, Status.ACTIVE)
"""A conversation has at most one open handoff."""

Priority = Literal["low", "normal", "high", "urgent"]
PRIORITY_RANK: dict[str, int] = {"urgent": 3, "high": 2, "normal": 1, "low": 0}
"""The queue's order: higher first, then older first."""


class RequestedBy(Wire):
    """Who asked for the handoff."""

    kind: Literal["user", "agent", "rule", "api", "graph"]
    id: str | None = None


class Handoff(Wire):
    """One handoff of one conversation, with what the person needs to take over."""

    id: str
    tenant_id: str
    conversation_id: str
    status: Status
    reason: str = Field(max_length=500)
    priority: Priority = "normal"
    metadata: dict[str, Any] = Field(default_factory=dict)
    snapshot: dict[str, Any] = Field(default_factory=dict)
    """Recent messages, the context, the current agent, the plan, the open runs."""
    requested_by: RequestedBy
    assignee: str | None = None
    paused_runs: list[str] = Field(default_factory=list)
    """Runs the handoff paused; returning the conversation resumes them."""
    created_at: datetime
    assigned_at: datetime | None = None
    resolved_at: datetime | None = None
