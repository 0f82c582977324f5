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
_B = sa.bindparam
_FINAL = (turn.TurnStatus.COMPLETED, turn.TurnStatus.FAILED, turn.TurnStatus.CANCELLED)

# Statements are built once and run through store.direct (decision 0007).
_INSERT = _turns.insert()
_MINE = (_turns.c.id == _B("p_id"), _turns.c.tenant_id == _B("p_tenant"))
_GET = sa.select(_turns).where(*_MINE)
_SET_STATUS = {
    target: sa.update(_turns)
    .where(
        *_MINE,
        direct.one_of(_turns.c.status, (s.value for s in sources(turn.TURN_TRANSITIONS, target))),
    )
    .values(
        status=target.value,
        agent_id=sa.func.coalesce(_B("p_agent", type_=sa.String), _turns.c.agent_id),
        error=sa.func.coalesce(_B("p_error", type_=sa.Text), _turns.c.error),
        finished_at=sa.func.coalesce(
            _B("p_finished_at", type_=_turns.c.finished_at.type), _turns.c.finished_at
        ),
    )
    for target in turn.TurnStatus
    if sources(turn.TURN_TRANSITIONS, target)
}
_UNFINISHED = (
    sa.select(_turns)
    .where(
        _turns.c.conversation_id == _B("p_conversation"),
        _turns.c.tenant_id == _B("p_tenant"),
        # ``tables.UNFINISHED_TURNS`` in literals: then ``ix_turns_unfinished`` (partial)
        # serves it, and the read takes the few unfinished turns, not every turn the
        # conversation had, on either database, statistics or not (decision 0043)
        _turns.c.status.in_([sa.literal_column("'queued'"), sa.literal_column("'running'")]),
    )
    .order_by(_turns.c.created_at)
)
_OF_CONVERSATION = (
    sa.select(_turns)
    .where(_turns.c.tenant_id == _B("p_tenant"), _turns.c.conversation_id == _B("p_conversation"))
    .order_by(_turns.c.created_at.desc(), _turns.c.id.desc())
    .limit(_B("p_limit"))
    .offset(_B("p_offset"))
)


def create(conn: Connection, tenant_id: str, t: turn.Turn) -> None:
    """Insert a queued turn."""
    direct.execute(
        conn,
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
    row = direct.first(conn, _GET, {"p_id": turn_id, "p_tenant": tenant_id})
    if row is None:
        raise errors.NotFound(f"turn {turn_id} not found")
    return _turn(row)


def exists(conn: Connection, tenant_id: str, turn_id: str) -> bool:
    """Whether the tenant has this turn."""
    return direct.first(conn, _GET, {"p_id": turn_id, "p_tenant": tenant_id}) is not None


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
    statement = _SET_STATUS.get(status)
    params = {
        "p_id": turn_id,
        "p_tenant": tenant_id,
        "p_agent": agent_id,
        "p_error": error,
        "p_finished_at": now if status in _FINAL else None,
    }
    if statement is None or direct.execute(conn, statement, params) != 1:
        current = get(conn, tenant_id, turn_id)
        check_transition(turn.TURN_TRANSITIONS, current.status, status)


def unfinished(conn: Connection, tenant_id: str, conversation_id: str) -> list[turn.Turn]:
    """Turns of the conversation still queued or running, oldest first."""
    rows = direct.rows(
        conn, _UNFINISHED, {"p_tenant": tenant_id, "p_conversation": conversation_id}
    )
    return [_turn(r) for r in rows]


def of_conversation(
    conn: Connection, tenant_id: str, conversation_id: str, *, limit: int, offset: int = 0
) -> list[turn.Turn]:
    """A page of the conversation's turns, newest first."""
    params = {
        "p_tenant": tenant_id,
        "p_conversation": conversation_id,
        "p_limit": limit,
        "p_offset": offset,
    }
    return [_turn(r) for r in direct.rows(conn, _OF_CONVERSATION, params)]


def _turn(row: direct.Row) -> turn.Turn:
    return turn.Turn.model_validate(row)
