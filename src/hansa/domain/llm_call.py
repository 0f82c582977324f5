"""A record of one model call (seed 001 token tracking, plus cost)."""

from __future__ import annotations

from datetime import datetime

from hansa.domain.base import Wire


class LlmCall(Wire):
    """One model call, successful or not."""

    id: str
    tenant_id: str
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
