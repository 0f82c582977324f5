"""Tenants: created with their first key (the default tenant by the migration step)."""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from sqlalchemy import Connection

from hansa.store import direct, tables
from hansa.store.db import DEFAULT_TENANT_ID

_tenants = tables.tenants

_EXISTS = sa.select(_tenants.c.id).where(_tenants.c.id == sa.bindparam("p_id"))
_INSERT = _tenants.insert()


def ensure(conn: Connection, tenant_id: str, now: datetime) -> bool:
    """Create the tenant unless it exists; True when it was created."""
    if direct.scalar(conn, _EXISTS, {"p_id": tenant_id}) is not None:
        return False
    direct.execute(conn, _INSERT, {"id": tenant_id, "name": tenant_id, "created_at": now})
    return True


def exists(conn: Connection, tenant_id: str) -> bool:
    """Whether the tenant exists."""
    return direct.scalar(conn, _EXISTS, {"p_id": tenant_id}) is not None


_TOUCH = (
    sa.update(_tenants).where(_tenants.c.id == sa.bindparam("p_id")).values(name=_tenants.c.name)
)


def probe_write(conn: Connection) -> None:
    """Rewrite the default tenant's row as it is, committed with the caller's transaction:
    raises when the database cannot take writes now (full, locked, read-only, unreachable).
    A write rolled back never reaches the disk, so it passed while every real write
    failed (security review 2026-11-27, L6)."""
    direct.execute(conn, _TOUCH, {"p_id": DEFAULT_TENANT_ID})
