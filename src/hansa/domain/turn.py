"""Turns: the processing of one user message, from receipt to ``done``."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from hansa.domain.base import Wire


class TurnStatus(StrEnum):
    """A turn's lifecycle: queued -> running -> completed | failed | cancelled."""

    QUEUED = "queued"
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"


TURN_TRANSITIONS: dict[TurnStatus, frozenset[TurnStatus]] = {
    # a turn can end without running an agent: it fails early (its conversation was
    # archived meanwhile) or completes early (a human agent holds the conversation)
    TurnStatus.QUEUED: frozenset(
        {TurnStatus.RUNNING, TurnStatus.COMPLETED, TurnStatus.FAILED, TurnStatus.CANCELLED}
    ),
    # running -> running is a takeover by another worker after a lease expired
    TurnStatus.RUNNING: frozenset(
        {TurnStatus.RUNNING, TurnStatus.COMPLETED, TurnStatus.FAILED, TurnStatus.CANCELLED}
    ),
    TurnStatus.COMPLETED: frozenset(),
    TurnStatus.FAILED: frozenset(),
    TurnStatus.CANCELLED: frozenset(),
}


class Turn(Wire):
    """One stored turn."""

    id: str
    conversation_id: str
    message_id: str
    status: TurnStatus
    agent_id: str | None
    created_at: datetime
    finished_at: datetime | None
    error: str | None
