"""Turns: one row per user message being processed."""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from hansa import errors
from hansa.domain import turn
from hansa.domain.transitions import check_transition
from hansa.store import tables

_turns = tables.assistant_turns


async def create(conn: AsyncConnection, tenant_id: str, t: turn.Turn) -> None:
    """Insert a queued turn."""
    await conn.execute(
        _turns.insert().values(
            id=t.id,
            tenant_id=tenant_id,
            conversation_id=t.conversation_id,
            message_id=t.message_id,
            status=t.status.value,
            agent_id=t.agent_id,
            created_at=t.created_at,
        )
    )


async def get(conn: AsyncConnection, tenant_id: str, turn_id: str) -> turn.Turn:
    """The turn, or NotFound."""
    row = (
        (
            await conn.execute(
                sa.select(_turns).where(_turns.c.id == turn_id, _turns.c.tenant_id == tenant_id)
            )
        )
        .mappings()
        .first()
    )
    if row is None:
        raise errors.NotFound(f"turn {turn_id} not found")
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


async def set_status(
    conn: AsyncConnection,
    tenant_id: str,
    turn_id: str,
    status: turn.TurnStatus,
    now: datetime,
    *,
    agent_id: str | None = None,
    error: str | None = None,
) -> None:
    """Move a turn along its transition table."""
    current = await get(conn, tenant_id, turn_id)
    check_transition(turn.TURN_TRANSITIONS, current.status, status)
    values: dict[str, object] = {"status": status.value}
    if agent_id is not None:
        values["agent_id"] = agent_id
    if error is not None:
        values["error"] = error
    if status in (turn.TurnStatus.COMPLETED, turn.TurnStatus.FAILED, turn.TurnStatus.CANCELLED):
        values["finished_at"] = now
    await conn.execute(sa.update(_turns).where(_turns.c.id == turn_id).values(**values))
