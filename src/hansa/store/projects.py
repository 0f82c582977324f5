"""Projects of a tenant."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection

from hansa import errors
from hansa.domain import project
from hansa.store import tables

_proj = tables.projects


def create(conn: Connection, proj: project.Project) -> None:
    """Insert a project."""
    conn.execute(
        _proj.insert().values(
            id=proj.id,
            tenant_id=proj.tenant_id,
            name=proj.name,
            domain=proj.domain,
            cms_platform=proj.cms_platform,
            allowed_task_types=_types(proj.allowed_task_types),
            config=proj.config,
            created_at=proj.created_at,
            updated_at=proj.created_at,
        )
    )


def get(conn: Connection, tenant_id: str, project_id: str) -> project.Project:
    """The project, or NotFound (also for another tenant's id)."""
    row = (
        (
            conn.execute(
                sa.select(_proj).where(_proj.c.id == project_id, _proj.c.tenant_id == tenant_id)
            )
        )
        .mappings()
        .first()
    )
    if row is None:
        raise errors.NotFound(f"project {project_id} not found")
    return _project(row)


def list_all(conn: Connection, tenant_id: str) -> list[project.Project]:
    """The tenant's projects, oldest first."""
    rows = (
        (
            conn.execute(
                sa.select(_proj).where(_proj.c.tenant_id == tenant_id).order_by(_proj.c.created_at)
            )
        )
        .mappings()
        .all()
    )
    return [_project(r) for r in rows]


def update(
    conn: Connection, tenant_id: str, project_id: str, changes: dict[str, Any], now: datetime
) -> project.Project:
    """Apply ``changes`` (snake_case field names) and return the project."""
    get(conn, tenant_id, project_id)
    values = dict(changes)
    if "allowed_task_types" in values:
        values["allowed_task_types"] = _types(values["allowed_task_types"])
    conn.execute(
        sa.update(_proj)
        .where(_proj.c.id == project_id, _proj.c.tenant_id == tenant_id)
        .values(**values, updated_at=now)
    )
    return get(conn, tenant_id, project_id)


def _types(value: tuple[str, ...] | list[str] | None) -> list[str] | None:
    return None if value is None else list(value)


def _project(row: sa.RowMapping) -> project.Project:
    types = row["allowed_task_types"]
    return project.Project(
        id=row["id"],
        tenant_id=row["tenant_id"],
        name=row["name"],
        domain=row["domain"],
        cms_platform=row["cms_platform"],
        allowed_task_types=None if types is None else tuple(types),
        config=row["config"],
        created_at=row["created_at"],
    )
