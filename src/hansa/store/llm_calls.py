"""Model call records: tokens, latency, cost and errors of every call."""

from __future__ import annotations

import functools

import sqlalchemy as sa
from sqlalchemy import Connection

from hansa.domain import llm_call
from hansa.store import direct, tables
from hansa.store.db import growing

_calls = tables.llm_calls
_B = sa.bindparam

# Statements are built once and run through store.direct (decision 0007).
_INSERT = _calls.insert()


@functools.cache
def _list_query(by_conversation: bool, by_run: bool) -> sa.Select[tuple[object, ...]]:
    query = sa.select(_calls).where(_calls.c.tenant_id == _B("p_tenant"))
    if by_conversation:
        query = query.where(_calls.c.conversation_id == _B("p_conversation"))
    if by_run:
        query = query.where(_calls.c.run_id == _B("p_run"))
    return query.order_by(_calls.c.created_at).limit(_B("p_limit"))


def record(conn: Connection, call: llm_call.LlmCall) -> None:
    """Insert one call record."""
    direct.execute(conn, _INSERT, call.model_dump())


@growing
def list_for(
    conn: Connection,
    tenant_id: str,
    *,
    conversation_id: str | None = None,
    run_id: str | None = None,
    limit: int = 500,
) -> list[llm_call.LlmCall]:
    """Call records of a tenant, optionally of one conversation or run, oldest first."""
    params: dict[str, object] = {"p_tenant": tenant_id, "p_limit": limit}
    if conversation_id is not None:
        params["p_conversation"] = conversation_id
    if run_id is not None:
        params["p_run"] = run_id
    query = _list_query(conversation_id is not None, run_id is not None)
    rows = direct.rows(conn, query, params)
    return [llm_call.LlmCall.model_validate(r) for r in rows]
