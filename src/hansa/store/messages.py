"""Messages: stored with the seq of the event that announced them."""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from hansa.domain import message
from hansa.store import tables

_msg = tables.assistant_messages


async def insert(conn: AsyncConnection, tenant_id: str, msg: message.Message, seq: int) -> None:
    """Insert a message announced by the event with ``seq``."""
    await conn.execute(
        _msg.insert().values(
            id=msg.id,
            tenant_id=tenant_id,
            conversation_id=msg.conversation_id,
            seq=seq,
            turn_id=msg.turn_id,
            run_id=msg.run_id,
            author=msg.author.value,
            agent_id=msg.agent_id,
            kind=msg.kind.value,
            content=msg.content,
            created_at=msg.created_at,
            metadata=msg.metadata,
        )
    )


async def list_for(
    conn: AsyncConnection,
    tenant_id: str,
    conversation_id: str,
    *,
    turn_id: str | None = None,
    kinds: tuple[message.Kind, ...] = (),
    last: int | None = None,
) -> list[message.Message]:
    """A conversation's messages in order; ``last`` keeps only the newest N."""
    query = sa.select(_msg).where(
        _msg.c.conversation_id == conversation_id, _msg.c.tenant_id == tenant_id
    )
    if turn_id is not None:
        query = query.where(_msg.c.turn_id == turn_id)
    if kinds:
        query = query.where(_msg.c.kind.in_([k.value for k in kinds]))
    if last is not None:
        query = query.order_by(_msg.c.seq.desc()).limit(last)
        rows = list(reversed((await conn.execute(query)).mappings().all()))
    else:
        rows = list((await conn.execute(query.order_by(_msg.c.seq))).mappings().all())
    return [_message(r) for r in rows]


def _message(row: sa.RowMapping) -> message.Message:
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
