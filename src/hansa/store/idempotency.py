"""Idempotency keys: the first response to a keyed request, kept for replays."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import sqlalchemy as sa
from sqlalchemy import Connection

from hansa.store import tables

_keys = tables.idempotency_keys


@dataclass(frozen=True)
class Stored:
    """What an earlier request with the same key left."""

    request_hash: str
    status_code: int
    """0 while that request is still being answered."""
    response: str | None


def reserve(
    conn: Connection, tenant_id: str, key: str, request_hash: str, now: datetime
) -> Stored | None:
    """Claim ``key`` for this request (None), or return what an earlier request left."""
    row = conn.execute(
        sa.select(_keys.c.request_hash, _keys.c.status_code, _keys.c.response).where(
            _keys.c.tenant_id == tenant_id, _keys.c.key == key
        )
    ).first()
    if row is not None:
        return Stored(row.request_hash, row.status_code, row.response)
    conn.execute(
        _keys.insert().values(
            tenant_id=tenant_id, key=key, request_hash=request_hash, status_code=0, created_at=now
        )
    )
    return None


def complete(conn: Connection, tenant_id: str, key: str, status_code: int, response: str) -> None:
    """Keep the response given under ``key``."""
    conn.execute(
        sa.update(_keys)
        .where(_keys.c.tenant_id == tenant_id, _keys.c.key == key)
        .values(status_code=status_code, response=response)
    )


def release(conn: Connection, tenant_id: str, key: str) -> None:
    """Forget ``key`` (its request failed on our side; a retry may run it again)."""
    conn.execute(sa.delete(_keys).where(_keys.c.tenant_id == tenant_id, _keys.c.key == key))
