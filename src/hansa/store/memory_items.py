"""The Agent Protocol's store (LangGraph's long-term memory): a tenant's items, each a JSON
object kept under a namespace (a path of labels) and a key.

A namespace is stored as its labels joined by :data:`SEPARATOR` (so a label holds none).
An item may expire (``expires_at``): from then on every read treats it as absent. No
sweeper deletes expired rows: the next put of their key replaces them (as a new item), and
a tenant's expired rows are deleted when it reaches its limit of items.

Search has no embeddings and no ranking: a filter is equality of top-level fields, a word
a case-insensitive substring of the value's JSON text. Both are matched here, in Python,
on the tenant's items under the prefix, most recently updated first (an index serves that
order), so that they mean the same on SQLite and PostgreSQL; the database reads only the
rows a filter's plain fields could keep (``_narrowed``), and a tenant has at most
:data:`MAX_ITEMS` items and ``max_bytes`` of values (``HANSA_AP_STORE_MAX_BYTES_PER_TENANT``,
each value's ``size`` kept beside it) to look through.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection
from sqlalchemy.dialects import postgresql

from hansa import errors
from hansa.store import tables
from hansa.store.db import growing

SEPARATOR = "."
"""What joins a namespace's labels (``langgraph-sdk`` joins them so in a GET's query)."""
MAX_LABELS = 10
"""The most labels a namespace has."""
MAX_LABEL_CHARS = 100
"""The longest label."""
MAX_KEY_CHARS = 200
"""The longest key."""
MAX_VALUE_BYTES = 64 * 1024
"""The largest value, as compact JSON in UTF-8."""
MAX_ITEMS = 10_000
"""The most items a tenant keeps (expired ones not counted)."""

_m = tables.memory_items
_AFTER_SEPARATOR = chr(ord(SEPARATOR) + 1)
_SCAN_BATCH = 500


@dataclass(frozen=True)
class Item:
    """A stored item."""

    namespace: tuple[str, ...]
    key: str
    value: dict[str, Any]
    """A JSON object."""
    created_at: datetime
    """When its key was first put (or first put again after it expired)."""
    updated_at: datetime
    """When it was last put."""
    expires_at: datetime | None
    """When it stops being found; None: never."""


def value_json(value: Mapping[str, Any]) -> bytes:
    """``value`` as compact JSON in UTF-8: what :data:`MAX_VALUE_BYTES` counts. ValueError
    for what JSON cannot hold (NaN, infinities, unpaired surrogates)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()


def _join(namespace: Sequence[str]) -> str:
    if any(SEPARATOR in label for label in namespace):
        raise errors.InvalidInput(
            f"a namespace label may not contain {SEPARATOR!r}", details={"field": "namespace"}
        )
    return SEPARATOR.join(namespace)


def _mine(tenant_id: str, namespace: Sequence[str], key: str) -> tuple[sa.ColumnElement[bool], ...]:
    return (_m.c.tenant_id == tenant_id, _m.c.namespace == _join(namespace), _m.c.key == key)


def _live(now: datetime) -> sa.ColumnElement[bool]:
    return sa.or_(_m.c.expires_at.is_(None), _m.c.expires_at > now)


def _under(prefix: Sequence[str]) -> sa.ColumnElement[bool]:
    """The namespace is ``prefix`` or below it: a range of the primary key."""
    if not prefix:
        return sa.true()
    joined = _join(prefix)
    below = sa.and_(
        _m.c.namespace >= joined + SEPARATOR, _m.c.namespace < joined + _AFTER_SEPARATOR
    )
    return sa.or_(_m.c.namespace == joined, below)


