"""Store schedules and queue their firings: create, change (pause, resume), delete, fire now.

A schedule's next firing is a ``schedule`` job keyed ``schedule:<id>``, due at its next cron
time; every change that moves that time ends the queued job (its epoch moves on, so a firing
in flight writes nothing) and queues a new one, in the change's transaction.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Connection

from hansa import errors
from hansa.domain import job
from hansa.domain.base import new_id
from hansa.domain.schedule import Action, MessageAction, Schedule
from hansa.engine.runtime.services import Services
from hansa.engine.schedules import cron
from hansa.store import conversations, projects, queue
from hansa.store import schedules as rows


def key(schedule_id: str) -> str:
    """The key of a schedule's cron firings."""
    return f"schedule:{schedule_id}"


def now_key(schedule_id: str) -> str:
    """The key of the firings asked for now (``POST /api/schedules/{id}/fire``)."""
    return f"schedule-now:{schedule_id}"


def queue_firing(
    conn: Connection, services: Services, schedule: Schedule, due: datetime, now: datetime
) -> None:
    """Queue the schedule's firing for ``due`` (in the caller's transaction)."""
    work = job.payload(job.ScheduleJob(schedule_id=schedule.id, due=due))
    queue.enqueue(
        conn, schedule.tenant_id, job.JobKind.SCHEDULE, work, now, key=key(schedule.id), run_at=due
    )


def _check_action(conn: Connection, services: Services, tenant_id: str, action: Action) -> None:
    if action.project_id is not None:
        projects.get(conn, tenant_id, action.project_id)
    if action.conversation_id is not None:
        try:
            conversations.get(conn, tenant_id, action.conversation_id)
        except errors.NotFound as exc:
            raise errors.InvalidInput(
                f"conversation {action.conversation_id} not found",
                details={"field": "action.conversationId"},
            ) from exc
    if isinstance(action, MessageAction):
        text = action.content.strip()
        if not text or len(text) > services.settings.max_message_chars:
            raise errors.InvalidInput(
                f"content must hold 1 to {services.settings.max_message_chars} characters",
                details={"field": "action.content"},
            )
        if action.agent_id is not None:
            services.agents.addressable(conn, tenant_id, action.agent_id, field="action.agentId")
    elif len(action.tasks) > services.settings.max_tasks_per_run:
        raise errors.InvalidInput(
            f"a run has at most {services.settings.max_tasks_per_run} tasks",
            details={"field": "action.tasks"},
        )


def _check_cron(services: Services, expression: str, timezone: str, now: datetime) -> None:
    cron.check(expression, timezone, now, services.settings.schedule_min_interval_seconds)


async def create(
    services: Services,
    tenant_id: str,
    *,
    name: str,
    expression: str,
    timezone: str,
    action: Action,
    enabled: bool = True,
) -> Schedule:
    """Store a schedule and, unless paused, queue its first firing (one transaction)."""
    now = services.clock()
    _check_cron(services, expression, timezone, now)
    due = cron.next_after(expression, timezone, now)
    schedule = Schedule(
        id=new_id(),
        tenant_id=tenant_id,
        name=name,
        cron=expression,
        timezone=timezone,
        action=action,
        enabled=enabled,
        next_run_at=due if enabled else None,
        last_fired_at=None,
        last_error=None,
        fired=0,
        created_at=now,
        updated_at=now,
    )
    limit = services.settings.max_schedules_per_tenant

    def store(conn: Connection) -> None:
        if rows.count(conn, tenant_id) >= limit:
            setting = "HANSA_MAX_SCHEDULES_PER_TENANT"
            raise errors.InvalidInput.past_limit(limit, "schedules", setting, "name")
        _check_action(conn, services, tenant_id, action)
        rows.create(conn, schedule)
        if enabled:
            queue_firing(conn, services, schedule, due, now)

    await services.db.write(store)
    return schedule


@dataclass(frozen=True)
class Change:
    """What ``PATCH /api/schedules/{id}`` changes (None: unchanged)."""

    name: str | None = None
    expression: str | None = None
    timezone: str | None = None
    action: Action | None = None
    enabled: bool | None = None


async def update(services: Services, tenant_id: str, schedule_id: str, change: Change) -> Schedule:
    """Change a schedule; a new time, zone, pause or resume re-queues its firing."""
    now = services.clock()

    def go(conn: Connection) -> Schedule:
        current = rows.get(conn, tenant_id, schedule_id, lock=True)
        expression = change.expression or current.cron
        timezone = change.timezone or current.timezone
        enabled = current.enabled if change.enabled is None else change.enabled
        values: dict[str, object] = {"updated_at": now}
        if change.name is not None:
            values["name"] = change.name
        if change.action is not None:
            _check_action(conn, services, tenant_id, change.action)
            values["action"] = change.action.model_dump(mode="json", by_alias=True)
        moved = (expression, timezone, enabled) != (current.cron, current.timezone, current.enabled)
        if moved:
            _check_cron(services, expression, timezone, now)
            queue.cancel_key_job(conn, key(schedule_id), {}, now)
            due = cron.next_after(expression, timezone, now) if enabled else None
            values.update(cron=expression, timezone=timezone, enabled=enabled, next_run_at=due)
        rows.update(conn, tenant_id, schedule_id, **values)
        updated = rows.get(conn, tenant_id, schedule_id)
        if moved and updated.next_run_at is not None:
            queue_firing(conn, services, updated, updated.next_run_at, now)
        return updated

    return await services.db.write(go)


async def delete(services: Services, tenant_id: str, schedule_id: str) -> None:
    """Forget a schedule and end its queued firings (one transaction)."""
    now = services.clock()

    def go(conn: Connection) -> None:
        rows.get(conn, tenant_id, schedule_id, lock=True)
        queue.cancel_key_job(conn, key(schedule_id), {}, now)
        queue.cancel_key_job(conn, now_key(schedule_id), {}, now)
        rows.delete(conn, tenant_id, schedule_id)

    await services.db.write(go)


async def fire_now(services: Services, tenant_id: str, schedule_id: str) -> Schedule:
    """Queue a firing due now, on the path of every firing (a job; paused schedules too).

    It queues no firing after it: the schedule's own next firing stays as it was.
    """
    now = services.clock()

    def go(conn: Connection) -> Schedule:
        found = rows.get(conn, tenant_id, schedule_id)
        work = job.payload(job.ScheduleJob(schedule_id=schedule_id, due=now, now=True))
        queue.enqueue(conn, tenant_id, job.JobKind.SCHEDULE, work, now, key=now_key(schedule_id))
        return found

    return await services.db.write(go)
