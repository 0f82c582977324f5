"""Conversations named by an outside client's thread id (AG-UI's ``threadId``).

The id is kept in the conversation's metadata under ``THREAD_KEY``; no table of its own
(no migration). Finding it reads the tenant's conversations, so it is ``@growing``. Two
first requests of one thread at once may both open a conversation: the oldest one wins
from then on.
"""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from sqlalchemy import Connection

from hansa.store import conversations, tables
from hansa.store.db import growing

THREAD_KEY = "aguiThreadId"
"""The metadata key holding the outside thread id."""

_conv = tables.assistant_conversations
_B = sa.bindparam
_FIND = (
    sa.select(_conv.c.id)
    .where(
        _conv.c.tenant_id == _B("p_tenant"),
        _conv.c.metadata[THREAD_KEY].as_string() == _B("p_thread"),
    )
    .order_by(_conv.c.created_at, _conv.c.id)
    .limit(1)
)


@growing
def find(conn: Connection, tenant_id: str, thread_id: str) -> str | None:
    """The id of the tenant's conversation that continues ``thread_id``, if any."""
    # Connection.execute, not store.direct: direct passes the JSON path as a fixed literal,
    # without the processor that makes it a path
    found = conn.execute(_FIND, {"p_tenant": tenant_id, "p_thread": thread_id}).scalar()
    return None if found is None else str(found)


def remember(
    conn: Connection, tenant_id: str, conversation_id: str, thread_id: str, now: datetime
) -> None:
    """Mark the conversation as the one that continues ``thread_id``."""
    conversations.set_metadata(conn, tenant_id, conversation_id, THREAD_KEY, thread_id, now)
