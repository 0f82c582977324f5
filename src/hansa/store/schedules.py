"""Schedules of a tenant: stored, listed, changed, and their firings counted."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection

from hansa import errors
from hansa.domain.schedule import Schedule
from hansa.store import tables

_schedules = tables.schedules


def _mine(tenant_id: str, schedule_id: str) -> tuple[sa.ColumnElement[bool], ...]:
    return (_schedules.c.id == schedule_id, _schedules.c.tenant_id == tenant_id)


def create(conn: Connection, schedule: Schedule) -> None:
    """Store a new schedule."""
    row = schedule.model_dump(mode="python")
    row["action"] = schedule.action.model_dump(mode="json", by_alias=True)
    conn.execute(_schedules.insert().values(**row))


def count(conn: Connection, tenant_id: str) -> int:
    """How many schedules the tenant has."""
    query = sa.select(sa.func.count()).where(_schedules.c.tenant_id == tenant_id)
    return int(conn.execute(query).scalar_one())


def get(conn: Connection, tenant_id: str, schedule_id: str, *, lock: bool = False) -> Schedule:
    """One schedule of the tenant (its row locked to the commit when ``lock``); NotFound."""
    query = sa.select(_schedules).where(*_mine(tenant_id, schedule_id))
    if lock and conn.dialect.name == "postgresql":
        query = query.with_for_update()
    row = conn.execute(query).mappings().first()
    if row is None:
        raise errors.NotFound(f"schedule {schedule_id} not found")
    return Schedule.model_validate(dict(row))


def list_all(conn: Connection, tenant_id: str) -> list[Schedule]:
    """The tenant's schedules, oldest first."""
    query = (
        sa.select(_schedules)
        .where(_schedules.c.tenant_id == tenant_id)
        .order_by(_schedules.c.created_at, _schedules.c.id)
    )
    return [Schedule.model_validate(dict(r)) for r in conn.execute(query).mappings()]


def update(conn: Connection, tenant_id: str, schedule_id: str, **values: Any) -> None:
    """Change columns of one schedule (``action`` as its JSON)."""
    conn.execute(sa.update(_schedules).where(*_mine(tenant_id, schedule_id)).values(**values))


def fired(
    conn: Connection,
    tenant_id: str,
    schedule_id: str,
    now: datetime,
    *,
    error: str | None,
    next_run_at: datetime | None,
    counted: bool,
) -> None:
    """Record a firing (``counted``: it did what it says) and the next one, if any."""
    values: dict[str, Any] = {"last_fired_at": now, "last_error": error, "updated_at": now}
    if counted:
        values["fired"] = _schedules.c.fired + 1
    if next_run_at is not None:
        values["next_run_at"] = next_run_at
    update(conn, tenant_id, schedule_id, **values)


def delete(conn: Connection, tenant_id: str, schedule_id: str) -> None:
    """Forget a schedule; NotFound if the tenant has none of that id."""
    gone = conn.execute(sa.delete(_schedules).where(*_mine(tenant_id, schedule_id)))
    if gone.rowcount == 0:
        raise errors.NotFound(f"schedule {schedule_id} not found")
