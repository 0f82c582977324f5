"""Agents' scratchpads in a conversation (seed 002 §8.6): read them, clear one."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query

from hansa.api.deps import ServicesDep, TenantDep
from hansa.api.models import conversations as models
from hansa.domain import agent_state
from hansa.engine.turns import scratchpad
from hansa.store import agent_states, conversations

router = APIRouter(prefix="/api/conversations", tags=["agent state"])


@router.get("/{conversation_id}/agent-state")
async def get_agent_state(
    conversation_id: str,
    services: ServicesDep,
    tenant: TenantDep,
    agent_id: str | None = Query(default=None, alias="agentId", max_length=64),
) -> models.AgentStates:
    """Every agent's scratchpad in the conversation, or with ``agentId`` that agent's
    (version 0 and an empty state when it has none)."""

    def read(conn: Any) -> list[agent_state.AgentState]:
        conversations.get(conn, tenant, conversation_id)  # NotFound for another tenant's
        if agent_id is not None:
            return [agent_states.get(conn, tenant, conversation_id, agent_id)]
        return agent_states.all_of(conn, tenant, conversation_id)

    found = await services.db.read(read)
    shown = [models.AgentStateOut.of(s) for s in found]
    return models.AgentStates(conversation_id=conversation_id, agent_states=shown)


@router.delete(
    "/{conversation_id}/agent-state/{agent_id}",
)
async def clear_agent_state(
    conversation_id: str, agent_id: str, services: ServicesDep, tenant: TenantDep
) -> models.AgentStateOut:
    """Empty an agent's scratchpad: a new version, announced by ``agent_state``."""
    cleared = await scratchpad.clear(services, tenant, conversation_id, agent_id)
    return models.AgentStateOut.of(cleared)
