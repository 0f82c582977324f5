"""Conversations: create, read, and move between states."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection

from hansa import errors
from hansa.domain import conversation
from hansa.domain.transitions import check_transition, sources
from hansa.store import direct, tables

_conv = tables.assistant_conversations
_INSERT = _conv.insert()
_GET = (
    sa.select(_conv)
    .where(_conv.c.id == sa.bindparam("id"))
    .where(_conv.c.tenant_id == sa.bindparam("tenant_id"))
)
_MOVE = (
    sa.update(_conv)
    .where(_conv.c.id == sa.bindparam("p_id"))
    .where(_conv.c.tenant_id == sa.bindparam("p_tenant_id"))
    .where(_conv.c.state.in_(sa.bindparam("p_allowed", expanding=True)))
    .values(
        state=sa.bindparam("p_state"),
        updated_at=sa.bindparam("p_now"),
        current_agent=sa.func.coalesce(
            sa.bindparam("p_agent", type_=sa.String), _conv.c.current_agent
        ),
    )
)


def create(conn: Connection, convo: conversation.Conversation) -> None:
    """Insert a new conversation."""
    conn.execute(
        _INSERT,
        {
            "id": convo.id,
            "tenant_id": convo.tenant_id,
            "project_id": convo.project_id,
            "title": convo.title,
            "state": convo.state.value,
            "current_agent": convo.current_agent,
            "last_seq": convo.last_seq,
            "active_flag": True,
            "created_at": convo.created_at,
            "updated_at": convo.updated_at,
            "metadata": convo.metadata,
        },
    )


def get(conn: Connection, tenant_id: str, conversation_id: str) -> conversation.Conversation:
    """The conversation, or NotFound (also for another tenant's id)."""
    row = direct.first(conn, _GET, {"id": conversation_id, "tenant_id": tenant_id})
    if row is None:
        raise errors.NotFound(f"conversation {conversation_id} not found")
    return _conversation(row)


def list_recent(
    conn: Connection, tenant_id: str, *, limit: int = 50
) -> list[conversation.Conversation]:
    """The tenant's conversations, newest first."""
    rows = (
        (
            conn.execute(
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


def move(
    conn: Connection,
    tenant_id: str,
    conversation_id: str,
    target: conversation.State,
    now: datetime,
    *,
    current_agent: str | None = None,
    strict: bool = True,
    only_from: tuple[conversation.State, ...] | None = None,
) -> bool:
    """Move to ``target`` if the transition table allows it from the current state.

    Staying in ``target`` is always allowed. One conditional UPDATE, no read first.
    When the move is not allowed: TransitionError if ``strict``, else False.
    """
    allowed = sources(conversation.TRANSITIONS, target) | {target}
    if only_from is not None:
        allowed &= set(only_from)
    result = conn.execute(
        _MOVE,
        {
            "p_id": conversation_id,
            "p_tenant_id": tenant_id,
            "p_allowed": [s.value for s in allowed],
            "p_state": target.value,
            "p_now": now,
            "p_agent": current_agent,
        },
    )
    if result.rowcount == 1:
        return True
    current = get(conn, tenant_id, conversation_id)  # NotFound if it does not exist
    if strict:
        check_transition(conversation.TRANSITIONS, current.state, target)
    return False


def _conversation(row: direct.Row) -> conversation.Conversation:
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


def set_planning(
    conn: Connection,
    tenant_id: str,
    conversation_id: str,
    state: dict[str, Any] | None,
    now: datetime,
) -> None:
    """Keep (or, with None, drop) the open plan's state in the conversation's metadata."""
    current = get(conn, tenant_id, conversation_id)
    metadata = {k: v for k, v in current.metadata.items() if k != "planning"}
    if state is not None:
        metadata["planning"] = state
    conn.execute(
        sa.update(_conv)
        .where(_conv.c.id == conversation_id, _conv.c.tenant_id == tenant_id)
        .values(metadata=metadata, updated_at=now)
    )


def set_title(
    conn: Connection, tenant_id: str, conversation_id: str, title: str, now: datetime
) -> None:
    """Name the conversation."""
    conn.execute(
        sa.update(_conv)
        .where(_conv.c.id == conversation_id, _conv.c.tenant_id == tenant_id)
        .values(title=title, updated_at=now)
    )
