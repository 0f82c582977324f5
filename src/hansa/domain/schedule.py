"""Schedules: a cron expression in a time zone that posts a message or starts a run.

A schedule is data; ``engine/schedules`` fires it. Its next firing is a job due at the next
cron time (``JobKind.SCHEDULE``); firing and queuing the one after happen in one transaction.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import Field

from hansa.domain.base import Wire


class MessageAction(Wire):
    """Post ``content`` as a user message: a turn answers it."""

    type: Literal["message"] = "message"
    conversation_id: str | None = None
    """The conversation it is posted to; None: a new conversation for each firing."""
    agent_id: str | None = None
    """The agent asked to answer (as ``activeAgentId`` of a posted message)."""
    project_id: str | None = None
    """The project of the new conversations (when ``conversation_id`` is None)."""
    content: str


class RunTask(Wire):
    """One task of a scheduled run, as ``POST /api/runs`` takes it."""

    step_group: str
    task_type: str
    parameters: dict[str, Any] = {}
    created_by_agent_id: str
    summary: str = ""
    sequence_order: int = 0
    project_id: str | None = None
    ref: str | None = None


class RunAction(Wire):
    """Create a run from ``tasks`` (as ``POST /api/runs``) and approve it."""

    type: Literal["run"] = "run"
    conversation_id: str
    project_id: str | None = None
    title: str
    tasks: list[RunTask]


Action = Annotated[MessageAction | RunAction, Field(discriminator="type")]
"""What a firing does."""


class Schedule(Wire):
    """A stored schedule."""

    id: str
    tenant_id: str
    name: str
    cron: str
    """Five fields (minute hour day month weekday) or six (seconds last)."""
    timezone: str
    """An IANA zone (``Europe/Berlin``); the cron's times are its wall-clock times."""
    action: Action
    enabled: bool
    """False while paused: no firing is queued."""
    next_run_at: datetime | None
    """The next firing (UTC); None while paused."""
    last_fired_at: datetime | None
    last_error: str | None
    """Why the last firing did nothing (a conversation gone, a law refused the run), or None."""
    fired: int
    """Firings so far."""
    created_at: datetime
    updated_at: datetime
