"""Conversations: create, read, and move between states."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from hansa import errors
from hansa.domain import conversation
from hansa.domain.transitions import check_transition
from hansa.store import tables

_conv = tables.assistant_conversations


async def create(conn: AsyncConnection, convo: conversation.Conversation) -> None:
    """Insert a new conversation."""
    await conn.execute(
        _conv.insert().values(
            id=convo.id,
            tenant_id=convo.tenant_id,
            project_id=convo.project_id,
            title=convo.title,
            state=convo.state.value,
            current_agent=convo.current_agent,
            last_seq=convo.last_seq,
            active_flag=True,
            created_at=convo.created_at,
            updated_at=convo.updated_at,
            metadata=convo.metadata,
        )
    )


async def get(
    conn: AsyncConnection, tenant_id: str, conversation_id: str
) -> conversation.Conversation:
    """The conversation, or NotFound (also for another tenant's id)."""
    row = (
        (
            await conn.execute(
                sa.select(_conv).where(
                    _conv.c.id == conversation_id, _conv.c.tenant_id == tenant_id
                )
            )
        )
        .mappings()
        .first()
    )
    if row is None:
        raise errors.NotFound(f"conversation {conversation_id} not found")
    return _conversation(row)


async def list_recent(
    conn: AsyncConnection, tenant_id: str, *, limit: int = 50
) -> list[conversation.Conversation]:
    """The tenant's conversations, newest first."""
    rows = (
        (
            await conn.execute(
                sa.select(_conv)
                .where(_conv.c.tenant_id == tenant_id)
                .order_by(_conv.c.updated_at.desc())
                .limit(limit)
            )
        )
        .mappings()
        .all()
    )
    return [_conversation(r) for r in rows]


async def update(
    conn: AsyncConnection,
    tenant_id: str,
    conversation_id: str,
    now: datetime,
    *,
    state: conversation.State | None = None,
    current_agent: str | None = None,
) -> None:
    """Change state and/or current agent; a state change must follow the transition table."""
    values: dict[str, Any] = {"updated_at": now}
    if state is not None:
        current = await get(conn, tenant_id, conversation_id)
        if current.state != state:
            check_transition(conversation.TRANSITIONS, current.state, state)
        values["state"] = state.value
    if current_agent is not None:
        values["current_agent"] = current_agent
    await conn.execute(
        sa.update(_conv)
        .where(_conv.c.id == conversation_id, _conv.c.tenant_id == tenant_id)
        .values(**values)
    )


def _conversation(row: sa.RowMapping) -> conversation.Conversation:
    return conversation.Conversation(
        id=row["id"],
        tenant_id=row["tenant_id"],
        project_id=row["project_id"],
        title=row["title"],
        state=conversation.State(row["state"]),
        current_agent=row["current_agent"],
        last_seq=row["last_seq"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        metadata=row["metadata"],
    )
