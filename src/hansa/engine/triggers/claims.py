"""Claim/defer turn-taking on a message: the matched ``route`` actions claim it, external
participants may claim it within the window, one responds.

Local claims resolve at once. When the conversation has external participants
(``participants`` holds an id that is not in the roster), the claims and the open window
(``claimWindow`` in the conversation's metadata) are committed first, then the turn waits
until the window closes and reads every claim of the turn from the log, so two racing
claims still give exactly one ``assistant.action.respond``.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from pydantic import Field

from hansa import errors
from hansa.domain import claims, event
from hansa.domain.base import Wire
from hansa.domain.conversation import Conversation
from hansa.domain.rules import Firing
from hansa.engine.runtime.recorder import Batch, Recorder
from hansa.engine.runtime.services import Services
from hansa.engine.triggers.actions import Scene
from hansa.store import conversations, events, turns

WINDOW_KEY = "claimWindow"


@dataclass(frozen=True)
class Resolved:
    """Who answers: a local agent (the route stage uses it) or an external assistant."""

    winner: claims.Claim
    rule_id: str | None


def local_claims(firings: list[Firing], now: datetime, window: timedelta) -> list[claims.Claim]:
    """One claim per matched ``route`` action, with its rule's conditions as justification."""
    found: list[claims.Claim] = []
    for firing in firings:
        if not firing.matched:
            continue
        for action in firing.actions:
            if action.type != "route":
                continue
            params = action.params
            found.append(
                claims.Claim(
                    assistant_key=str(params["agentId"]),
                    justification=claims.Justification(
                        reason=str(params.get("reason") or f"rule {firing.rule_id}"),
                        trigger_rule=firing.rule_id,
                        conditions=firing.conditions,
                        confidence=float(params.get("confidence", 1.0)),
                    ),
                    claim=claims.ClaimTerms(
                        claimed_at=now, expires_at=now + window, priority=firing.priority
                    ),
                )
            )
    return found


def external_participants(services: Services, convo: Conversation) -> list[str]:
    """Participants that are not agents of the roster (registered agents, outside
    assistants): they claim over HTTP with their own tokens."""
    named = convo.metadata.get("participants") or []
    return [str(p) for p in named if services.agents.built_in(str(p)) is None]


def announce(batch: Batch, found: list[claims.Claim], agent_id: str) -> None:
    """The claims, as events."""
    for c in found:
        batch.event(
            event.ClaimData(
                assistant_key=c.assistant_key,
                justification=c.justification,
                claim=c.claim,
                external=c.external,
            ),
            agent_id=agent_id,
        )


def set_window(scene: Scene, turn_id: str, expires_at: datetime | None) -> None:
    """Record the open window (or, with None, its end) for ``POST /claims`` to check, in
    the scene's transaction."""
    window = (
        None if expires_at is None else {"turnId": turn_id, "expiresAt": expires_at.isoformat()}
    )
    now = scene.services.clock()
    scene.batch.then(
        lambda conn: conversations.set_metadata(
            conn, scene.tenant_id, scene.conversation_id, WINDOW_KEY, window, now
        )
    )


async def wait_window(expires_at: datetime, services: Services) -> None:
    """Sleep until the window closes."""
    left = (expires_at - services.clock()).total_seconds()
    if left > 0:
        await asyncio.sleep(left)


async def turn_claims(
    services: Services, tenant_id: str, conversation_id: str, turn_id: str, after: int
) -> list[claims.Claim]:
    """Every claim of the turn in the log (local and external), however many pages."""

    def read(conn: Any) -> list[event.Event]:
        found: list[event.Event] = []
        cursor = after
        while True:
            page = events.read_after(conn, tenant_id, conversation_id, cursor)
            found += page
            if len(page) < events.PAGE:
                return found
            cursor = page[-1].seq

    found: list[claims.Claim] = []
    for ev in await services.db.read(read):
        data = ev.payload
        if ev.turn_id == turn_id and isinstance(data, event.ClaimData):
            found.append(
                claims.Claim(
                    assistant_key=data.assistant_key,
                    justification=data.justification,
                    claim=data.claim,
                    external=data.external,
                )
            )
    return found


