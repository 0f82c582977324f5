"""Conversations named by an outside client's thread: AG-UI's ``threadId``, or the history
an OpenAI chat client sends again with each request.

The thread's name is kept in the conversation's metadata under a key of its own (``AGUI``,
``OPENAI_HISTORY``); no table of its own (no migration). Finding it reads the tenant's
conversations, so it is ``@growing``. Two first requests of one thread at once may both open
a conversation: the oldest one wins from then on.
"""

from __future__ import annotations

import functools
from datetime import datetime

import sqlalchemy as sa
from sqlalchemy import Connection

from hansa.store import conversations, tables
from hansa.store.db import growing

AGUI = "aguiThreadId"
"""AG-UI's ``threadId``."""
OPENAI_HISTORY = "openaiHistory"
"""The digest of an OpenAI chat's messages so far (``api/routes/openai_chat.py``)."""

_conv = tables.assistant_conversations
_B = sa.bindparam


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
