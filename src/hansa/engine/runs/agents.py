"""The agent a task is done by: one of the roster, or an agent the tenant registered.

A registered agent (an agent principal, seed 001) acts only through its own token and
only within its own capabilities: the laws judge its tasks with its definition, at plan
time and again before each one runs, so a capability taken away stops the next step.
"""

from __future__ import annotations

from sqlalchemy import Connection

from hansa.domain.agent import AgentDefinition
from hansa.engine.runtime.services import Services
from hansa.store import principals


def find(
    services: Services, conn: Connection, tenant_id: str, agent_id: str
) -> AgentDefinition | None:
    """The roster's agent with this id, else the tenant's registered one, else None."""
    return services.agents.get(agent_id) or principals.find(conn, tenant_id, agent_id)
