"""Agents' scratchpads in turns (seed 002 §8.6; ``domain/agent_state.py``).

A tool call's deltas (``agent_state.update``, or an entity tool noting what it made) are
applied in the transaction of the call's ``tool_result``, under the conversation's row
lock, and announced there with ``agent_state {agentId, version, state}``. The state rides
into the agent's next prompt as a budgeted section of its own (``agent_notes``). Clearing
it (the API, a conversation resolved or archived) is a change too: the version goes up.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection

from hansa import errors
from hansa.domain import agent_state, secrets
from hansa.engine import agent_notes
from hansa.engine.context_budget import Fitted
from hansa.engine.runtime import agent_state_events
from hansa.engine.runtime.recorder import Batch, Recorder
from hansa.engine.runtime.services import Services
from hansa.models.base import ChatMessage
from hansa.store import agent_states


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


announce = agent_state_events.announce
"""Add the ``agent_state`` event of a stored change."""


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
    fitted: Fitted,
) -> list[ChatMessage]:
    """``prompt`` carrying ``agent_id``'s notes. The context stage fitted the notes of the
    agent routed to (``agent_notes``); when another agent answers (a hand-over after the
    prompt was built), its notes replace them, cut to the same budget, and ``fitted``'s
    section and drops say so."""
    if fitted.state_of == agent_id:
        return prompt
    stored = await services.db.read(agent_states.get, tenant_id, conversation_id, agent_id)
    dropped = [d for d in fitted.dropped if d.section != agent_notes.SECTION]
    budget = fitted.budgets.get(agent_notes.SECTION, 0)
    text = agent_notes.fit(agent_notes.of(stored), budget, dropped)
    fitted.dropped, fitted.state_of = dropped, agent_id
    fitted.sections[agent_notes.SECTION] = agent_notes.cost(text)
    kept = [
        m for m in prompt if not (m.role == "system" and m.content.startswith(agent_notes.INTRO))
    ]
    if not text:
        return kept
    at = max((i + 1 for i, m in enumerate(kept) if m.role == "system"), default=0)
    return [*kept[:at], ChatMessage("system", text), *kept[at:]]
