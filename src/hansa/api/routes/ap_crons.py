"""The Agent Protocol's crons under ``/ap`` (``client.crons.*``): a cron is a Hansa schedule
(``engine/schedules``, ``/api/schedules``) whose action posts a message.

``crons.create_for_thread`` posts the input's last user message into the thread's
conversation at each firing, for the assistant it names (Hans routes); ``crons.create``
(a stateless cron) opens a new conversation for each firing, which is kept
(``on_run_completed`` ``keep``; ``delete`` is refused: conversations are not deleted).
``schedule`` is a cron expression in ``timezone`` (UTC unless given), held to the schedules'
limits (``HANSA_SCHEDULE_MIN_INTERVAL_SECONDS``…). ``end_time`` is refused (422: a schedule
runs until it is paused or deleted); ``metadata``'s ``name`` names the schedule, other fields of
the protocol are accepted and not used. ``search``, ``count``, ``update`` and ``delete`` see
the tenant's message schedules, whether made here or at ``/api/schedules``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Response
from pydantic import BeforeValidator, Field
from sqlalchemy import Connection

from hansa import errors
from hansa.api import ap_shapes as shapes
from hansa.api.deps import ServicesDep, TenantDep
from hansa.api.models.agent_protocol import CronOut
from hansa.api.models.base import answers
from hansa.api.routes.ap_threads import conversation_of
from hansa.domain.schedule import MessageAction, Schedule
from hansa.engine.runtime.services import Services
from hansa.engine.schedules import service
from hansa.store import schedules as rows
from hansa.store import threads

router = APIRouter(prefix="/ap", tags=["agent-protocol"])


def _no_end(value: Any) -> None:
    if value is not None:
        raise ValueError("end_time is not supported: a cron runs until it is disabled or deleted")
    return None


Never = Annotated[None, BeforeValidator(_no_end)]
"""A field of the protocol Hansa refuses any value of (only null)."""


class CronCreate(shapes.Open):
    """A cron: when (``schedule`` in ``timezone``), for whom, and the message it posts."""

    schedule: str = Field(min_length=1, max_length=200)
    assistant_id: str = Field(min_length=1, max_length=100)
    input: dict[str, Any] | None = None
    timezone: str | None = Field(default=None, min_length=1, max_length=64)
    enabled: bool = True
    metadata: dict[str, Any] | None = None
    end_time: Never = None
    on_run_completed: Literal["keep"] | None = None
    """``delete`` is not supported: each firing's conversation is kept."""


class CronPatch(shapes.Open):
    schedule: str | None = Field(default=None, min_length=1, max_length=200)
    timezone: str | None = Field(default=None, min_length=1, max_length=64)
    enabled: bool | None = None
    input: dict[str, Any] | None = None
    end_time: Never = None


class CronSearch(shapes.Open):
    assistant_id: str | None = Field(default=None, max_length=100)
    thread_id: str | None = Field(default=None, max_length=200)
    enabled: bool | None = None
    limit: shapes.Count = Field(default=10, ge=1, le=100)
    offset: shapes.Count = Field(default=0, ge=0, le=10_000)


def _text(assistant_id: str, given: dict[str, Any] | None) -> str:
    """The message a firing posts: the input's last user message."""
    return shapes.text_of(shapes.ApRunCreate(assistant_id=assistant_id, input=given))


def _message(schedule: Schedule, cron_id: str) -> MessageAction:
    if not isinstance(schedule.action, MessageAction):
        raise errors.NotFound(f"cron {cron_id} not found: schedule {cron_id} starts a run")
    return schedule.action


def _cron(services: Services, conn: Connection, tenant: str, s: Schedule) -> CronOut:
    action = _message(s, s.id)
    assistant = action.agent_id or services.supervisor.id
    cid = action.conversation_id
    thread = None if cid is None else threads.thread_id_of(conn, tenant, cid)
    message = {"role": "user", "content": action.content}
    return CronOut(
        cron_id=s.id,
        assistant_id=assistant,
        thread_id=thread,
        on_run_completed="keep" if thread is None else None,
        end_time=None,
        schedule=s.cron,
        timezone=s.timezone,
        created_at=s.created_at,
        updated_at=s.updated_at,
        payload={"assistant_id": assistant, "input": {"messages": [message]}},
        user_id=None,
        next_run_date=s.next_run_at,
        metadata={"name": s.name},
        enabled=s.enabled,
    )


