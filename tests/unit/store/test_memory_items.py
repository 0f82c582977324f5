"""The Agent Protocol's store on SQLite and PostgreSQL: upsert, expiry on an injected clock,
prefix search by whole labels, filter and words, namespaces, the tenant's limit."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta
from typing import Any, TypeVar

import pytest
import sqlalchemy as sa

from hansa import errors
from hansa.domain.base import utcnow
from hansa.store import memory_items as items
from hansa.store import tables, tenants
from hansa.store.db import DEFAULT_TENANT_ID, Database

T = DEFAULT_TENANT_ID
OTHER = "other-tenant"
R = TypeVar("R")


class Clock:
    def __init__(self) -> None:
        self.now = utcnow().replace(microsecond=0)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> datetime:
        self.now += timedelta(**delta)
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


def _run(db: Database, fn: Callable[[sa.Connection], R]) -> R:
    return db.write_now(fn)


def put(
    db: Database,
    clock: Clock,
    namespace: tuple[str, ...],
    key: str,
    value: dict[str, Any],
    *,
    tenant: str = T,
    ttl_minutes: float | None = None,
    max_items: int = items.MAX_ITEMS,
) -> None:
    now = clock()
    expires = None if ttl_minutes is None else now + timedelta(minutes=ttl_minutes)
    _run(
        db,
        lambda c: items.put(
            c, tenant, namespace, key, value, now, expires_at=expires, max_items=max_items
        ),
    )


def get(db: Database, clock: Clock, namespace: tuple[str, ...], key: str, tenant: str = T) -> Any:
    return _run(db, lambda c: items.get(c, tenant, namespace, key, clock()))


def search(db: Database, clock: Clock, prefix: tuple[str, ...], **kw: Any) -> list[str]:
    kw.setdefault("limit", 100)
    found = _run(db, lambda c: items.search(c, T, prefix, clock(), **kw))
    return [".".join(i.namespace) + "/" + i.key for i in found]


def namespaces(db: Database, clock: Clock, **kw: Any) -> list[tuple[str, ...]]:
    kw.setdefault("limit", 100)
    return _run(db, lambda c: items.namespaces(c, T, clock(), **kw))


def rows(db: Database) -> int:
    query = sa.select(sa.func.count()).select_from(tables.memory_items)
    return int(_run(db, lambda c: c.execute(query).scalar_one()))


def test_a_put_is_an_upsert_that_keeps_created_at(db: Database, clock: Clock) -> None:
    put(db, clock, ("users", "ada"), "prefs", {"theme": "dark"})
    first = get(db, clock, ("users", "ada"), "prefs")
    clock.advance(seconds=5)
    put(db, clock, ("users", "ada"), "prefs", {"theme": "light", "lang": "fr"})
    second = get(db, clock, ("users", "ada"), "prefs")

    assert first.namespace == ("users", "ada") and first.key == "prefs"
    assert first.value == {"theme": "dark"} and first.created_at == first.updated_at
    assert second.value == {"theme": "light", "lang": "fr"}
    assert second.created_at == first.created_at
    assert second.updated_at == first.updated_at + timedelta(seconds=5)
    assert rows(db) == 1


def test_absent_items_and_other_tenants_items_are_not_found(db: Database, clock: Clock) -> None:
    _run(db, lambda c: tenants.ensure(c, OTHER, clock()))
    put(db, clock, ("shared",), "k", {"secret": 1}, tenant=OTHER)

    with pytest.raises(errors.NotFound, match="no store item 'k' in namespace 'shared'"):
        get(db, clock, ("shared",), "k")
    assert search(db, clock, ()) == []
    assert namespaces(db, clock) == []
    assert _run(db, lambda c: items.delete(c, T, ("shared",), "k")) is False
    assert get(db, clock, ("shared",), "k", tenant=OTHER).value == {"secret": 1}


def test_delete_forgets_the_item(db: Database, clock: Clock) -> None:
    put(db, clock, ("a",), "k", {"x": 1})

    assert _run(db, lambda c: items.delete(c, T, ("a",), "k")) is True
    assert _run(db, lambda c: items.delete(c, T, ("a",), "k")) is False
    with pytest.raises(errors.NotFound):
        get(db, clock, ("a",), "k")


def test_an_expired_item_is_absent_to_every_read(db: Database, clock: Clock) -> None:
    put(db, clock, ("notes", "ada"), "brief", {"text": "short lived"}, ttl_minutes=1)
    put(db, clock, ("notes", "ada"), "kept", {"text": "forever"})
    clock.advance(seconds=59)
    alive = get(db, clock, ("notes", "ada"), "brief")
    clock.advance(seconds=1)

    assert alive.expires_at == alive.created_at + timedelta(minutes=1)
    with pytest.raises(errors.NotFound):
        get(db, clock, ("notes", "ada"), "brief")
    assert search(db, clock, ("notes",)) == ["notes.ada/kept"]
    assert search(db, clock, ("notes",), words=["short"]) == []
    put(db, clock, ("gone",), "k", {}, ttl_minutes=1)
    clock.advance(minutes=2)
    assert namespaces(db, clock) == [("notes", "ada")]
    assert rows(db) == 3, "no sweeper: expired rows stay until replaced or crowded out"


def test_a_put_after_expiry_is_a_new_item_and_a_put_without_ttl_never_expires(
    db: Database, clock: Clock
) -> None:
    put(db, clock, ("n",), "k", {"v": 1}, ttl_minutes=1)
    clock.advance(minutes=5)
    put(db, clock, ("n",), "k", {"v": 2}, ttl_minutes=1)
    renewed = get(db, clock, ("n",), "k")
    put(db, clock, ("n",), "k", {"v": 3})
    clock.advance(days=365)
    kept = get(db, clock, ("n",), "k")

    assert renewed.value == {"v": 2} and renewed.created_at == renewed.updated_at
    assert kept.value == {"v": 3} and kept.expires_at is None


def test_a_prefix_matches_whole_labels(db: Database, clock: Clock) -> None:
    for namespace in (("a",), ("a", "b"), ("a", "b", "c"), ("a", "bc"), ("a", "b-c"),
                      ("a", "b/c"), ("ab",), ("é", "ü")):  # fmt: skip
        put(db, clock, namespace, "k", {})

    assert sorted(search(db, clock, ("a", "b"))) == ["a.b.c/k", "a.b/k"]
    assert sorted(search(db, clock, ("a",))) == sorted(
        ["a/k", "a.b/k", "a.b.c/k", "a.bc/k", "a.b-c/k", "a.b/c/k"]
    )
    assert search(db, clock, ("é",)) == ["é.ü/k"]
    assert len(search(db, clock, ())) == 8


def test_search_is_newest_first_then_by_key_and_pages(db: Database, clock: Clock) -> None:
    put(db, clock, ("p",), "b", {})
    put(db, clock, ("p",), "a", {})
    clock.advance(seconds=1)
    put(db, clock, ("p",), "c", {})
    clock.advance(seconds=1)
    put(db, clock, ("p",), "b", {"touched": True})

    assert search(db, clock, ("p",)) == ["p/b", "p/c", "p/a"]
    assert search(db, clock, ("p",), limit=2, offset=1) == ["p/c", "p/a"]
    assert search(db, clock, ("p",), filter={"touched": True}, offset=1) == []


def test_filter_is_json_equality_of_top_level_fields(db: Database, clock: Clock) -> None:
    put(db, clock, ("f",), "one", {"n": 1, "flag": True, "tags": ["x"], "who": {"id": 7}})
    put(db, clock, ("f",), "float", {"n": 1.0, "flag": 1, "tags": ["x", "y"]})
    put(db, clock, ("f",), "null", {"n": None})

    def keys(**filter: Any) -> list[str]:
        return sorted(search(db, clock, ("f",), filter=filter))

    assert keys(n=1) == ["f/float", "f/one"]
    assert keys(flag=True) == ["f/one"], "true is not the number 1"
    assert keys(flag=1) == ["f/float"]
    assert keys(tags=["x"]) == ["f/one"], "lists whole, not containment"
    assert keys(who={"id": 7}) == ["f/one"]
    assert keys(n=None) == ["f/null"]
    assert keys(missing=None) == []
    assert keys(n=1, flag=1) == ["f/float"]


def test_query_words_are_case_insensitive_substrings_of_the_json_text(
    db: Database, clock: Clock
) -> None:
    put(db, clock, ("q",), "cafe", {"title": "Le Café Noir", "stars": 5})
    put(db, clock, ("q",), "tea", {"title": "Green tea", "note": "no café here"})
    put(db, clock, ("q",), "plain", {"body": "water"})

    def keys(*words: str, **kw: Any) -> list[str]:
        return sorted(search(db, clock, ("q",), words=list(words), **kw))

    assert keys("CAFÉ") == ["q/cafe", "q/tea"]
    assert keys("café", "noir") == ["q/cafe"]
    assert keys("title") == ["q/cafe", "q/tea"], "field names are in the JSON text too"
    assert keys('"stars":5') == ["q/cafe"], "compact JSON"
    assert keys("café", filter={"stars": 5}) == ["q/cafe"]
    assert keys("coffee") == []
    assert search(db, clock, ("q",), words=["café"], limit=1) == ["q/cafe"], "same time: by key"
    assert search(db, clock, ("q",), words=["café"], limit=1, offset=1) == ["q/tea"]


def test_namespaces_by_prefix_suffix_and_depth(db: Database, clock: Clock) -> None:
    for namespace in (("users", "ada", "notes"), ("users", "ada", "prefs"),
                      ("users", "bob", "notes"), ("teams", "core"), ("users",)):  # fmt: skip
        put(db, clock, namespace, "k", {})
    put(db, clock, ("users", "ada", "notes"), "k2", {})

    assert namespaces(db, clock) == [
        ("teams", "core"),
        ("users",),
        ("users", "ada", "notes"),
        ("users", "ada", "prefs"),
        ("users", "bob", "notes"),
    ]
    assert namespaces(db, clock, prefix=("users", "ada")) == [
        ("users", "ada", "notes"),
        ("users", "ada", "prefs"),
    ]
    assert namespaces(db, clock, suffix=("notes",)) == [
        ("users", "ada", "notes"),
        ("users", "bob", "notes"),
    ]
    assert namespaces(db, clock, prefix=("users",), max_depth=2) == [
        ("users",),
        ("users", "ada"),
        ("users", "bob"),
    ]
    assert namespaces(db, clock, max_depth=1, limit=1, offset=1) == [("users",)]


def test_a_tenant_at_its_limit_may_update_but_not_add(db: Database, clock: Clock) -> None:
    for key in ("a", "b", "c"):
        put(db, clock, ("l",), key, {}, max_items=3)

    with pytest.raises(errors.InvalidInput, match="at most 3 store items") as refused:
        put(db, clock, ("l",), "d", {}, max_items=3)
    put(db, clock, ("l",), "a", {"changed": True}, max_items=3)

    assert refused.value.details == {"field": "key", "limit": 3}
    assert rows(db) == 3
    assert get(db, clock, ("l",), "a").value == {"changed": True}


def test_expired_items_make_room_at_the_limit(db: Database, clock: Clock) -> None:
    put(db, clock, ("l",), "a", {}, max_items=2, ttl_minutes=1)
    put(db, clock, ("l",), "b", {}, max_items=2)
    clock.advance(minutes=2)
    put(db, clock, ("l",), "c", {}, max_items=2)

    assert rows(db) == 2, "the expired item was deleted to make room"
    assert search(db, clock, ("l",)) == ["l/c", "l/b"]


def test_concurrent_puts_on_postgresql_never_pass_the_limit(pg_db: Database, clock: Clock) -> None:
    def attempt(key: str) -> bool:
        try:
            put(pg_db, clock, ("race",), key, {}, max_items=5)
        except errors.InvalidInput:
            return False
        return True

    with ThreadPoolExecutor(8) as pool:
        stored = list(pool.map(attempt, [f"k{i}" for i in range(12)]))

    assert stored.count(True) == 5 and rows(pg_db) == 5


def test_a_label_holding_the_separator_is_refused(db: Database, clock: Clock) -> None:
    with pytest.raises(errors.InvalidInput, match="may not contain '.'"):
        put(db, clock, ("a.b",), "k", {})
    assert rows(db) == 0


@pytest.mark.parametrize(
    ("a", "b", "equal"),
    [
        (1, 1.0, True),
        (True, 1, False),
        (False, 0, False),
        ("1", 1, False),
        (None, None, True),
        ({"a": [1, {"b": True}]}, {"a": [1.0, {"b": True}]}, True),
        ({"a": 1}, {"a": 1, "b": 2}, False),
        ([1, 2], [2, 1], False),
    ],
)
def test_same_is_json_equality(a: Any, b: Any, equal: bool) -> None:
    assert items.same(a, b) is equal
    assert items.same(b, a) is equal
