"""Turns: one row per user message being processed."""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from sqlalchemy import Connection

from hansa import errors
from hansa.domain import turn
from hansa.domain.transitions import check_transition, sources
from hansa.store import direct, tables

_turns = tables.assistant_turns
_INSERT = _turns.insert()
_GET = (
    sa.select(_turns)
    .where(_turns.c.id == sa.bindparam("id"))
    .where(_turns.c.tenant_id == sa.bindparam("tenant_id"))
)
_SET_STATUS = (
    sa.update(_turns)
    .where(_turns.c.id == sa.bindparam("p_id"))
    .where(_turns.c.tenant_id == sa.bindparam("p_tenant_id"))
    .where(_turns.c.status.in_(sa.bindparam("p_allowed", expanding=True)))
    .values(
        status=sa.bindparam("p_status"),
        agent_id=sa.func.coalesce(sa.bindparam("p_agent_id", type_=sa.String), _turns.c.agent_id),
        error=sa.func.coalesce(sa.bindparam("p_error", type_=sa.Text), _turns.c.error),
        finished_at=sa.func.coalesce(
            sa.bindparam("p_finished_at", type_=_turns.c.finished_at.type), _turns.c.finished_at
        ),
    )
)


def create(conn: Connection, tenant_id: str, t: turn.Turn) -> None:
    """Insert a queued turn."""
    conn.execute(
        _INSERT,
        {
            "id": t.id,
            "tenant_id": tenant_id,
            "conversation_id": t.conversation_id,
            "message_id": t.message_id,
            "status": t.status.value,
            "agent_id": t.agent_id,
            "created_at": t.created_at,
        },
    )


def get(conn: Connection, tenant_id: str, turn_id: str) -> turn.Turn:
    """The turn, or NotFound."""
    row = direct.first(conn, _GET, {"id": turn_id, "tenant_id": tenant_id})
    if row is None:
        raise errors.NotFound(f"turn {turn_id} not found")
    return _turn(row)


def _turn(row: direct.Row) -> turn.Turn:
    return turn.Turn(
        id=row["id"],
        conversation_id=row["conversation_id"],
        message_id=row["message_id"],
        status=turn.TurnStatus(row["status"]),
        agent_id=row["agent_id"],
        created_at=row["created_at"],
        finished_at=row["finished_at"],
        error=row["error"],
    )


def set_status(
    conn: Connection,
    tenant_id: str,
    turn_id: str,
    status: turn.TurnStatus,
    now: datetime,
    *,
    agent_id: str | None = None,
    error: str | None = None,
) -> None:
    """Move a turn along its transition table (one conditional UPDATE)."""
    result = conn.execute(
        _SET_STATUS,
        {
            "p_id": turn_id,
            "p_tenant_id": tenant_id,
            "p_allowed": [s.value for s in sources(turn.TURN_TRANSITIONS, status)],
            "p_status": status.value,
            "p_agent_id": agent_id,
            "p_error": error,
            "p_finished_at": now if status in _FINAL else None,
        },
    )
    if result.rowcount != 1:
        current = get(conn, tenant_id, turn_id)
        check_transition(turn.TURN_TRANSITIONS, current.status, status)


_FINAL = (turn.TurnStatus.COMPLETED, turn.TurnStatus.FAILED, turn.TurnStatus.CANCELLED)


def unfinished(conn: Connection, tenant_id: str, conversation_id: str) -> list[turn.Turn]:
    """Turns of the conversation still queued or running, oldest first."""
    rows = conn.execute(
        sa.select(_turns)
        .where(_turns.c.tenant_id == tenant_id, _turns.c.conversation_id == conversation_id)
        .where(_turns.c.status.in_([turn.TurnStatus.QUEUED.value, turn.TurnStatus.RUNNING.value]))
        .order_by(_turns.c.created_at)
    ).mappings()
    return [_turn(r) for r in rows]