def _item(row: sa.RowMapping) -> Item:
    return Item(
        namespace=tuple(row["namespace"].split(SEPARATOR)),
        key=row["key"],
        value=row["value"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        expires_at=row["expires_at"],
    )


def _hold_tenant(conn: Connection, tenant_id: str) -> None:
    """On PostgreSQL, hold the tenant's row to the commit, so that puts of one tenant take
    turns (its count of items stays true); SQLite writes take turns anyway. ``FOR NO KEY
    UPDATE`` leaves other tables' inserts (which take the row ``FOR KEY SHARE``) alone."""
    if conn.dialect.name == "postgresql":
        hold = sa.select(tables.tenants.c.id).where(tables.tenants.c.id == tenant_id)
        conn.execute(hold.with_for_update(key_share=True))


def _make_room(conn: Connection, tenant_id: str, now: datetime, max_items: int) -> None:
    """InvalidInput unless the tenant may keep one more item (its expired ones deleted first
    when it has ``max_items`` rows)."""
    mine = _m.c.tenant_id == tenant_id
    rows = int(conn.execute(sa.select(sa.func.count()).where(mine)).scalar_one())
    if rows < max_items:
        return
    swept = conn.execute(sa.delete(_m).where(mine, _m.c.expires_at <= now)).rowcount
    if rows - swept < max_items:
        return
    raise errors.InvalidInput(
        f"a tenant keeps at most {max_items} store items: delete some before putting new ones",
        details={"field": "key", "limit": max_items},
    )


def _make_bytes(
    conn: Connection, tenant_id: str, now: datetime, grows: int, max_bytes: int
) -> None:
    """InvalidInput unless the tenant's values may grow by ``grows`` bytes (its expired
    items deleted first when they would not)."""
    if grows <= 0:
        return
    mine = _m.c.tenant_id == tenant_id
    total = sa.select(sa.func.coalesce(sa.func.sum(_m.c.size), 0)).where(mine)
    if int(conn.execute(total).scalar_one()) + grows <= max_bytes:
        return
    if conn.execute(sa.delete(_m).where(mine, _m.c.expires_at <= now)).rowcount:
        if int(conn.execute(total).scalar_one()) + grows <= max_bytes:
            return
    raise errors.InvalidInput(
        f"a tenant keeps at most {max_bytes} bytes of store values: delete some items before "
        "putting more",
        details={"field": "value", "limitBytes": max_bytes},
    )


def put(
    conn: Connection,
    tenant_id: str,
    namespace: Sequence[str],
    key: str,
    value: dict[str, Any],
    now: datetime,
    *,
    expires_at: datetime | None = None,
    max_items: int = MAX_ITEMS,
    max_bytes: int | None = None,
) -> None:
    """Store ``value`` under ``namespace`` and ``key``: a new item, or a new value of the
    item there (its ``created_at`` kept; an expired one is replaced as a new item).
    ``expires_at`` is the item's new expiry (None: never). InvalidInput when the item is new
    and the tenant has ``max_items`` already, or when the tenant's values would pass
    ``max_bytes`` (None: no quota); nothing is written then."""
    _hold_tenant(conn, tenant_id)
    mine = _mine(tenant_id, namespace, key)
    found = conn.execute(sa.select(_m.c.expires_at, _m.c.size).where(*mine)).first()
    size = len(value_json(value))
    if max_bytes is not None:
        _make_bytes(conn, tenant_id, now, size - (found.size if found else 0), max_bytes)
    values: dict[str, Any] = {
        "value": value,
        "updated_at": now,
        "expires_at": expires_at,
        "size": size,
    }
    if found is None:
        _make_room(conn, tenant_id, now, max_items)
        row = {"tenant_id": tenant_id, "namespace": _join(namespace), "key": key}
        conn.execute(_m.insert().values(**row, **values, created_at=now))
        return
    if found.expires_at is not None and found.expires_at <= now:
        values["created_at"] = now  # expired: absent, so this put makes a new item
    conn.execute(sa.update(_m).where(*mine).values(**values))


def get(
    conn: Connection, tenant_id: str, namespace: Sequence[str], key: str, now: datetime
) -> Item:
    """The item under ``namespace`` and ``key``; NotFound if there is none (or it expired)."""
    query = sa.select(_m).where(*_mine(tenant_id, namespace, key), _live(now))
    row = conn.execute(query).mappings().first()
    if row is None:
        raise errors.NotFound(
            f"no store item {key!r} in namespace {_join(namespace)!r}",
            details={"namespace": list(namespace), "key": key},
        )
    return _item(row)


def delete(conn: Connection, tenant_id: str, namespace: Sequence[str], key: str) -> bool:
    """Forget the item (expired or not); whether there was a row to forget."""
    gone = conn.execute(sa.delete(_m).where(*_mine(tenant_id, namespace, key)))
    return gone.rowcount > 0


def same(a: Any, b: Any) -> bool:
    """JSON equality: ``1`` is ``1.0`` but ``true`` is no number; objects by their fields."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def matches(value: dict[str, Any], filter: Mapping[str, Any], words: Sequence[str]) -> bool:
    """Whether each field of ``filter`` is in ``value`` with an equal value (:func:`same`),
    and each of ``words`` is in the value's compact JSON text, ignoring case."""
    if not all(k in value and same(value[k], v) for k, v in filter.items()):
        return False
    if not words:
        return True
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False).casefold()
    return all(word.casefold() in text for word in words)


