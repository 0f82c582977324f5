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
_GET = sa.select(
    _keys.c.request_hash, _keys.c.status_code, _keys.c.response, _keys.c.created_at
).where(*_MINE)
_INSERT = _keys.insert()
_TAKE_OVER = (  # only if nobody took it over first: the row is as we read it
    sa.update(_keys)
    .where(*_MINE, _keys.c.created_at == _B("p_seen"))
    .values(request_hash=_B("p_hash"), status_code=0, response=None, created_at=_B("p_now"))
)
_COMPLETE = (
    sa.update(_keys)
    .where(*_MINE)
    .values(status_code=_B("p_status_code"), response=_B("p_response"))
)
_DELETE = sa.delete(_keys).where(*_MINE)
_SWEEP = sa.delete(_keys).where(_keys.c.created_at < _B("p_before"))


@dataclass(frozen=True)
class Stored:
    """What an earlier request with the same key left."""

    request_hash: str
    status_code: int
    """0 while that request is still being answered."""
    response: str | None


@dataclass(frozen=True)
class Ages:
    """When an earlier request's key stops counting."""

    abandoned_before: datetime
    """A key reserved before this whose request never answered: its process died."""
    expired_before: datetime
    """A key whose answer was kept since before this: past its time to live."""


def reserve(
    conn: Connection, tenant_id: str, key: str, request_hash: str, now: datetime, ages: Ages
) -> Stored | None:
    """Claim ``key`` for this request (None), or return what an earlier request left.

    A key abandoned or expired (``ages``) is claimed afresh.
    """
    mine = {"p_tenant": tenant_id, "p_key": key}
    row = direct.first(conn, _GET, mine)
    if row is None:
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
    earlier = Stored(row["request_hash"], row["status_code"], row["response"])
    since: datetime = row["created_at"]
    stale = since < (ages.abandoned_before if earlier.status_code == 0 else ages.expired_before)
    if not stale:
        return earlier
    params = {**mine, "p_seen": since, "p_hash": request_hash, "p_now": now}
    if direct.execute(conn, _TAKE_OVER, params) == 1:
        return None
    return Stored(request_hash, 0, None)  # another request took it over just now


def complete(conn: Connection, tenant_id: str, key: str, status_code: int, response: str) -> None:
    """Keep the response given under ``key``."""
    params = {"p_tenant": tenant_id, "p_key": key, "p_status_code": status_code}
    direct.execute(conn, _COMPLETE, {**params, "p_response": response})


def release(conn: Connection, tenant_id: str, key: str) -> None:
    """Forget ``key`` (its request failed on our side; a retry may run it again)."""
    direct.execute(conn, _DELETE, {"p_tenant": tenant_id, "p_key": key})


def sweep(conn: Connection, before: datetime) -> int:
    """Forget every key older than ``before``, of every tenant; how many were forgotten."""
    return direct.execute(conn, _SWEEP, {"p_before": before})
