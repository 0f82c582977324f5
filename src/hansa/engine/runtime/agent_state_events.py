"""``agent_state`` events: an agent's state changed (issue 19), or a conversation resolved
or archived emptied every agent's state (issue 32 item 3).

The store empties the states with the move (``store/conversations.move``), whoever moves
it; the engine code that moves it (a handoff resolved, a rule's action, a graph's
``state.transition``) announces them here, in the same batch, so a client following the
events (the AG-UI ``STATE_SNAPSHOT``) sees them emptied.
"""

from __future__ import annotations

from sqlalchemy import Connection

from hansa.domain import agent_state, conversation, event
from hansa.engine.runtime.recorder import Batch
from hansa.store import agent_states, conversations


def announce(batch: Batch, stored: agent_state.AgentState) -> None:
    """Add the ``agent_state`` event of a stored change."""
    payload = event.AgentStateData(
        agent_id=stored.agent_id, version=stored.version, state=stored.state
    )
    batch.event(payload, agent_id=stored.agent_id)


def announce_cleared(
    conn: Connection, batch: Batch, tenant_id: str, conversation_id: str, target: conversation.State
) -> None:
    """After a move to ``target``: when it resolved or archived the conversation, announce
    every agent's state it emptied (each at its new version)."""
    if target not in conversations.CLOSING:
        return
    for stored in agent_states.all_of(conn, tenant_id, conversation_id):
        announce(batch, stored)
