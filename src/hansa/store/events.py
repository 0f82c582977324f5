"""The event log: append with gap-free per-conversation ``seq``, read after a cursor."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection

from hansa import errors
from hansa.domain import event, turn
from hansa.store import conversations, direct, messages, notify, tables
from hansa.store.db import growing

_conv = tables.assistant_conversations
_events = tables.events
_B = sa.bindparam

PAGE = 500
"""Events one read returns at most."""

# Statements are built once (building one costs ten times more than running it) and run
# through store.direct (decision 0007).
_RESERVE = (
    sa.update(_conv)
    .where(
        _conv.c.id == _B("p_conversation"),
        direct.only_checks(_conv.c.tenant_id) == _B("p_tenant"),
    )
    .values(last_seq=_conv.c.last_seq + _B("p_count"))
    .returning(_conv.c.last_seq)
)
_INSERT = _events.insert()
_AFTER = (
    _events.c.conversation_id == _B("p_conversation"),
    _events.c.tenant_id == _B("p_tenant"),
    _events.c.seq > _B("p_after"),
)
_READ_AFTER = sa.select(_events).where(*_AFTER).order_by(_events.c.seq).limit(_B("p_limit"))
_READ_RUN_AFTER = (
    sa.select(_events)
    .where(*_AFTER, _events.c.run_id == _B("p_run"))
    .order_by(_events.c.seq)
    .limit(_B("p_limit"))
)


@functools.cache
def _of_turn(types: tuple[str, ...]) -> sa.Select[Any]:
    # one statement per set of types: fixed equalities, not an IN list
    return (
        sa.select(_events)
        .where(
            *_AFTER,
            _events.c.turn_id == _B("p_turn"),
            direct.one_of(_events.c.type, types),
        )
        .order_by(_events.c.seq)
    )


WHOLE_LOG = 100_000
"""Events ``all_of`` returns at most."""


@dataclass(frozen=True, slots=True)
class NewEvent:
    """An event not yet in the log."""

    payload: event.Payload
    turn_id: str | None = None
    run_id: str | None = None
    task_id: str | None = None
    agent_id: str | None = None


def reserve_seqs(conn: Connection, tenant_id: str, conversation_id: str, count: int) -> int:
    """Bump the conversation's ``last_seq`` by ``count``; returns the first reserved seq.

    The row update also serializes every writer of one conversation until commit.
    """
    new_last = direct.scalar(
        conn, _RESERVE, {"p_conversation": conversation_id, "p_tenant": tenant_id, "p_count": count}
    )
    if new_last is None:
        raise errors.NotFound(f"conversation {conversation_id} not found")
    return int(new_last) - count + 1


def append(
    conn: Connection,
    tenant_id: str,
    conversation_id: str,
    new_events: list[NewEvent],
    now: datetime,
) -> list[event.Event]:
    """Append events in the caller's transaction; they commit with the change they announce."""
    if not new_events:
        return []
    first = reserve_seqs(conn, tenant_id, conversation_id, len(new_events))
    stored = [
        event.Event(
            seq=first + i,
            conversation_id=conversation_id,
            turn_id=e.turn_id,
            run_id=e.run_id,
            task_id=e.task_id,
            agent_id=e.agent_id,
            created_at=now,
            payload=e.payload,
        )
        for i, e in enumerate(new_events)
    ]
    direct.execute_many(conn, _INSERT, [_row(tenant_id, e) for e in stored])
    notify.events_committed(conn, conversation_id, stored[-1].seq)
    return stored


def _row(tenant_id: str, e: event.Event) -> dict[str, Any]:
    return {
        "tenant_id": tenant_id,
        "conversation_id": e.conversation_id,
        "seq": e.seq,
        "type": e.payload.type,
        "turn_id": e.turn_id,
        "run_id": e.run_id,
        "task_id": e.task_id,
        "agent_id": e.agent_id,
        "data": e.payload.model_dump(mode="json", by_alias=True, exclude={"type"}),
        "created_at": e.created_at,
    }


def read_after(
    conn: Connection,
    tenant_id: str,
    conversation_id: str,
    after: int,
    *,
    limit: int = PAGE,
    run_id: str | None = None,
) -> list[event.Event]:
    """Events with ``seq > after`` in order, at most ``limit`` of them."""
    params = {
        "p_conversation": conversation_id,
        "p_tenant": tenant_id,
        "p_after": after,
        "p_limit": limit,
    }
    if run_id is None:
        return [_event(row) for row in direct.rows(conn, _READ_AFTER, params)]
    rows = direct.rows(conn, _READ_RUN_AFTER, {**params, "p_run": run_id})
    return [_event(row) for row in rows]


def of_turn(
    conn: Connection, tenant_id: str, t: turn.Turn, types: tuple[str, ...]
) -> list[event.Event]:
    """The events of these ``types`` that turn ``t``'s processing wrote, in order.

    They all come after the turn's message, so the read starts there: by the log's key it
    reads the events since, not the conversation's whole log (no index serves ``turn_id``;
    decision 0043).
    """
    after = messages.seq_of(conn, tenant_id, t.conversation_id, t.message_id)
    params = {
        "p_conversation": t.conversation_id,
        "p_tenant": tenant_id,
        "p_turn": t.id,
        "p_after": after or 0,
    }
    return [_event(row) for row in direct.rows(conn, _of_turn(types), params)]


def tools_of_turn(conn: Connection, tenant_id: str, t: turn.Turn) -> list[event.Event]:
    """The ``tool_call`` and ``tool_result`` events of turn ``t``, in order."""
    return of_turn(conn, tenant_id, t, ("tool_call", "tool_result"))


def run_moves_of_turn(conn: Connection, tenant_id: str, t: turn.Turn) -> list[event.Event]:
    """The ``run_created``, ``plan`` and ``run_status`` events turn ``t`` wrote, in order."""
    return of_turn(conn, tenant_id, t, ("run_created", "plan", "run_status"))


@growing
def all_of(
    conn: Connection, tenant_id: str, conversation_id: str, *, run_id: str | None = None
) -> list[event.Event]:
    """A conversation's whole log (or the events of one run in it), in order, up to
    ``WHOLE_LOG``; NotFound for an unknown conversation."""
    conversations.get(conn, tenant_id, conversation_id)
    return read_after(conn, tenant_id, conversation_id, 0, limit=WHOLE_LOG, run_id=run_id)


def _event(row: direct.Row) -> event.Event:
    # the payload is stored as its tag (``type``) and the rest (``data``)
    payload = event.payload_from_stored(row["type"], row["data"])
    return event.Event.model_validate({**row, "payload": payload})
