"""Claim resolution is deterministic: priority, then confidence, then claim time, then key."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hansa.domain.claims import Claim, ClaimTerms, Justification, ranked

T0 = datetime(2026, 11, 23, 10, 0, tzinfo=UTC)


def _claim(key: str, *, priority: int = 0, confidence: float = 1.0, later_ms: int = 0) -> Claim:
    at = T0 + timedelta(milliseconds=later_ms)
    return Claim(
        assistant_key=key,
        justification=Justification(reason=key, confidence=confidence),
        claim=ClaimTerms(claimed_at=at, expires_at=T0 + timedelta(seconds=1), priority=priority),
    )


def test_priority_then_confidence_then_time_then_key_decide() -> None:
    claims = [
        _claim("late-high", priority=5, later_ms=300),
        _claim("b-tie"),
        _claim("a-tie"),
        _claim("unsure", confidence=0.5),
        _claim("early-high", priority=5),
        _claim("sure-low", priority=1, confidence=0.9),
    ]
    order = [c.assistant_key for c in ranked(claims)]
    assert order == ["early-high", "late-high", "sure-low", "a-tie", "b-tie", "unsure"]
    assert [c.assistant_key for c in ranked(list(reversed(claims)))] == order
