"""Schedules: cron times in a time zone that post a message or start a run."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Response
from pydantic import Field, StrictBool, field_validator

from hansa.api.deps import ServicesDep, TenantDep
from hansa.api.models.base import answers, never_null
from hansa.api.models.hooks import Fired, ScheduleOut
from hansa.api.schemas import AgentId, Body, Id, TaskIn
from hansa.domain import schedule
from hansa.engine.schedules import service
from hansa.store import schedules as rows

router = APIRouter(prefix="/api/schedules", tags=["schedules"])

Cron = Annotated[str, Field(min_length=1, max_length=200, examples=["0 9 * * 1-5"])]
Zone = Annotated[str, Field(min_length=1, max_length=64, examples=["Europe/Berlin"])]


class MessageActionIn(Body):
    """Post ``content`` as a user message (a turn answers it), to ``conversationId`` or to a
    new conversation at each firing."""

    type: Literal["message"]
    conversation_id: Id | None = None
    agent_id: AgentId | None = None
    project_id: Id | None = None
    content: str = Field(min_length=1, max_length=100_000)


class RunActionIn(Body):
    """Create a run (the body of ``POST /api/runs``) and approve it."""

    type: Literal["run"]
    conversation_id: Id
    project_id: Id | None = None
    title: str = Field(min_length=1, max_length=200)
    tasks: list[TaskIn] = Field(min_length=1, max_length=500)


ActionIn = Annotated[MessageActionIn | RunActionIn, Field(discriminator="type")]


class ScheduleCreate(Body):
    """``POST /api/schedules``."""

    name: str = Field(min_length=1, max_length=200)
    cron: Cron
    timezone: Zone = "UTC"
    action: ActionIn
    enabled: StrictBool = True


class ScheduleChange(Body, json_schema_extra=never_null):
    """``PATCH /api/schedules/{id}``: what changes (``enabled: false`` pauses it)."""

    name: str | None = Field(default=None, min_length=1, max_length=200)
    cron: Cron | None = None
    timezone: Zone | None = None
    action: ActionIn | None = None
    enabled: StrictBool | None = None

    @field_validator("*", mode="before")
    @classmethod
    def _not_null(cls, value: Any) -> Any:
        # absent means "unchanged"; a schedule cannot be without any of these
        if value is None:
            raise ValueError("may be left out but not null")
        return value


def _action(body: MessageActionIn | RunActionIn) -> schedule.MessageAction | schedule.RunAction:
    data = body.model_dump(by_alias=True)
    if isinstance(body, MessageActionIn):
        return schedule.MessageAction.model_validate(data)
    return schedule.RunAction.model_validate(data)


@router.post("", status_code=201, response_model=ScheduleOut, responses=answers(None, 404))
async def create_schedule(
    body: ScheduleCreate, services: ServicesDep, tenant: TenantDep
) -> schedule.Schedule:
    """Store a schedule; its first firing is queued for its next cron time (422 names a bad
    ``cron`` or ``timezone``)."""
    created = await service.create(
        services,
        tenant,
        name=body.name,
        expression=body.cron,
        timezone=body.timezone,
        action=_action(body.action),
        enabled=body.enabled,
    )
    return created


@router.get("", response_model=list[ScheduleOut])
async def list_schedules(services: ServicesDep, tenant: TenantDep) -> list[schedule.Schedule]:
    """The tenant's schedules, oldest first."""
    return await services.db.read(rows.list_all, tenant)


@router.get("/{schedule_id}", response_model=ScheduleOut, responses=answers(None, 404))
async def get_schedule(
    schedule_id: str, services: ServicesDep, tenant: TenantDep
) -> schedule.Schedule:
    """One schedule, with its next firing (``nextRunAt``, UTC)."""
    return await services.db.read(rows.get, tenant, schedule_id)


@router.patch("/{schedule_id}", response_model=ScheduleOut, responses=answers(None, 404))
async def update_schedule(
    schedule_id: str, body: ScheduleChange, services: ServicesDep, tenant: TenantDep
) -> schedule.Schedule:
    """Change a schedule; ``enabled: false`` pauses it (no firing is queued), ``true``
    resumes it from its next cron time."""
    change = service.Change(
        name=body.name,
        expression=body.cron,
        timezone=body.timezone,
        action=_action(body.action) if body.action is not None else None,
        enabled=body.enabled,
    )
    return await service.update(services, tenant, schedule_id, change)


@router.delete("/{schedule_id}", status_code=204, responses=answers(None, 404))
async def delete_schedule(schedule_id: str, services: ServicesDep, tenant: TenantDep) -> Response:
    """Forget a schedule; its queued firings end."""
    await service.delete(services, tenant, schedule_id)
    return Response(status_code=204)


@router.post(
    "/{schedule_id}/fire",
    status_code=202,
    responses=answers(None, 404),
)
async def fire_schedule(schedule_id: str, services: ServicesDep, tenant: TenantDep) -> Fired:
    """Fire now, on the path of every firing (a job a worker claims); the schedule's next
    cron firing stays as it was. Paused schedules fire too."""
    await service.fire_now(services, tenant, schedule_id)
    return Fired(schedule_id=schedule_id, queued_at=services.clock())
