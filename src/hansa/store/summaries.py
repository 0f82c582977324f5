"""Conversations' rolling summaries (``domain/summary.py``): one row per version.

Writers call :func:`lock` first: it takes the conversation's row (as appending events
does), so two summary jobs never write the same version, on SQLite or PostgreSQL.
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy import Connection

from hansa import errors
from hansa.domain import summary
from hansa.store import conversations, direct, events, tables

_s = tables.conversation_summaries
_B = sa.bindparam

# Statements are built once and run through store.direct (decision 0007).
_NEWEST = (
    sa.select(_s)
    .where(_s.c.conversation_id == _B("p_conversation"))
    .order_by(_s.c.version.desc())
    .limit(sa.literal_column("1"))
    .subquery("newest")
)
_LATEST = sa.select(_NEWEST).where(_NEWEST.c.tenant_id == _B("p_tenant"))
"""The newest version, one row read: a backward scan of the primary key from the
conversation's greatest version. The tenant is checked on that row, outside the ``LIMIT``
(and the ``LIMIT`` is written, not a parameter): with the tenant a condition of the scan,
or an unknown limit, PostgreSQL estimated one matching row before the table's first
ANALYZE and read every version by a bitmap scan, then sorted them (300 rows a turn after
300 summaries; ``max(version)`` in a subquery was planned the same way)."""
_INSERT = _s.insert()
_OF_CONVERSATION = (_s.c.conversation_id == _B("p_conversation"), _s.c.tenant_id == _B("p_tenant"))
_PAGE = (
    sa.select(_s)
    .where(*_OF_CONVERSATION, _s.c.version < _B("p_before"))
    .order_by(_s.c.version.desc())
    .limit(_B("p_limit"))
)
_VERSION = sa.select(_s).where(*_OF_CONVERSATION, _s.c.version == _B("p_version"))

PAGE = 20
"""Versions a page holds unless asked otherwise."""
PAGE_MAX = 100
"""The most versions a page may hold."""
MAX_VERSION = 2**31 - 1
"""The largest version the column holds (a 32-bit integer on PostgreSQL)."""


def lock(conn: Connection, tenant_id: str, conversation_id: str) -> None:
    """Hold the conversation's row to the commit (NotFound for another tenant's)."""
    events.reserve_seqs(conn, tenant_id, conversation_id, 0)


def latest(
    conn: Connection, tenant_id: str, conversation_id: str
) -> summary.ConversationSummary | None:
    """The newest version of the conversation's summary, or None before the first."""
    params = {"p_conversation": conversation_id, "p_tenant": tenant_id}
    row = direct.first(conn, _LATEST, params)
    return _summary(row) if row is not None else None


def page(
    conn: Connection, tenant_id: str, conversation_id: str, before: int | None, limit: int
) -> list[summary.ConversationSummary]:
    """The conversation's versions older than ``before`` (all when None), newest first,
    at most ``limit``; NotFound for an unknown or another tenant's conversation."""
    conversations.get(conn, tenant_id, conversation_id)
    params = {
        "p_conversation": conversation_id,
        "p_tenant": tenant_id,
        "p_before": before if before is not None else MAX_VERSION,
        "p_limit": limit,
    }
    return [_summary(r) for r in direct.rows(conn, _PAGE, params)]


def get(
    conn: Connection, tenant_id: str, conversation_id: str, version: int
) -> summary.ConversationSummary:
    """One version; NotFound for an unknown version or conversation (or another tenant's)."""
    params = {"p_conversation": conversation_id, "p_tenant": tenant_id, "p_version": version}
    row = direct.first(conn, _VERSION, params)
    if row is None:
        raise errors.NotFound(f"conversation {conversation_id} has no summary version {version}")
    return _summary(row)


def _summary(row: direct.Row) -> summary.ConversationSummary:
    return summary.ConversationSummary.model_validate(
        {**row, "facts": summary.SummaryFacts.model_validate(row["facts"])}
    )


def add(conn: Connection, tenant_id: str, new: summary.ConversationSummary) -> None:
    """Store ``new`` (its version one more than :func:`latest`'s, read under :func:`lock`)."""
    direct.execute(
        conn,
        _INSERT,
        {
            "conversation_id": new.conversation_id,
            "version": new.version,
            "tenant_id": tenant_id,
            "covered_through_seq": new.covered_through_seq,
            "covered_messages": new.covered_messages,
            "text": new.text,
            "facts": new.facts.model_dump(mode="json", by_alias=True),
            "model_failed": new.model_failed,
            "created_at": new.created_at,
        },
    )
