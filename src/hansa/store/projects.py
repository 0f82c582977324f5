"""Projects of a tenant."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection

from hansa import errors
from hansa.domain import project
from hansa.store import direct, tables
from hansa.store.db import growing

_proj = tables.projects
_B = sa.bindparam

# Statements are built once and run through store.direct (decision 0007).
_INSERT = _proj.insert()
_MINE = (_proj.c.id == _B("p_id"), _proj.c.tenant_id == _B("p_tenant"))
_GET = sa.select(_proj).where(*_MINE)
_ALL = sa.select(_proj).where(_proj.c.tenant_id == _B("p_tenant")).order_by(_proj.c.created_at)


def create(conn: Connection, proj: project.Project) -> None:
    """Insert a project."""
    direct.execute(
        conn,
        _INSERT,
        {
            "id": proj.id,
            "tenant_id": proj.tenant_id,
            "name": proj.name,
            "domain": proj.domain,
            "cms_platform": proj.cms_platform,
            "allowed_task_types": _types(proj.allowed_task_types),
            "config": proj.config,
            "created_at": proj.created_at,
            "updated_at": proj.created_at,
        },
    )


def get(conn: Connection, tenant_id: str, project_id: str) -> project.Project:
    """The project, or NotFound (also for another tenant's id)."""
    row = direct.first(conn, _GET, {"p_id": project_id, "p_tenant": tenant_id})
    if row is None:
        raise errors.NotFound(f"project {project_id} not found")
    return _project(row)


@growing
def list_all(conn: Connection, tenant_id: str) -> list[project.Project]:
    """The tenant's projects, oldest first."""
    return [_project(r) for r in direct.rows(conn, _ALL, {"p_tenant": tenant_id})]


def update(
    conn: Connection, tenant_id: str, project_id: str, changes: dict[str, Any], now: datetime
) -> project.Project:
    """Apply ``changes`` (snake_case field names) and return the project."""
    get(conn, tenant_id, project_id)
    values = dict(changes)
    if "allowed_task_types" in values:
        values["allowed_task_types"] = _types(values["allowed_task_types"])
    # the columns vary with the call: built here, run by Connection.execute
    conn.execute(
        sa.update(_proj)
        .where(_proj.c.id == project_id, _proj.c.tenant_id == tenant_id)
        .values(**values, updated_at=now)
    )
    return get(conn, tenant_id, project_id)


def _types(value: tuple[str, ...] | list[str] | None) -> list[str] | None:
    return None if value is None else list(value)


def _project(row: direct.Row) -> project.Project:
    return project.Project.model_validate(row)
