"""Jobs: every unit of background work, claimed with a lease."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from hansa.domain.base import Wire
from hansa.domain.rules import Trigger


class JobStatus(StrEnum):
    """queued -> running -> done | failed; running -> queued when a lease expires."""

    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


class JobKind(StrEnum):
    """What a job does."""

    TURN = "turn"
    RUN = "run"
    """Drive one run: start its tasks group by group, execute them, record their results
    (keyed ``run:<id>``, so one worker at a time drives a run)."""
    RUN_SUMMARY = "run_summary"
    """Hans validates a finished run and answers (keyed by conversation, like turns)."""
    TRIGGER = "trigger"
    """Rules fire for something other than a message (a new conversation, a handoff, a
    context change); keyed by the conversation, like turns."""
    TIMER = "timer"
    """A ``timer.fired`` rule's next firing, due at ``run_at`` (keyed ``timer:<ruleId>``:
    at most one live per rule)."""
    CONVERSATION_SUMMARY = "conversation_summary"
    """Fold a conversation's older messages into its rolling summary (keyed
    ``summary:<conversationId>``: summaries of one conversation run one at a time, and
    never hold up its turns)."""
    SESSION_STEP = "session_step"
    """One step of an agent session (keyed ``session:<id>``: one step at a time), due at
    ``run_at`` when the last step put it off."""
    SCHEDULE = "schedule"
    """A schedule's next firing, due at its next cron time (keyed ``schedule:<id>``: at most
    one live per schedule; a firing asked for now is keyed ``schedule-now:<id>``)."""
    WEBHOOK_DELIVERY = "webhook_delivery"
    """One attempt to deliver a completion event to a webhook; a failed attempt queues the
    next one, due after its backoff."""


class Job(Wire):
    """A claimed job, as a worker sees it."""

    id: int
    tenant_id: str
    kind: JobKind
    key: str | None
    """Jobs with the same key never run at the same time (the conversation id for turns)."""
    payload: dict[str, Any]
    attempts: int
    max_attempts: int
    """Claims after which the job's work is given up (and said so), instead of tried again."""
    epoch: int
    """Bumped at each claim; every write made for the job checks it."""
    lease_owner: str
    lease_until: datetime


class TurnJob(Wire):
    """The payload of a turn's job."""

    turn_id: str
    conversation_id: str
    message_id: str
    active_agent_id: str | None = None
    """The agent the caller asked for, if any."""
    addressed: bool = False
    """The message was addressed to ``active_agent_id`` (``POST /api/webhook/message``'s
    ``to``): that agent answers it, whatever the keywords say (a rule may still route)."""
    project_context: dict[str, Any] | None = None
    """Project context sent with the message, merged over the stored project's."""


class RunJob(Wire):
    """The payload of a run job."""

    run_id: str
    conversation_id: str


class TriggerJob(Wire):
    """The payload of a trigger job."""

    trigger: Trigger
    conversation_id: str
    facts: dict[str, Any] = {}
    """Facts of the moment beyond the conversation's own (``handoff``, ``context``)."""


class TimerJob(Wire):
    """The payload of a timer job."""

    rule_id: str
    fired: int = 0
    """How many times the rule's timer fired before this one."""


class SummaryJob(Wire):
    """The payload of a run summary job."""

    run_id: str
    tenant_id: str


class SessionStepJob(Wire):
    """The payload of a session step's job."""

    session_id: str
    iteration: int
    """The step this job records (the session's ``iteration + 1`` when it was queued); a job
    whose session has moved on is stale and ends without a step."""


class ConversationSummaryJob(Wire):
    """The payload of a conversation summary's job."""

    conversation_id: str
    history_tokens: int = 0
    """The prompt's history budget (estimated tokens) of the turn that queued the job (0:
    unknown): the fold keeps ``summary_fold_share`` of it word for word at most."""


class ScheduleJob(Wire):
    """The payload of a schedule's firing."""

    schedule_id: str
    due: datetime
    """The cron time this firing is for (UTC)."""
    now: bool = False
    """Asked for now (``POST /api/schedules/{id}/fire``): fires once, queues nothing after."""


class WebhookDeliveryJob(Wire):
    """The payload of one delivery attempt."""

    webhook_id: str
    delivery_id: str
    """Sent as ``X-Hansa-Delivery``; the same for every attempt of one event."""
    event: str
    """The event's type, sent as ``X-Hansa-Event`` (``run.completed``…)."""
    body: dict[str, Any]
    """``{id, type, createdAt, data}``, signed as sent."""
    attempt: int = 1


def payload(data: Wire) -> dict[str, Any]:
    """A job payload as the queue stores it (camelCase JSON)."""
    return data.model_dump(mode="json", by_alias=True)
