"""Completion webhooks: which events end a turn, a run or a session, and their delivery log.

``completion(event)`` is pure: the store calls it on every committed transaction's events
and queues a delivery for each webhook that listens to the type it returns.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from hansa.domain import event
from hansa.domain.base import Wire
from hansa.domain.run import RunStatus

EVENT_TYPES = (
    "run.completed",
    "run.failed",
    "run.cancelled",
    "turn.completed",
    "turn.failed",
    "turn.cancelled",
    "session.ended",
)
"""What a webhook may listen to."""
AGENT_MESSAGE = "agent.message"
"""What an external assistant's message webhook carries (a message addressed to it); not
one of ``EVENT_TYPES``: only registering the agent with ``webhooks.message`` makes one."""

_RUN_ENDS = {
    RunStatus.COMPLETED: "run.completed",
    RunStatus.FAILED: "run.failed",
    RunStatus.CANCELLED: "run.cancelled",
}
_SESSION_ENDS = ("stopped", "completed", "failed")


class Webhook(Wire):
    """A stored webhook (its secret is not part of it: it is read only to sign)."""

    id: str
    tenant_id: str
    url: str
    events: list[str]
    created_at: datetime


class DeliveryStatus(StrEnum):
    """An attempt's outcome: ``succeeded`` (2xx), ``retrying`` (another attempt is queued),
    ``failed`` (the last attempt, or one that may not be retried)."""

    SUCCEEDED = "succeeded"
    RETRYING = "retrying"
    FAILED = "failed"


class Delivery(Wire):
    """One attempt to deliver one event."""

    id: int
    webhook_id: str
    delivery_id: str
    event: str
    attempt: int
    status: DeliveryStatus
    response_code: int | None
    error: str | None
    duration_ms: float
    next_attempt_at: datetime | None
    created_at: datetime


def completion(ev: event.Event) -> tuple[str, dict[str, Any]] | None:
    """The webhook event type and data of ``ev`` when it ends a turn, a run or a session."""
    data = ev.payload
    ids: dict[str, Any] = {"conversationId": ev.conversation_id, "seq": ev.seq}
    if isinstance(data, event.DoneData) and ev.turn_id is not None:
        return f"turn.{data.status}", {**ids, "turnId": ev.turn_id, "status": data.status}
    if isinstance(data, event.RunStatusData) and data.status in _RUN_ENDS:
        out = {**ids, "runId": ev.run_id, "status": data.status.value}
        return _RUN_ENDS[data.status], out
    if isinstance(data, event.SessionStatusData) and data.status in _SESSION_ENDS:
        out = {**ids, "sessionId": data.session_id, "status": data.status, "reason": data.reason}
        return "session.ended", out
    return None
