"""Agents' scratchpads (``domain/agent_state.py``): one row per conversation and agent.

Writers call :func:`lock` first: it takes the conversation's row (as appending events
does), so two changes to one scratchpad never interleave, on SQLite or PostgreSQL.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection

from hansa.domain import agent_state
from hansa.store import direct, events, tables

_s = tables.agent_states
_B = sa.bindparam

# Statements are built once and run through store.direct (decision 0007).
_OF_CONVERSATION = (_s.c.conversation_id == _B("p_conversation"), _s.c.tenant_id == _B("p_tenant"))
_GET = sa.select(_s).where(*_OF_CONVERSATION, _s.c.agent_id == _B("p_agent"))
_ALL = sa.select(_s).where(*_OF_CONVERSATION).order_by(_s.c.agent_id)
_INSERT = _s.insert()
_UPDATE = (
    sa.update(_s)
    .where(*_OF_CONVERSATION, _s.c.agent_id == _B("p_agent"))
    .values(
        version=_B("p_version"),
        state=_B("p_state", type_=_s.c.state.type),
        updated_at=_B("p_now"),
    )
)


def lock(conn: Connection, tenant_id: str, conversation_id: str) -> None:
    """Hold the conversation's row to the commit (NotFound for another tenant's)."""
    events.reserve_seqs(conn, tenant_id, conversation_id, 0)


def get(
    conn: Connection, tenant_id: str, conversation_id: str, agent_id: str
) -> agent_state.AgentState:
    """The agent's scratchpad; an empty one at version 0 when it has none yet."""
    params = {"p_conversation": conversation_id, "p_tenant": tenant_id, "p_agent": agent_id}
    row = direct.first(conn, _GET, params)
    if row is None:
        return agent_state.AgentState(
            conversation_id=conversation_id, agent_id=agent_id, version=0, state={}
        )
    return _state(row)


def all_of(conn: Connection, tenant_id: str, conversation_id: str) -> list[agent_state.AgentState]:
    """Every agent's scratchpad in the conversation, by agent id."""
    params = {"p_conversation": conversation_id, "p_tenant": tenant_id}
    return [_state(r) for r in direct.rows(conn, _ALL, params)]


def put(
    conn: Connection,
    tenant_id: str,
    current: agent_state.AgentState,
    state: agent_state.State,
    now: datetime,
) -> agent_state.AgentState:
    """Store ``state`` as the version after ``current`` (read under :func:`lock`)."""
    new = current.model_copy(update={"version": current.version + 1, "state": state})
    row: dict[str, Any] = {
        "p_conversation": current.conversation_id,
        "p_tenant": tenant_id,
        "p_agent": current.agent_id,
        "p_version": new.version,
        "p_state": state,
        "p_now": now,
    }
    if current.version == 0:  # no row yet (a stored scratchpad is at version 1 or more)
        direct.execute(
            conn,
            _INSERT,
            {
                "conversation_id": current.conversation_id,
                "agent_id": current.agent_id,
                "tenant_id": tenant_id,
                "version": new.version,
                "state": state,
                "updated_at": now,
            },
        )
    else:
        direct.execute(conn, _UPDATE, row)
    return new.model_copy(update={"updated_at": now})


def _state(row: direct.Row) -> agent_state.AgentState:
    return agent_state.AgentState.model_validate(row)