def resolve(
    batch: Batch, found: list[claims.Claim], observers: list[str], agent_id: str
) -> Resolved:
    """Defer every claim but the first in rank, one observe for the rest, one respond."""
    order = claims.ranked(found)
    winner = order[0]
    for loser in order[1:]:
        batch.event(
            event.DeferData(
                assistant_key=loser.assistant_key,
                justification=loser.justification,
                deferred_to=winner.assistant_key,
            ),
            agent_id=agent_id,
        )
    claimed = {c.assistant_key for c in order}
    quiet = [key for key in observers if key not in claimed]
    if quiet:
        batch.event(
            event.ObserveData(
                assistant_keys=quiet,
                justification=claims.Justification(reason="no rule of theirs matched"),
            ),
            agent_id=agent_id,
        )
    batch.event(
        event.RespondData(
            assistant_key=winner.assistant_key,
            justification=winner.justification,
            claim=winner.claim,
            external=winner.external,
        ),
        agent_id=agent_id,
    )
    return Resolved(winner, winner.justification.trigger_rule)


class Deferred(errors.Conflict):
    """The agent deferred on this message: the one it deferred to answers it."""

    code = "deferred"


_DEFERS = ("assistant.intent.defer",)


def refuse_if_deferred(conn: Any, tenant_id: str, conversation_id: str, agent_id: str) -> None:
    """409 ``deferred`` when ``agent_id`` deferred on the conversation's latest message
    (its latest turn): turn-taking binds, only the winner answers it (seed 001: no "nosy"
    assistant). A newer message frees it again."""
    latest = turns.of_conversation(conn, tenant_id, conversation_id, limit=1)
    if not latest:
        return
    turn_id = latest[0].id
    for ev in events.of_turn(conn, tenant_id, latest[0], _DEFERS):
        data = ev.payload
        if isinstance(data, event.DeferData) and data.assistant_key == agent_id:
            raise Deferred(
                f"{agent_id} deferred to {data.deferred_to} on this message: "
                f"{data.deferred_to} answers it",
                details={
                    "turnId": turn_id,
                    "deferredTo": data.deferred_to,
                    "reason": data.justification.reason,
                },
            )


class ClaimWindowClosed(errors.Conflict):
    """The claim came after the window closed, or for another turn."""

    code = "claim_window_closed"


class OutsideClaim(Wire):
    """``POST /api/conversations/{id}/claims``: an external assistant claims a message."""

    turn_id: str = Field(max_length=36)
    assistant_key: str | None = Field(default=None, min_length=1, max_length=64)
    """Who claims; an agent's token may leave it out (it claims as itself)."""
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)
    priority: int = Field(default=0, ge=-10_000, le=10_000)
    justification: str = Field(default="", max_length=500)


async def claim_from_outside(
    services: Services,
    tenant_id: str,
    conversation_id: str,
    asked: OutsideClaim,
    *,
    operator: str | None = None,
) -> claims.Claim:
    """Record an external participant's claim while the turn's window is open (409
    ``claim_window_closed`` after it). ``operator`` names the key that claims on the
    participant's behalf (None: the participant's own token); its justification says so."""
    key = asked.assistant_key
    batch = Batch(conversation_id, asked.turn_id)
    reason = asked.justification or "claimed over HTTP"
    if operator is not None:
        reason = f"{reason} (claimed for it by operator {operator})"[:500]

    def go(conn: Any) -> claims.Claim:
        convo = conversations.get(conn, tenant_id, conversation_id)  # another tenant's: 404
        if key is None:
            raise errors.InvalidInput(
                "assistantKey: name the participant that claims",
                details={"field": "assistantKey"},
            )
        if key not in external_participants(services, convo):
            raise errors.InvalidInput(
                f"{key!r} is not an external participant of this conversation",
                details={"field": "assistantKey"},
            )
        window = convo.metadata.get(WINDOW_KEY) or {}
        now = services.clock()
        expires = window.get("expiresAt")
        if window.get("turnId") != asked.turn_id or expires is None:
            raise ClaimWindowClosed("the claim window of this turn is closed")
        expires_at = datetime.fromisoformat(expires)
        if now > expires_at:
            raise ClaimWindowClosed("the claim window of this turn is closed")
        made = claims.Claim(
            assistant_key=key,
            justification=claims.Justification(reason=reason, confidence=asked.confidence),
            claim=claims.ClaimTerms(claimed_at=now, expires_at=expires_at, priority=asked.priority),
            external=True,
        )
        announce(batch, [made], services.supervisor.id)
        return made

    return await Recorder(services, tenant_id, conversation_id).write_then(batch, go)
