"""A tenant's named outbound services (``domain/service.py``), headers stored sealed."""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy import Connection

from hansa import errors
from hansa.domain.service import Service
from hansa.store import tables

_services = tables.services


def _mine(tenant_id: str, name: str) -> tuple[sa.ColumnElement[bool], ...]:
    return (_services.c.tenant_id == tenant_id, _services.c.name == name)


def _missing(name: str) -> errors.NotFound:
    return errors.NotFound(f"no service called {name!r}", details={"service": name})


def create(conn: Connection, service: Service) -> None:
    """Store a new service; Conflict when the tenant has one of that name."""
    if conn.execute(
        sa.select(_services.c.id).where(*_mine(service.tenant_id, service.name))
    ).first():
        raise errors.Conflict(
            f"a service called {service.name!r} exists already; change it with PATCH",
            details={"field": "name"},
        )
    conn.execute(_services.insert().values(**service.model_dump(mode="python")))


def find(conn: Connection, tenant_id: str, name: str) -> Service | None:
    """The tenant's service of that name, or None."""
    row = conn.execute(sa.select(_services).where(*_mine(tenant_id, name))).mappings().first()
    return None if row is None else Service.model_validate(dict(row))


def get(conn: Connection, tenant_id: str, name: str) -> Service:
    """The tenant's service of that name; NotFound."""
    found = find(conn, tenant_id, name)
    if found is None:
        raise _missing(name)
    return found


def names(conn: Connection, tenant_id: str) -> set[str]:
    """The names of the tenant's services."""
    query = sa.select(_services.c.name).where(_services.c.tenant_id == tenant_id)
    return set(conn.execute(query).scalars())


def count(conn: Connection, tenant_id: str) -> int:
    """How many services the tenant has."""
    query = sa.select(sa.func.count()).where(_services.c.tenant_id == tenant_id)
    return int(conn.execute(query).scalar_one())


def list_all(conn: Connection, tenant_id: str) -> list[Service]:
    """The tenant's services by name."""
    query = sa.select(_services).where(_services.c.tenant_id == tenant_id)
    rows = conn.execute(query.order_by(_services.c.name)).mappings()
    return [Service.model_validate(dict(r)) for r in rows]


def replace(conn: Connection, service: Service) -> None:
    """Store a changed service (its name and id stay); NotFound."""
    values = service.model_dump(mode="python", exclude={"id", "tenant_id", "name", "created_at"})
    done = conn.execute(
        sa.update(_services).where(*_mine(service.tenant_id, service.name)).values(**values)
    )
    if done.rowcount == 0:
        raise _missing(service.name)


def delete(conn: Connection, tenant_id: str, name: str) -> None:
    """Forget a service; NotFound."""
    if conn.execute(sa.delete(_services).where(*_mine(tenant_id, name))).rowcount == 0:
        raise _missing(name)
