"""Agent definitions: the roster, stored so that it can differ per tenant."""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy import Connection

from hansa.domain import agent
from hansa.store import tables

_defs = tables.assistant_agent_definitions


def replace_roster(
    conn: Connection, tenant_id: str | None, roster: list[agent.AgentDefinition]
) -> None:
    """Store ``roster`` as the agents of ``tenant_id`` (None: the global roster)."""
    owner = _defs.c.tenant_id.is_(None) if tenant_id is None else _defs.c.tenant_id == tenant_id
    conn.execute(sa.delete(_defs).where(owner))
    if roster:
        conn.execute(
            _defs.insert(),
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
