"""Messages: stored with the seq of the event that announced them."""

from __future__ import annotations

import functools
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection

from hansa.domain import message
from hansa.store import conversations, direct, tables
from hansa.store.db import growing

_msg = tables.assistant_messages
_B = sa.bindparam

# Statements are built once and run through store.direct (decision 0007).
_INSERT = _msg.insert()
_THINKING_OF_RUN = (
    sa.select(_msg)
    .where(
        _msg.c.tenant_id == _B("p_tenant"),
        _msg.c.run_id == _B("p_run"),
        _msg.c.kind == message.Kind.THINKING.value,
    )
    .order_by(_msg.c.seq)
)


@functools.cache
def _list_query(
    by_turn: bool, kinds: frozenset[str], newest: bool
) -> sa.Select[tuple[object, ...]]:
    query = sa.select(_msg).where(
        _msg.c.conversation_id == _B("p_conversation"), _msg.c.tenant_id == _B("p_tenant")
    )
    if by_turn:
        query = query.where(_msg.c.turn_id == _B("p_turn"))
    if kinds:
        query = query.where(direct.one_of(_msg.c.kind, kinds))
    if newest:
        return query.order_by(_msg.c.seq.desc()).limit(_B("p_last"))
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
    params: dict[str, object] = {"p_conversation": conversation_id, "p_tenant": tenant_id}
    if turn_id is not None:
        params["p_turn"] = turn_id
    if last is not None:
        params["p_last"] = last
    query = _list_query(turn_id is not None, frozenset(k.value for k in kinds), last is not None)
    rows = direct.rows(conn, query, params)
    if last is not None:
        rows.reverse()
    return [_message(r) for r in rows]


@functools.cache
def _after_query(count: bool, kinds: frozenset[str]) -> sa.Select[Any]:
    query = (sa.select(sa.func.count()) if count else sa.select(_msg)).where(
        _msg.c.conversation_id == _B("p_conversation"),
        _msg.c.tenant_id == _B("p_tenant"),
        _msg.c.seq > _B("p_after"),
        direct.one_of(_msg.c.kind, kinds),
    )
    return query if count else query.order_by(_msg.c.seq.desc()).limit(_B("p_last"))


def newest_after(
    conn: Connection,
    tenant_id: str,
    conversation_id: str,
    after_seq: int,
    kinds: tuple[message.Kind, ...],
    last: int,
) -> tuple[list[message.Message], int]:
    """The newest ``last`` messages of ``kinds`` after seq ``after_seq``, in order, and how
    many there are after it in all (those the list leaves out are older)."""
    params: dict[str, object] = {
        "p_conversation": conversation_id,
        "p_tenant": tenant_id,
        "p_after": after_seq,
    }
    named = frozenset(k.value for k in kinds)
    rows = direct.rows(conn, _after_query(False, named), {**params, "p_last": last})
    found = [_message(r) for r in reversed(rows)]
    if len(found) < last:
        return found, len(found)
    return found, int(direct.scalar(conn, _after_query(True, named), params) or 0)


_BY_ID = sa.select(_msg).where(
    _msg.c.id == _B("p_id"),
    # checks of the row the key finds: PostgreSQL without statistics took
    # ix_messages_conversation for it, every message of the conversation (decision 0043)
    direct.only_checks(_msg.c.conversation_id) == _B("p_conversation"),
    direct.only_checks(_msg.c.tenant_id) == _B("p_tenant"),
)


def by_ids(
    conn: Connection, tenant_id: str, conversation_id: str, ids: list[str]
) -> list[message.Message]:
    """The conversation's messages of ``ids`` (a few: one look-up each), in order; ids it
    does not hold are left out."""
    found = []
    for message_id in ids:
        params = {"p_id": message_id, "p_conversation": conversation_id, "p_tenant": tenant_id}
        row = direct.first(conn, _BY_ID, params)
        if row is not None:
            found.append(_message(row))
    return sorted(found, key=lambda m: m.seq or 0)


def seq_of(conn: Connection, tenant_id: str, conversation_id: str, message_id: str) -> int | None:
    """The seq of one message of the conversation (a look-up by its id); None if it has
    none or the conversation does not hold it."""
    params = {"p_id": message_id, "p_conversation": conversation_id, "p_tenant": tenant_id}
    row = direct.first(conn, _BY_ID, params)
    return None if row is None or row["seq"] is None else int(row["seq"])


@growing
def all_of(conn: Connection, tenant_id: str, conversation_id: str) -> list[message.Message]:
    """Every message of a conversation, in order; NotFound for an unknown conversation."""
    conversations.get(conn, tenant_id, conversation_id)
    return list_for(conn, tenant_id, conversation_id)


def _message(row: direct.Row) -> message.Message:
    return message.Message.model_validate(row)


def thinking_of_run(conn: Connection, tenant_id: str, run_id: str) -> list[message.Message]:
    """A run's thinking entries in order (for run cards)."""
    rows = direct.rows(conn, _THINKING_OF_RUN, {"p_tenant": tenant_id, "p_run": run_id})
    return [_message(r) for r in rows]
