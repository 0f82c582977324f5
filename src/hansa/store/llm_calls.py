"""Model call records: tokens, latency, cost and errors of every call."""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy import Connection

from hansa.domain import llm_call
from hansa.store import tables

_calls = tables.llm_calls
_INSERT = _calls.insert()


def record(conn: Connection, call: llm_call.LlmCall) -> None:
    """Insert one call record."""
    conn.execute(_INSERT, call.model_dump())


def list_for(
    conn: Connection,
    tenant_id: str,
    *,
    conversation_id: str | None = None,
    run_id: str | None = None,
    limit: int = 500,
) -> list[llm_call.LlmCall]:
    """Call records of a tenant, optionally of one conversation or run, oldest first."""
    query = sa.select(_calls).where(_calls.c.tenant_id == tenant_id)
    if conversation_id is not None:
        query = query.where(_calls.c.conversation_id == conversation_id)
    if run_id is not None:
        query = query.where(_calls.c.run_id == run_id)
    rows = (conn.execute(query.order_by(_calls.c.created_at).limit(limit))).mappings().all()
    return [llm_call.LlmCall.model_validate(dict(r)) for r in rows]
