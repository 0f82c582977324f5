"""Agents a tenant registered (seed 001's agent principals), beside the built-in roster.

They live in the roster's table with the tenant's id (the built-in roster has none);
tokens bound to them are API keys with the role ``agent`` (store/keys.py).
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection

from hansa import errors
from hansa.domain.agent import AgentDefinition
from hansa.domain.base import new_id
from hansa.store import direct, tables
from hansa.store.db import growing

_defs = tables.assistant_agent_definitions
_B = sa.bindparam

# Statements are built once and run through store.direct (decision 0007).
_INSERT = _defs.insert()
_GET = sa.select(_defs.c.config).where(
    _defs.c.tenant_id == _B("p_tenant"), _defs.c.agent_id == _B("p_agent")
)
_UPDATE = (
    _defs.update()
    .where(_defs.c.tenant_id == _B("p_tenant"), _defs.c.agent_id == _B("p_agent"))
    .values(
        display_name=_B("p_display_name"),
        role_summary=_B("p_role_summary"),
        avatar=_B("p_avatar", type_=_defs.c.avatar.type),
        config=_B("p_config", type_=_defs.c.config.type),
    )
)
_DELETE = sa.delete(_defs).where(
    _defs.c.tenant_id == _B("p_tenant"), _defs.c.agent_id == _B("p_agent")
)
_OF_TENANT = (
    sa.select(_defs.c.config)
    .where(_defs.c.tenant_id == _B("p_tenant"))
    .order_by(_defs.c.ordering, _defs.c.agent_id)
)


def register(conn: Connection, tenant_id: str, agent: AgentDefinition) -> None:
    """Store a new agent of the tenant; Conflict if the tenant has one with its id."""
    if find(conn, tenant_id, agent.id) is not None:
        raise errors.Conflict(f"agent {agent.id!r} is registered already", details={"id": agent.id})
    direct.execute(
        conn,
        _INSERT,
        {
            "id": new_id(),
            "tenant_id": tenant_id,
            "agent_id": agent.id,
            "display_name": agent.display_name,
            "role_summary": agent.role_summary,
            "category": agent.category.value,
            "visible": agent.visible,
            "ordering": agent.ordering,
            "avatar": {"initials": agent.initials, "color": agent.color},
            "config": agent.model_dump(mode="json"),
        },
    )


def update(conn: Connection, tenant_id: str, agent: AgentDefinition) -> None:
    """Store the tenant's registered agent as ``agent`` now is; NotFound if it has none
    with its id (the roster's included)."""
    get(conn, tenant_id, agent.id)
    direct.execute(
        conn,
        _UPDATE,
        {
            "p_tenant": tenant_id,
            "p_agent": agent.id,
            "p_display_name": agent.display_name,
            "p_role_summary": agent.role_summary,
            "p_avatar": {"initials": agent.initials, "color": agent.color},
            "p_config": agent.model_dump(mode="json"),
        },
    )


def remove(conn: Connection, tenant_id: str, agent_id: str) -> AgentDefinition:
    """Forget the tenant's registered agent (NotFound if it has none with this id); its
    tokens are the caller's to revoke in the same transaction (``keys.revoke_of_agent``)."""
    found = get(conn, tenant_id, agent_id)
    direct.execute(conn, _DELETE, {"p_tenant": tenant_id, "p_agent": agent_id})
    return found


def _agent(config: Any) -> AgentDefinition:
    return AgentDefinition.model_validate(config)


def find(conn: Connection, tenant_id: str, agent_id: str) -> AgentDefinition | None:
    """The tenant's registered agent, or None."""
    config = direct.scalar(conn, _GET, {"p_tenant": tenant_id, "p_agent": agent_id})
    return None if config is None else _agent(config)


def get(conn: Connection, tenant_id: str, agent_id: str) -> AgentDefinition:
    """The tenant's registered agent, or NotFound (also for another tenant's)."""
    found = find(conn, tenant_id, agent_id)
    if found is None:
        raise errors.NotFound(f"agent {agent_id} not found")
    return found


@growing
def list_for(conn: Connection, tenant_id: str) -> list[AgentDefinition]:
    """The agents the tenant registered, in display order."""
    return [_agent(r["config"]) for r in direct.rows(conn, _OF_TENANT, {"p_tenant": tenant_id})]