_PLAIN_FIELD = re.compile(r"[A-Za-z0-9_]{1,64}")


def _narrowed(conn: Connection, filter: Mapping[str, Any] | None) -> list[sa.ColumnElement[bool]]:
    """The database's share of ``filter``: a condition per top-level field of a plain name
    and a scalar value, kept by every row :func:`matches` keeps (a few more, such as ``1``
    for ``true`` on SQLite, which Python then drops), so a search reads only candidates."""
    found: list[sa.ColumnElement[bool]] = []
    for field, wanted in (filter or {}).items():
        if not _PLAIN_FIELD.fullmatch(field) or not isinstance(wanted, str | int | float):
            continue
        if isinstance(wanted, float) and not math.isfinite(wanted):
            continue
        if conn.dialect.name == "postgresql":
            as_json = sa.cast(sa.literal(json.dumps(wanted)), postgresql.JSONB)
            found.append(_m.c.value[field] == as_json)
        else:
            found.append(sa.func.json_extract(_m.c.value, f"$.{field}") == wanted)
    return found


@growing
def search(
    conn: Connection,
    tenant_id: str,
    prefix: Sequence[str],
    now: datetime,
    *,
    filter: Mapping[str, Any] | None = None,
    words: Sequence[str] = (),
    limit: int,
    offset: int = 0,
) -> list[Item]:
    """The tenant's items at or below ``prefix`` that :func:`matches` ``filter`` and
    ``words``, most recently updated first (then by key and namespace), from ``offset``."""
    query = (
        sa.select(_m)
        .where(_m.c.tenant_id == tenant_id, _under(prefix), _live(now), *_narrowed(conn, filter))
        .order_by(_m.c.updated_at.desc(), _m.c.key, _m.c.namespace)
    )
    if not filter and not words:
        return [_item(r) for r in conn.execute(query.limit(limit).offset(offset)).mappings()]
    found: list[Item] = []
    skip = offset
    # a page of rows at a time, not a server-side cursor: reads on PostgreSQL run in
    # autocommit (decision 0028), where a cursor cannot be declared
    for start in itertools.count(0, _SCAN_BATCH):
        page = conn.execute(query.limit(_SCAN_BATCH).offset(start)).mappings().all()
        for row in page:
            if not matches(row["value"], filter or {}, words):
                continue
            if skip:
                skip -= 1
                continue
            found.append(_item(row))
            if len(found) == limit:
                return found
        if len(page) < _SCAN_BATCH:
            return found
    return found


@growing
def namespaces(
    conn: Connection,
    tenant_id: str,
    now: datetime,
    *,
    prefix: Sequence[str] = (),
    suffix: Sequence[str] = (),
    max_depth: int | None = None,
    limit: int,
    offset: int = 0,
) -> list[tuple[str, ...]]:
    """The namespaces the tenant has items in, at or below ``prefix`` and ending with
    ``suffix``, each cut to its first ``max_depth`` labels (then counted once), in label
    order, from ``offset``."""
    query = (
        sa.select(_m.c.namespace)
        .distinct()
        .where(_m.c.tenant_id == tenant_id, _under(prefix), _live(now))
    )
    ending = tuple(suffix)
    found: set[tuple[str, ...]] = set()
    for joined in conn.execute(query).scalars():
        labels = tuple(joined.split(SEPARATOR))
        if ending and labels[-len(ending) :] != ending:
            continue
        found.add(labels[:max_depth] if max_depth is not None else labels)
    return sorted(found)[offset : offset + limit]
