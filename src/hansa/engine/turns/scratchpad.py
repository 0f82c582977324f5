"""Agents' scratchpads in turns (seed 002 §8.6; ``domain/agent_state.py``).

A tool call's deltas (``agent_state.update``, or an entity tool noting what it made) are
applied in the transaction of the call's ``tool_result``, under the conversation's row
lock, and announced there with ``agent_state {agentId, version, state}``. The state rides
into the agent's next prompt as a system block of its own. Clearing it (the API) is a
change too: the version goes up and ``agent_state`` says so.
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import Connection

from hansa import errors
from hansa.domain import agent_state, event, secrets
from hansa.engine.runtime.recorder import Batch, Recorder
from hansa.engine.runtime.services import Services
from hansa.models.base import ChatMessage
from hansa.store import agent_states

NOTES_INTRO = "Your notes from earlier in this conversation (your agent state"
"""How the prompt's block of notes begins."""


def change(
    conn: Connection,
    services: Services,
    tenant_id: str,
    conversation_id: str,
    agent_id: str,
    deltas: list[dict[str, Any]],
) -> agent_state.AgentState:
    """Apply ``deltas`` in order to the agent's stored state and store the result as the
    next version. All or nothing: InvalidInput (or StateTooLarge) changes nothing."""
    agent_states.lock(conn, tenant_id, conversation_id)
    current = agent_states.get(conn, tenant_id, conversation_id, agent_id)
    state = current.state
    for raw in deltas:  # a secret never reaches the state: it rides in every prompt
        state = agent_state.apply(state, agent_state.parse_delta(secrets.mask(raw)))
    return agent_states.put(conn, tenant_id, current, state, services.clock())


def announce(batch: Batch, stored: agent_state.AgentState) -> None:
    """Add the ``agent_state`` event of a stored change."""
    payload = event.AgentStateData(
        agent_id=stored.agent_id, version=stored.version, state=stored.state
    )
    batch.event(payload, agent_id=stored.agent_id)


async def clear(
    services: Services, tenant_id: str, conversation_id: str, agent_id: str
) -> agent_state.AgentState:
    """Empty the agent's scratchpad (a new version, announced); NotFound when the
    conversation is another tenant's or the agent keeps no state in it."""
    batch = Batch(conversation_id, None)

    def step(conn: Connection) -> agent_state.AgentState:
        agent_states.lock(conn, tenant_id, conversation_id)
        current = agent_states.get(conn, tenant_id, conversation_id, agent_id)
        if current.version == 0:
            raise errors.NotFound(f"agent {agent_id} keeps no state in this conversation")
        stored = agent_states.put(conn, tenant_id, current, {}, services.clock())
        announce(batch, stored)
        return stored

    return await Recorder(services, tenant_id, conversation_id).write_then(batch, step)


async def carry(
    services: Services,
    tenant_id: str,
    conversation_id: str,
    agent_id: str,
    prompt: list[ChatMessage],
) -> list[ChatMessage]:
    """``prompt`` with the agent's notes as a system block after its last system message
    (who the agent is, which the prompt gives after the shared part: issue 34), at the
    start when it has none."""
    stored = await services.db.read(agent_states.get, tenant_id, conversation_id, agent_id)
    if not stored.state:
        return prompt
    block = ChatMessage("system", notes_block(stored))
    at = max((i + 1 for i, m in enumerate(prompt) if m.role == "system"), default=0)
    return [*prompt[:at], block, *prompt[at:]]


def notes_block(stored: agent_state.AgentState) -> str:
    """The notes as the model reads them: internal, JSON, with how to change them."""
    notes = json.dumps(stored.state, ensure_ascii=False, sort_keys=True)
    return (
        f"{NOTES_INTRO}, version {stored.version}; internal, never shown to the user): "
        f"{notes}. Change them with the agent_state.update tool when what you know changes."
    )