async def _out(services: Services, tenant: str, s: Schedule) -> CronOut:
    return await services.db.read(lambda conn: _cron(services, conn, tenant, s))


async def _create(
    services: Services, tenant: str, body: CronCreate, thread_id: str | None
) -> CronOut:
    await services.agents.require(tenant, body.assistant_id)
    cid = None if thread_id is None else await conversation_of(services, tenant, thread_id)
    agent = None if body.assistant_id == services.supervisor.id else body.assistant_id
    action = MessageAction(
        conversation_id=cid, agent_id=agent, content=_text(body.assistant_id, body.input)
    )
    named = (body.metadata or {}).get("name")
    name = named if isinstance(named, str) and 0 < len(named) <= 200 else None
    made = await service.create(
        services,
        tenant,
        name=name or f"cron of {body.assistant_id}",
        expression=body.schedule,
        timezone=body.timezone or "UTC",
        action=action,
        enabled=body.enabled,
    )
    return await _out(services, tenant, made)


@router.post("/runs/crons", responses=answers(None, 404, 422))
async def create_cron(body: CronCreate, services: ServicesDep, tenant: TenantDep) -> CronOut:
    """A cron that opens a new thread at each firing (a schedule posting a message)."""
    return await _create(services, tenant, body, None)


@router.post("/threads/{thread_id}/runs/crons", responses=answers(None, 404, 422))
async def create_thread_cron(
    thread_id: str, body: CronCreate, services: ServicesDep, tenant: TenantDep
) -> CronOut:
    """A cron that posts into the thread at each firing."""
    return await _create(services, tenant, body, thread_id)


async def _found(services: Services, tenant: str, body: CronSearch) -> list[CronOut]:
    def read(conn: Connection) -> list[CronOut]:
        every = [s for s in rows.list_all(conn, tenant) if isinstance(s.action, MessageAction)]
        crons = [_cron(services, conn, tenant, s) for s in every]
        return [
            c
            for c in crons
            if body.assistant_id in (None, c.assistant_id)
            and body.thread_id in (None, c.thread_id)
            and body.enabled in (None, c.enabled)
        ]

    return await services.db.read(read)


@router.post("/runs/crons/search")
async def search_crons(body: CronSearch, services: ServicesDep, tenant: TenantDep) -> list[CronOut]:
    """The tenant's crons (message schedules), oldest first."""
    found = await _found(services, tenant, body)
    return found[body.offset : body.offset + body.limit]


@router.post("/runs/crons/count", response_model=None, responses=answers(int))
async def count_crons(body: CronSearch, services: ServicesDep, tenant: TenantDep) -> int:
    """How many crons a search finds."""
    return len(await _found(services, tenant, body))


async def _schedule(services: Services, tenant: str, cron_id: str) -> Schedule:
    found = await services.db.read(lambda conn: rows.get(conn, tenant, cron_id))
    _message(found, cron_id)
    return found


@router.patch("/runs/crons/{cron_id}", responses=answers(None, 404, 422))
async def update_cron(
    cron_id: str, body: CronPatch, services: ServicesDep, tenant: TenantDep
) -> CronOut:
    """Change a cron's schedule, zone, message, or pause (``enabled: false``) or resume it."""
    now = await _schedule(services, tenant, cron_id)
    action = None
    if body.input is not None:
        message = _message(now, cron_id)
        text = _text(message.agent_id or services.supervisor.id, body.input)
        action = message.model_copy(update={"content": text})
    change = service.Change(
        expression=body.schedule, timezone=body.timezone, action=action, enabled=body.enabled
    )
    return await _out(services, tenant, await service.update(services, tenant, cron_id, change))


@router.delete(
    "/runs/crons/{cron_id}",
    status_code=204,
    response_model=None,
    responses=answers(None, 404, status=204, description="Deleted"),
)
async def delete_cron(cron_id: str, services: ServicesDep, tenant: TenantDep) -> Response:
    """Delete a cron (its schedule)."""
    await _schedule(services, tenant, cron_id)
    await service.delete(services, tenant, cron_id)
    return Response(status_code=204)
