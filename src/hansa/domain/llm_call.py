"""A record of one model call (seed 001 token tracking, plus cost)."""

from __future__ import annotations

import enum
from datetime import datetime

from hansa.domain.base import Wire


class CallStatus(enum.StrEnum):
    """How a model call that reached its provider ended."""

    OK = "ok"
    """The provider answered in full."""
    CANCELLED = "cancelled"
    """Cut before it answered: preempted, cancelled, handed off or its turn interrupted.
    Its tokens are those streamed so far, estimated when the provider had not said."""
    FAILED = "failed"
    """The provider or the stream failed."""


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
    """Whether ``status`` is ``ok`` (kept for callers that read only this)."""
    error: str | None
    cost_usd: float
    created_at: datetime
    status: CallStatus = CallStatus.OK
    estimated: bool = False
    """Whether the tokens (and so the cost) are estimated (characters / 4) rather than
    counted by the provider: a cut call's provider never said."""
