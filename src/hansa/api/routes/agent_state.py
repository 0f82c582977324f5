"""Agents' scratchpads in a conversation (seed 002 §8.6): read them, clear one."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query

from hansa.api.deps import ServicesDep, TenantDep
from hansa.api.models import conversations as models
from hansa.api.models.base import answers
from hansa.domain import agent_state, secrets
from hansa.engine.turns import scratchpad
from hansa.store import agent_states, conversations

router = APIRouter(prefix="/api/conversations", tags=["agent state"])


def _wire(stored: agent_state.AgentState) -> dict[str, Any]:
    data = stored.model_dump(mode="json", by_alias=True)
    data["state"] = secrets.mask(data["state"])
    return data


@router.get(
    "/{conversation_id}/agent-state", response_model=None, responses=answers(models.AgentStates)
)
async def get_agent_state(
    conversation_id: str,
    services: ServicesDep,
    tenant: TenantDep,
    agent_id: str | None = Query(default=None, alias="agentId", max_length=64),
) -> dict[str, Any]:
    """Every agent's scratchpad in the conversation, or with ``agentId`` that agent's
    (version 0 and an empty state when it has none)."""

    def read(conn: Any) -> list[agent_state.AgentState]:
        conversations.get(conn, tenant, conversation_id)  # NotFound for another tenant's
        if agent_id is not None:
            return [agent_states.get(conn, tenant, conversation_id, agent_id)]
        return agent_states.all_of(conn, tenant, conversation_id)

    found = await services.db.read(read)
    return {"conversationId": conversation_id, "agentStates": [_wire(s) for s in found]}


@router.delete(
    "/{conversation_id}/agent-state/{agent_id}",
    response_model=None,
    responses=answers(models.AgentState),
)
async def clear_agent_state(
    conversation_id: str, agent_id: str, services: ServicesDep, tenant: TenantDep
) -> dict[str, Any]:
    """Empty an agent's scratchpad: a new version, announced by ``agent_state``."""
    cleared = await scratchpad.clear(services, tenant, conversation_id, agent_id)
    return _wire(cleared)
