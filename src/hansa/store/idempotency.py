"""Idempotency keys: the first response to a keyed request, kept for replays."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import sqlalchemy as sa
from sqlalchemy import Connection

from hansa.store import direct, tables

_keys = tables.idempotency_keys
_B = sa.bindparam

# Statements are built once and run through store.direct (decision 0007).
_MINE = (_keys.c.tenant_id == _B("p_tenant"), _keys.c.key == _B("p_key"))
_GET = sa.select(_keys.c.request_hash, _keys.c.status_code, _keys.c.response).where(*_MINE)
_INSERT = _keys.insert()
_COMPLETE = (
    sa.update(_keys)
    .where(*_MINE)
    .values(status_code=_B("p_status_code"), response=_B("p_response"))
)
_DELETE = sa.delete(_keys).where(*_MINE)


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
    row = direct.first(conn, _GET, {"p_tenant": tenant_id, "p_key": key})
    if row is not None:
        return Stored(**row)
    direct.execute(
        conn,
        _INSERT,
        {
            "tenant_id": tenant_id,
            "key": key,
            "request_hash": request_hash,
            "status_code": 0,
            "created_at": now,
        },
    )
    return None


def complete(conn: Connection, tenant_id: str, key: str, status_code: int, response: str) -> None:
    """Keep the response given under ``key``."""
    params = {"p_tenant": tenant_id, "p_key": key, "p_status_code": status_code}
    direct.execute(conn, _COMPLETE, {**params, "p_response": response})


def release(conn: Connection, tenant_id: str, key: str) -> None:
    """Forget ``key`` (its request failed on our side; a retry may run it again)."""
    direct.execute(conn, _DELETE, {"p_tenant": tenant_id, "p_key": key})
