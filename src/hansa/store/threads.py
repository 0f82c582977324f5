"""Conversations named by an outside client's thread: the Agent Protocol's ``thread_id``,
AG-UI's ``threadId``, or the history an OpenAI chat client sends again with each request.

An Agent Protocol thread is named by its conversation's id (one Hansa issued) or by the id
its client chose for it (a UUID), kept in the conversation's ``client_id``: unique within the
tenant (an index), not across tenants, so one tenant's choice tells another nothing
(security review 2026-11-27, L2). :func:`conversation_of` is how every ``/ap`` route finds it.

AG-UI's and OpenAI's names are kept in the conversation's metadata under a key of their own
(``AGUI``, ``OPENAI_HISTORY``). Finding one reads the tenant's conversations, so it is
``@growing``. Two first requests of one thread at once may both open a conversation: the
oldest one wins from then on.
"""

from __future__ import annotations

import functools
from datetime import datetime

import sqlalchemy as sa
from sqlalchemy import Connection

from hansa import errors
from hansa.store import conversations, direct, tables
from hansa.store.db import growing

AGUI = "aguiThreadId"
"""AG-UI's ``threadId``."""
OPENAI_HISTORY = "openaiHistory"
"""The digest of an OpenAI chat's messages so far (``api/routes/openai_chat.py``)."""

_conv = tables.assistant_conversations
_B = sa.bindparam
_TENANTS = _conv.c.tenant_id == _B("p_tenant")
_CHOSEN = sa.select(_conv.c.id).where(_TENANTS, _conv.c.client_id == _B("p_thread"))
_ISSUED = sa.select(_conv.c.id).where(_TENANTS, _conv.c.id == _B("p_thread"))
_SHOWN = sa.select(sa.func.coalesce(_conv.c.client_id, _conv.c.id)).where(
    _TENANTS, _conv.c.id == _B("p_id")
)
_NAME = sa.update(_conv).where(_TENANTS, _conv.c.id == _B("p_id")).values(client_id=_B("p_thread"))


def conversation_of(conn: Connection, tenant_id: str, thread_id: str) -> str:
    """The id of the tenant's conversation an Agent Protocol client calls ``thread_id``: the
    one whose client chose that id, else the one of that id; NotFound (also for an id only
    another tenant has)."""
    params = {"p_tenant": tenant_id, "p_thread": thread_id}
    found = direct.scalar(conn, _CHOSEN, params) or direct.scalar(conn, _ISSUED, params)
    if found is None:
        raise errors.NotFound(f"thread {thread_id} not found")
    return str(found)


def thread_id_of(conn: Connection, tenant_id: str, conversation_id: str) -> str:
    """What an Agent Protocol client calls the tenant's conversation: the id its client
    chose, else its own."""
    shown = direct.scalar(conn, _SHOWN, {"p_tenant": tenant_id, "p_id": conversation_id})
    if shown is None:
        raise errors.NotFound(f"conversation {conversation_id} not found")
    return str(shown)


def name(conn: Connection, tenant_id: str, conversation_id: str, thread_id: str) -> None:
    """Give the tenant's conversation the id its client chose; Conflict when another of the
    tenant's conversations has it."""
    params = {"p_tenant": tenant_id, "p_id": conversation_id, "p_thread": thread_id}
    try:
        direct.execute(conn, _NAME, params)
    except sa.exc.IntegrityError as exc:
        raise errors.Conflict(
            f"thread {thread_id} already exists", details={"threadId": thread_id}
        ) from exc


@functools.cache
def _find(key: str) -> sa.Select[tuple[str]]:
    return (
        sa.select(_conv.c.id)
        .where(
            _conv.c.tenant_id == _B("p_tenant"),
            _conv.c.metadata[key].as_string() == _B("p_thread"),
        )
        .order_by(_conv.c.created_at, _conv.c.id)
        .limit(1)
    )


@growing
def find(conn: Connection, tenant_id: str, thread_id: str, key: str = AGUI) -> str | None:
    """The id of the tenant's conversation that continues ``thread_id``, if any."""
    # Connection.execute, not store.direct: direct passes the JSON path as a fixed literal,
    # without the processor that makes it a path
    found = conn.execute(_find(key), {"p_tenant": tenant_id, "p_thread": thread_id}).scalar()
    return None if found is None else str(found)


def remember(
    conn: Connection,
    tenant_id: str,
    conversation_id: str,
    thread_id: str,
    now: datetime,
    key: str = AGUI,
) -> None:
    """Mark the conversation as the one that continues ``thread_id``."""
    conversations.set_metadata(conn, tenant_id, conversation_id, key, thread_id, now)
