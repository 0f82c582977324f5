"""Conversations: create, read, and move between states."""

from __future__ import annotations

import functools
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection

from hansa import errors
from hansa.domain import conversation
from hansa.domain.transitions import check_transition, sources
from hansa.store import direct, tables
from hansa.store.db import growing

_conv = tables.assistant_conversations
_B = sa.bindparam

# Statements are built once and run through store.direct (decision 0007).
_INSERT = _conv.insert()
_MINE = (_conv.c.id == _B("p_id"), direct.only_checks(_conv.c.tenant_id) == _B("p_tenant"))
_GET = sa.select(_conv).where(*_MINE)
_TAKEN = sa.select(_conv.c.id).where(_conv.c.id == _B("p_id"))
_RECENT = (
    sa.select(_conv)
    .where(_conv.c.tenant_id == _B("p_tenant"))
    .order_by(_conv.c.updated_at.desc())
    .limit(_B("p_limit"))
)
_SET_METADATA = (
    sa.update(_conv)
    .where(*_MINE)
    .values(metadata=_B("p_metadata", type_=_conv.c.metadata.type), updated_at=_B("p_now"))
)
_SET_USER = (
    sa.update(_conv)
    .where(*_MINE)
    .values(user=_B("p_user", type_=_conv.c.user.type), updated_at=_B("p_now"))
)
_SET_TITLE = sa.update(_conv).where(*_MINE).values(title=_B("p_title"), updated_at=_B("p_now"))
_states = tables.agent_states
_CLEAR_STATES = (
    sa.update(_states)
    .where(_states.c.conversation_id == _B("p_id"), _states.c.tenant_id == _B("p_tenant"))
    .values(
        state=_B("p_empty", type_=_states.c.state.type),
        version=_states.c.version + 1,
        updated_at=_B("p_now"),
    )
)
CLOSING = frozenset({conversation.State.RESOLVED, conversation.State.ARCHIVED})
"""States that clear the agents' states of the conversation as it moves there (seed 002
§8.6: an agent state lives as long as its session; issue 32 item 3)."""


@functools.cache
def _move(allowed: frozenset[str]) -> sa.Update:
    # one statement per set of allowed sources: fixed equalities, not an IN list
    return (
        sa.update(_conv)
        .where(*_MINE, direct.one_of(_conv.c.state, allowed))
        .values(
            state=_B("p_state"),
            updated_at=_B("p_now"),
            current_agent=sa.func.coalesce(_B("p_agent", type_=sa.String), _conv.c.current_agent),
        )
    )


def create(conn: Connection, convo: conversation.Conversation) -> None:
    """Insert a new conversation."""
    direct.execute(
        conn,
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
            "user": convo.user,
        },
    )


def taken(conn: Connection, conversation_id: str) -> bool:
    """Whether any tenant has a conversation of this id (for ids a client chooses)."""
    return direct.first(conn, _TAKEN, {"p_id": conversation_id}) is not None


def get(conn: Connection, tenant_id: str, conversation_id: str) -> conversation.Conversation:
    """The conversation, or NotFound (also for another tenant's id)."""
    row = direct.first(conn, _GET, {"p_id": conversation_id, "p_tenant": tenant_id})
    if row is None:
        raise errors.NotFound(f"conversation {conversation_id} not found")
    return _conversation(row)


@growing
def list_recent(
    conn: Connection, tenant_id: str, *, limit: int = 50
) -> list[conversation.Conversation]:
    """The tenant's conversations, newest first."""
    rows = direct.rows(conn, _RECENT, {"p_tenant": tenant_id, "p_limit": limit})
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

    Staying in ``target`` is always allowed. One conditional UPDATE, no read first; a move
    to ``resolved`` or ``archived`` also empties every agent's state of the conversation
    (each a new version; the engine code that moves it announces them:
    ``engine/runtime/agent_state_events.py``).
    When the move is not allowed: TransitionError if ``strict``, else False.
    """
    allowed = sources(conversation.TRANSITIONS, target) | {target}
    if only_from is not None:
        allowed &= set(only_from)
    params = {
        "p_id": conversation_id,
        "p_tenant": tenant_id,
        "p_state": target.value,
        "p_now": now,
        "p_agent": current_agent,
    }
    if direct.execute(conn, _move(frozenset(s.value for s in allowed)), params) == 1:
        if target in CLOSING:  # with the move, whoever moves it (a hand-over, a rule, a graph)
            cleared = {"p_id": conversation_id, "p_tenant": tenant_id, "p_now": now}
            direct.execute(conn, _CLEAR_STATES, {**cleared, "p_empty": {}})
        return True
    current = get(conn, tenant_id, conversation_id)  # NotFound if it does not exist
    if strict:
        check_transition(conversation.TRANSITIONS, current.state, target)
    return False


def set_planning(
    conn: Connection,
    tenant_id: str,
    conversation_id: str,
    state: dict[str, Any] | None,
    now: datetime,
) -> None:
    """Keep (or, with None, drop) the open plan's state in the conversation's metadata."""
    set_metadata(conn, tenant_id, conversation_id, "planning", state, now)


def set_context(
    conn: Connection, tenant_id: str, conversation_id: str, context: dict[str, Any], now: datetime
) -> None:
    """Replace the conversation's context (the ``context.*`` facts of rules)."""
    set_metadata(conn, tenant_id, conversation_id, "context", context, now)


def set_metadata(
    conn: Connection,
    tenant_id: str,
    conversation_id: str,
    key: str,
    value: Any,
    now: datetime,
) -> None:
    """Set (or, with None, remove) one key of the conversation's metadata."""
    current = get(conn, tenant_id, conversation_id)
    metadata = {k: v for k, v in current.metadata.items() if k != key}
    if value is not None:
        metadata[key] = value
    params = {"p_id": conversation_id, "p_tenant": tenant_id, "p_metadata": metadata, "p_now": now}
    direct.execute(conn, _SET_METADATA, params)


def set_user(
    conn: Connection,
    tenant_id: str,
    conversation_id: str,
    user: dict[str, Any] | None,
    now: datetime,
) -> None:
    """Say who the conversation is with (None: nobody); NotFound for another tenant's id."""
    params = {"p_id": conversation_id, "p_tenant": tenant_id, "p_user": user, "p_now": now}
    if direct.execute(conn, _SET_USER, params) != 1:
        raise errors.NotFound(f"conversation {conversation_id} not found")


def set_title(
    conn: Connection, tenant_id: str, conversation_id: str, title: str, now: datetime
) -> None:
    """Name the conversation."""
    params = {"p_id": conversation_id, "p_tenant": tenant_id, "p_title": title, "p_now": now}
    direct.execute(conn, _SET_TITLE, params)


def _conversation(row: direct.Row) -> conversation.Conversation:
    return conversation.Conversation.model_validate(row)
