"""Messages: stored with the seq of the event that announced them."""

from __future__ import annotations

import functools

import sqlalchemy as sa
from sqlalchemy import Connection

from hansa.domain import message
from hansa.store import direct, tables

_msg = tables.assistant_messages
_INSERT = _msg.insert()
_THINKING_OF_RUN = (
    sa.select(_msg)
    .where(
        _msg.c.tenant_id == sa.bindparam("p_tenant"),
        _msg.c.run_id == sa.bindparam("p_run"),
        _msg.c.kind == message.Kind.THINKING.value,
    )
    .order_by(_msg.c.seq)
)


@functools.cache
def _list_query(by_turn: bool, by_kind: bool, newest: bool) -> sa.Select[tuple[object, ...]]:
    query = sa.select(_msg).where(
        _msg.c.conversation_id == sa.bindparam("conversation_id"),
        _msg.c.tenant_id == sa.bindparam("tenant_id"),
    )
    if by_turn:
        query = query.where(_msg.c.turn_id == sa.bindparam("turn_id"))
    if by_kind:
        query = query.where(_msg.c.kind.in_(sa.bindparam("kinds", expanding=True)))
    if newest:
        return query.order_by(_msg.c.seq.desc()).limit(sa.bindparam("last"))
    return query.order_by(_msg.c.seq)


def insert(conn: Connection, tenant_id: str, stored: list[tuple[message.Message, int]]) -> None:
    """Insert messages, each with the seq of the event that announced it."""
    if not stored:
        return
    direct.execute_many(
        conn,
        _INSERT,
        [
            {
                "id": msg.id,
                "tenant_id": tenant_id,
                "conversation_id": msg.conversation_id,
                "seq": seq,
                "turn_id": msg.turn_id,
                "run_id": msg.run_id,
                "author": msg.author.value,
                "agent_id": msg.agent_id,
                "kind": msg.kind.value,
                "content": msg.content,
                "created_at": msg.created_at,
                "metadata": msg.metadata,
            }
            for msg, seq in stored
        ],
    )


def list_for(
    conn: Connection,
    tenant_id: str,
    conversation_id: str,
    *,
    turn_id: str | None = None,
    kinds: tuple[message.Kind, ...] = (),
    last: int | None = None,
) -> list[message.Message]:
    """A conversation's messages in order; ``last`` keeps only the newest N."""
    params: dict[str, object] = {"conversation_id": conversation_id, "tenant_id": tenant_id}
    if turn_id is not None:
        params["turn_id"] = turn_id
    if kinds:
        params["kinds"] = [k.value for k in kinds]
    if last is not None:
        params["last"] = last
    query = _list_query(turn_id is not None, bool(kinds), last is not None)
    rows = conn.execute(query, params).mappings().all()
    if last is not None:
        rows = list(reversed(rows))
    return [_message(r) for r in rows]


def _message(row: direct.Row) -> message.Message:
    return message.Message(
        id=row["id"],
        conversation_id=row["conversation_id"],
        turn_id=row["turn_id"],
        run_id=row["run_id"],
        kind=message.Kind(row["kind"]),
        author=message.Author(row["author"]),
        agent_id=row["agent_id"],
        content=row["content"],
        created_at=row["created_at"],
        metadata=row["metadata"],
    )


def thinking_of_run(conn: Connection, tenant_id: str, run_id: str) -> list[message.Message]:
    """A run's thinking entries in order (for run cards)."""
    rows = direct.rows(conn, _THINKING_OF_RUN, {"p_tenant": tenant_id, "p_run": run_id})
    return [_message(r) for r in rows]
