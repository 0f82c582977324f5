"""Projects of a tenant. Their config's secrets are sealed here when a key is set
(``store/secrets.py``) and merged on update: a masked or omitted secret keeps the stored one."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection

from hansa import errors
from hansa.domain import project, secrets
from hansa.store import direct, tables
from hansa.store.db import growing
from hansa.store.secrets import SecretBox, holds_clear, is_sealed

_proj = tables.projects
_B = sa.bindparam

# Statements are built once and run through store.direct (decision 0007).
_INSERT = _proj.insert()
_MINE = (_proj.c.id == _B("p_id"), direct.only_checks(_proj.c.tenant_id) == _B("p_tenant"))
_GET = sa.select(_proj).where(*_MINE)
_ALL = sa.select(_proj).where(_proj.c.tenant_id == _B("p_tenant")).order_by(_proj.c.created_at)
_CONFIGS = sa.select(_proj.c.id, _proj.c.config)
_SET_CONFIG = sa.update(_proj).where(_proj.c.id == _B("p_id")).values(config=_B("p_config"))
_PLAIN = SecretBox()


def create(conn: Connection, proj: project.Project, box: SecretBox = _PLAIN) -> None:
    """Insert a project, its config's secrets sealed by ``box``."""
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
            "config": box.seal(secrets.keep_secrets(proj.config, {}, "config")),
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
    conn: Connection,
    tenant_id: str,
    project_id: str,
    changes: dict[str, Any],
    now: datetime,
    box: SecretBox = _PLAIN,
) -> project.Project:
    """Apply ``changes`` (snake_case field names) and return the project.

    A new ``config`` keeps each stored secret it masks (``***``) or leaves out, unless the
    address beside it changed (``secrets.keep_secrets``); its secrets are sealed by ``box``.
    """
    current = get(conn, tenant_id, project_id)
    values = dict(changes)
    if values.get("config") is not None:
        merged = secrets.keep_secrets(values["config"], current.config, "config")
        values["config"] = box.seal(merged)
    if "allowed_task_types" in values:
        values["allowed_task_types"] = _types(values["allowed_task_types"])
    # the columns vary with the call: built here, run by Connection.execute
    conn.execute(
        sa.update(_proj)
        .where(_proj.c.id == project_id, _proj.c.tenant_id == tenant_id)
        .values(**values, updated_at=now)
    )
    return get(conn, tenant_id, project_id)


def secrets_at_rest(conn: Connection, box: SecretBox) -> tuple[int, int]:
    """Seal every project's clear secrets when ``box`` seals (start-up, a new key).

    Returns:
        How many projects still hold secrets in clear, and how many hold sealed ones.
    """
    clear = sealed = 0
    for row in direct.rows(conn, _CONFIGS, {}):
        config = row["config"] or {}
        if box.sealing and holds_clear(config):
            config = box.seal(config)
            direct.execute(conn, _SET_CONFIG, {"p_id": row["id"], "p_config": config})
        clear += holds_clear(config)
        sealed += is_sealed(config)
    return clear, sealed


def _types(value: tuple[str, ...] | list[str] | None) -> list[str] | None:
    return None if value is None else list(value)


def _project(row: direct.Row) -> project.Project:
    return project.Project.model_validate(row)
