"""Workspace entities in the store: domain models out, a page found by its slug in SQL."""

from __future__ import annotations

from datetime import timedelta

import pytest

from hansa import errors
from hansa.domain.base import utcnow
from hansa.domain.workspace import WorkspaceEdge, WorkspaceEntity
from hansa.store import workspace
from hansa.store.db import DEFAULT_TENANT_ID as T
from hansa.store.db import Database


def _page(
    db: Database, slug: object, *, project: str | None = "p1", key: str | None = None
) -> WorkspaceEntity:
    data = {"slug": slug, "html": "<p>hi</p>", "status": "draft"}
    return db.write_now(
        lambda conn: workspace.create(
            conn, T, project, "page", "A page", data, utcnow(), idempotency_key=key
        )
    )


def test_an_entity_is_a_domain_model_created_once_per_key(db: Database) -> None:
    first = _page(db, "pricing", key="task-1")
    again = _page(db, "pricing", key="task-1")
    assert isinstance(first, WorkspaceEntity) and again.id == first.id
    stored = db.write_now(lambda conn: workspace.get(conn, T, first.id))
    assert stored.model_dump(exclude={"created_at", "updated_at"}) == first.model_dump(
        exclude={"created_at", "updated_at"}
    )
    assert stored.created_at == first.created_at and not stored.deleted


def test_a_page_is_found_by_its_slug_in_its_project_only_while_live(db: Database) -> None:
    page = _page(db, "pricing")
    _page(db, "pricing", project=None)  # the same address outside the project
    _page(db, "about")

    def find(slug: str, project: str | None = "p1", kind: str = "page") -> WorkspaceEntity | None:
        return db.write_now(lambda conn: workspace.find_by_slug(conn, T, project, kind, slug))

    assert (found := find("pricing")) is not None and found.id == page.id
    assert (outside := find("pricing", None)) is not None and outside.project_id is None
    assert find("careers") is None
    assert find("pricing", kind="product") is None
    db.write_now(lambda conn: workspace.set_deleted(conn, T, page.id, utcnow()))
    assert find("pricing") is None, "a deleted page is not found"
    db.write_now(lambda conn: workspace.set_deleted(conn, T, page.id, None))
    assert (restored := find("pricing")) is not None and not restored.deleted


def test_a_new_slug_moves_the_lookup_and_odd_slugs_are_not_kept(db: Database) -> None:
    page = _page(db, "old-address")
    later = utcnow() + timedelta(seconds=1)
    moved = db.write_now(
        lambda conn: workspace.update(
            conn, T, page.id, {"slug": "new-address", "name": "New"}, later
        )
    )
    assert moved.name == "New" and moved.data["slug"] == "new-address" and moved.updated_at == later

    def find(slug: str) -> WorkspaceEntity | None:
        return db.write_now(lambda conn: workspace.find_by_slug(conn, T, "p1", "page", slug))

    assert find("old-address") is None and find("new-address") is not None
    numbered = _page(db, 42)  # data may hold anything; only a string is an address
    assert numbered.data["slug"] == 42 and find("42") is None
    long = _page(db, "x" * (workspace.SLUG_LENGTH + 1))
    assert long.data["slug"] == "x" * (workspace.SLUG_LENGTH + 1)


def test_list_kind_purge_and_edges(db: Database) -> None:
    a, b = _page(db, "a"), _page(db, "b")
    pages = db.write_now(lambda conn: workspace.list_kind(conn, T, "p1", "page"))
    assert [p.id for p in pages] == [a.id, b.id] and [p.position for p in pages] == [0, 1]
    edge = db.write_now(lambda conn: workspace.link(conn, T, a.id, b.id, "links_to", utcnow()))
    assert isinstance(edge, WorkspaceEdge) and (edge.from_id, edge.to_id) == (a.id, b.id)
    again = db.write_now(lambda conn: workspace.link(conn, T, a.id, b.id, "links_to", utcnow()))
    assert again.id == edge.id
    db.write_now(lambda conn: workspace.purge(conn, T, b.id))
    with pytest.raises(errors.NotFound):
        db.write_now(lambda conn: workspace.get(conn, T, b.id, deleted=True))
    assert db.write_now(lambda conn: workspace.list_kind(conn, T, None, "page")) == []


def _entity(db: Database, kind: str, name: str, data: dict[str, object] | None = None) -> str:
    made = db.write_now(
        lambda conn: workspace.create(conn, T, "p1", kind, name, data or {}, utcnow())
    )
    return made.id


def test_search_finds_names_first_then_fields_within_the_project_and_kinds(db: Database) -> None:
    book = _entity(db, "document", "Brand book")
    notes = _entity(db, "document", "Notes", {"description": "about the brand colours"})
    goal = _entity(db, "goal", "Consistent BRAND")
    _entity(db, "document", "Pricing")
    db.write_now(  # outside the project
        lambda conn: workspace.create(conn, T, None, "document", "Brand", {}, utcnow())
    )

    def search(text: str, kinds: tuple[str, ...] = (), limit: int = 10) -> list[str]:
        found = db.write_now(lambda conn: workspace.search(conn, T, "p1", text, kinds, limit))
        return [e.id for e in found]

    assert search("brand") == [book, goal, notes]
    assert search("brand", ("document",)) == [book, notes]
    assert search("brand", limit=1) == [book]
    assert search("100%") == [], "LIKE's wildcards are escaped"
    assert db.write_now(lambda conn: workspace.search(conn, "other", "p1", "brand", (), 10)) == []


def test_a_list_is_capped_and_counts_them_all_and_get_many_keeps_the_order(db: Database) -> None:
    ids = [_entity(db, "task", f"Task {i}") for i in range(3)]
    deleted = _entity(db, "task", "Gone")
    db.write_now(lambda conn: workspace.set_deleted(conn, T, deleted, utcnow()))

    some, total = db.write_now(lambda conn: workspace.list_some(conn, T, "p1", "task", 2))
    many = db.write_now(lambda conn: workspace.get_many(conn, T, [ids[2], "nope", ids[0], deleted]))

    assert ([e.id for e in some], total) == (ids[:2], 3)
    assert [e.id for e in many] == [ids[2], ids[0]]


def test_edges_of_an_entity_go_both_ways(db: Database) -> None:
    doc, goal, other = (_entity(db, "document", n) for n in ("Doc", "Goal", "Other"))
    now = utcnow()
    db.write_now(lambda conn: workspace.link(conn, T, doc, goal, "supports", now))
    db.write_now(lambda conn: workspace.link(conn, T, other, doc, "cites", now))

    edges = db.write_now(lambda conn: workspace.edges_of(conn, T, doc))

    assert {(e.from_id, e.to_id, e.relation) for e in edges} == {
        (doc, goal, "supports"),
        (other, doc, "cites"),
    }
    assert db.write_now(lambda conn: workspace.edges_of(conn, "other", doc)) == []
