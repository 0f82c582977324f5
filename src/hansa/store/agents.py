"""Agent definitions: the roster, stored so that it can differ per tenant."""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy import Connection

from hansa.domain import agent
from hansa.store import direct, tables

_defs = tables.assistant_agent_definitions

# Statements are built once and run through store.direct (decision 0007).
_INSERT = _defs.insert()
_DELETE_GLOBAL = sa.delete(_defs).where(_defs.c.tenant_id.is_(None))
_DELETE_OF_TENANT = sa.delete(_defs).where(_defs.c.tenant_id == sa.bindparam("p_tenant"))


def replace_roster(
    conn: Connection, tenant_id: str | None, roster: list[agent.AgentDefinition]
) -> None:
    """Store ``roster`` as the agents of ``tenant_id`` (None: the global roster)."""
    if tenant_id is None:
        direct.execute(conn, _DELETE_GLOBAL, {})
    else:
        direct.execute(conn, _DELETE_OF_TENANT, {"p_tenant": tenant_id})
    direct.execute_many(
        conn,
        _INSERT,
        [
            {
                "id": f"{tenant_id or 'global'}:{a.id}",
                "tenant_id": tenant_id,
                "agent_id": a.id,
                "display_name": a.display_name,
                "role_summary": a.role_summary,
                "category": a.category.value,
                "visible": a.visible,
                "ordering": a.ordering,
                "avatar": {"initials": a.initials, "color": a.color},
                "config": a.model_dump(mode="json"),
            }
            for a in roster
        ],
    )
