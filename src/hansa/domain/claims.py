"""Claim/defer turn-taking (seed 001): assistants claim a message, one responds.

Matching ``route`` actions of rules become claims; external assistants may claim too,
within the claim window. Resolution is deterministic: priority (high first), then
confidence (high first), then claim time (early first), then the assistant's key.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import Field

from hansa.domain.base import Wire
from hansa.domain.rules import ConditionResult


class Justification(Wire):
    """Why an assistant claims, defers, observes or responds."""

    reason: str = Field(max_length=500)
    trigger_rule: str | None = None
    conditions: list[ConditionResult] = Field(default_factory=list)
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)


class ClaimTerms(Wire):
    """When a claim was made, until when the window was open, and its priority."""

    claimed_at: datetime
    expires_at: datetime
    priority: int = 0


class Claim(Wire):
    """One assistant's claim on one message."""

    assistant_key: str
    justification: Justification
    claim: ClaimTerms
    external: bool = False
    """Claimed over HTTP by an assistant outside Hansa (it answers on its own)."""


def ranked(claims: list[Claim]) -> list[Claim]:
    """Claims in the order that decides: the first one responds, the others defer."""
    return sorted(
        claims,
        key=lambda c: (
            -c.claim.priority,
            -c.justification.confidence,
            c.claim.claimed_at,
            c.assistant_key,
        ),
    )
