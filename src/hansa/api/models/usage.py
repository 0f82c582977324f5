"""Model calls, usage, and workspace entities."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from hansa.api.models.base import Out
from hansa.domain.base import Wire
from hansa.domain.usage import Usage


class LlmCallOut(Out):
    """One model call, successful or not."""

    id: str
    conversation_id: str | None
    turn_id: str | None
    run_id: str | None
    node_id: str | None
    agent_id: str | None
    provider: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    latency_ms: float
    success: bool
    error: str | None
    cost_usd: float
    created_at: datetime


class EdgeOut(Wire):
    """An edge between two workspace entities."""

    edge_id: str
    from_id: str
    to_id: str
    relation: str


class EntityOut(Wire):
    """A live workspace entity (secrets masked) with its edges from and to others."""

    id: str
    project_id: str | None
    kind: str
    name: str
    parent_id: str | None
    position: int
    data: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    deleted: bool
    idempotency_key: str | None
    edges: list[EdgeOut]


__all__ = ["EntityOut", "LlmCallOut", "Usage"]
