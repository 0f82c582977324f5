"""Claim resolution is deterministic: priority, then confidence, then claim time, then key;
a turn's claims are read from the whole log, however many pages they fill."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import Connection

from factories import make_conversation
from hansa.domain import event
from hansa.domain.base import new_id
from hansa.domain.claims import Claim, ClaimTerms, Justification, ranked
from hansa.engine.runtime.services import Services
from hansa.engine.runtime.setup import build_services
from hansa.engine.triggers.claims import turn_claims
from hansa.models.function import FunctionModel
from hansa.settings import Settings
from hansa.store import conversations, events

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


@pytest.fixture
async def services(tmp_path: Path) -> AsyncIterator[Services]:
    settings = Settings(database_url=f"sqlite:///{tmp_path}/h.db", startup_retry_seconds=0)
    built = await build_services(settings, model=FunctionModel(lambda m, s, p: "unused"))
    yield built
    await built.db.dispose()


@pytest.mark.anyio
async def test_every_claim_of_the_turn_is_read_past_one_page(services: Services) -> None:
    convo = make_conversation()
    turn_id, other_turn = new_id(), new_id()
    count = events.PAGE + 20  # more claims than one read of the log returns

    def claim(key: str, turn: str) -> events.NewEvent:
        made = _claim(key)
        data = event.ClaimData(
            assistant_key=made.assistant_key, justification=made.justification, claim=made.claim
        )
        return events.NewEvent(payload=data, turn_id=turn)

    def store(conn: Connection) -> None:
        conversations.create(conn, convo)
        news = [claim(f"bot{i}", turn_id) for i in range(count)]
        news.insert(events.PAGE - 1, claim("elsewhere", other_turn))
        events.append(conn, convo.tenant_id, convo.id, news, T0)

    await services.db.write(store)

    found = await turn_claims(services, convo.tenant_id, convo.id, turn_id, 0)

    assert [c.assistant_key for c in found] == [f"bot{i}" for i in range(count)]
