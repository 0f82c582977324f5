"""Workspace entities (documents, tasks, goals, plans, milestones, risks, requirements,
and the pages, products and tickets of the built-in connectors) and their edges.

An entity's ``data["slug"]``, when it is a string of at most ``SLUG_LENGTH`` characters,
is kept in the ``slug`` column too, so that a page is found by its address through an
index (``find_by_slug``) rather than by reading every page of the project.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection

from hansa import errors
from hansa.domain import workspace
from hansa.domain.base import new_id
from hansa.store import direct, tables
from hansa.store.db import growing

SLUG_LENGTH = 300
"""The longest slug the ``slug`` column keeps (a page's address is at most 120)."""

_ent = tables.workspace_entities
_edges = tables.workspace_edges
_B = sa.bindparam


def _in_project(in_project: bool) -> sa.ColumnElement[bool]:
    column = _ent.c.project_id
    return column == _B("p_project") if in_project else column.is_(None)


# Statements are built once and run through store.direct (decision 0007).
_INSERT = _ent.insert()
_MINE = (_ent.c.id == _B("p_id"), _ent.c.tenant_id == _B("p_tenant"))
_LIVE = _ent.c.deleted_at.is_(None)
_GET = {
    deleted: sa.select(_ent).where(*_MINE, *(() if deleted else (_LIVE,)))
    for deleted in (True, False)
}
_BY_KEY = sa.select(_ent).where(
    _ent.c.tenant_id == _B("p_tenant"), _ent.c.idempotency_key == _B("p_key")
)
_SIBLINGS = {
    top: sa.select(sa.func.count())
    .select_from(_ent)
    .where(
        _ent.c.tenant_id == _B("p_tenant"),
        _ent.c.parent_id.is_(None) if top else _ent.c.parent_id == _B("p_parent"),
        _ent.c.kind == _B("p_kind"),
    )
    for top in (True, False)
}
_UPDATE = (
    sa.update(_ent)
    .where(*_MINE)
    .values(
        data=_B("p_data", type_=_ent.c.data.type),
        slug=_B("p_slug", type_=_ent.c.slug.type),
        name=sa.func.coalesce(_B("p_name", type_=_ent.c.name.type), _ent.c.name),
        updated_at=_B("p_now"),
    )
)
_SET_DELETED = sa.update(_ent).where(*_MINE).values(deleted_at=_B("p_deleted_at"))
_PURGE_EDGES = sa.delete(_edges).where(
    sa.or_(_edges.c.from_id == _B("p_id"), _edges.c.to_id == _B("p_id"))
)
_PURGE = sa.delete(_ent).where(*_MINE)
_TREE_ORDER = (_ent.c.parent_id, _ent.c.position, _ent.c.created_at)
_OF_KIND = {  # by whether the entities belong to a project
    in_project: sa.select(_ent)
    .where(_ent.c.tenant_id == _B("p_tenant"), _ent.c.kind == _B("p_kind"), _LIVE)
    .where(_in_project(in_project))
    .order_by(*_TREE_ORDER)
    for in_project in (True, False)
}
_AT_SLUG = {
    in_project: statement.where(_ent.c.slug == _B("p_slug")).limit(1)
    for in_project, statement in _OF_KIND.items()
}
_EDGE = sa.select(_edges.c.id).where(
    _edges.c.from_id == _B("p_from"),
    _edges.c.to_id == _B("p_to"),
    _edges.c.relation == _B("p_relation"),
)
_INSERT_EDGE = _edges.insert()


def create(
    conn: Connection,
    tenant_id: str,
    project_id: str | None,
    kind: str,
    name: str,
    data: dict[str, Any],
    now: datetime,
    *,
    parent_id: str | None = None,
    idempotency_key: str | None = None,
) -> workspace.WorkspaceEntity:
    """Create an entity (or return the one made earlier with the same idempotency key)."""
    if idempotency_key is not None:
        found = direct.first(conn, _BY_KEY, {"p_tenant": tenant_id, "p_key": idempotency_key})
        if found is not None:
            return _entity(found)
    if parent_id is not None:
        get(conn, tenant_id, parent_id)
    siblings = {"p_tenant": tenant_id, "p_parent": parent_id, "p_kind": kind}
    position = direct.scalar(conn, _SIBLINGS[parent_id is None], siblings)
    row = {
        "id": new_id(),
        "tenant_id": tenant_id,
        "project_id": project_id,
        "kind": kind,
        "name": name,
        "parent_id": parent_id,
        "position": int(position or 0),
        "data": data,
        "idempotency_key": idempotency_key,
        "created_at": now,
        "updated_at": now,
        "deleted_at": None,
        "slug": _slug(data),
    }
    direct.execute(conn, _INSERT, row)
    return _entity(row)


def get(
    conn: Connection, tenant_id: str, entity_id: str, *, deleted: bool = False
) -> workspace.WorkspaceEntity:
    """An entity, or NotFound (deleted ones only when asked)."""
    row = direct.first(conn, _GET[deleted], {"p_id": entity_id, "p_tenant": tenant_id})
    if row is None:
        raise errors.NotFound(f"workspace entity {entity_id} not found")
    return _entity(row)


def update(
    conn: Connection, tenant_id: str, entity_id: str, patch: dict[str, Any], now: datetime
) -> workspace.WorkspaceEntity:
    """Merge ``patch`` into the entity (``name`` renames it); returns it."""
    current = get(conn, tenant_id, entity_id)
    data = {**current.data, **{k: v for k, v in patch.items() if k != "name"}}
    params = {
        "p_id": entity_id,
        "p_tenant": tenant_id,
        "p_data": data,
        "p_slug": _slug(data),
        "p_name": str(patch["name"]) if "name" in patch else None,
        "p_now": now,
    }
    direct.execute(conn, _UPDATE, params)
    return get(conn, tenant_id, entity_id)


def set_deleted(
    conn: Connection, tenant_id: str, entity_id: str, now: datetime | None
) -> workspace.WorkspaceEntity:
    """Delete (``now``) or restore (None) an entity; deletion is reversible."""
    get(conn, tenant_id, entity_id, deleted=True)
    params = {"p_id": entity_id, "p_tenant": tenant_id, "p_deleted_at": now}
    direct.execute(conn, _SET_DELETED, params)
    return get(conn, tenant_id, entity_id, deleted=True)


def purge(conn: Connection, tenant_id: str, entity_id: str) -> None:
    """Remove an entity for good (irreversible)."""
    get(conn, tenant_id, entity_id, deleted=True)
    direct.execute(conn, _PURGE_EDGES, {"p_id": entity_id})
    direct.execute(conn, _PURGE, {"p_id": entity_id, "p_tenant": tenant_id})


@growing
def list_kind(
    conn: Connection, tenant_id: str, project_id: str | None, kind: str
) -> list[workspace.WorkspaceEntity]:
    """Live entities of a kind in a project, in tree order."""
    params = {"p_tenant": tenant_id, "p_kind": kind, "p_project": project_id}
    return [_entity(r) for r in direct.rows(conn, _OF_KIND[project_id is not None], params)]


def find_by_slug(
    conn: Connection, tenant_id: str, project_id: str | None, kind: str, slug: str
) -> workspace.WorkspaceEntity | None:
    """The live entity of ``kind`` whose ``data["slug"]`` is ``slug`` (the first in tree
    order, should there be several)."""
    params = {"p_tenant": tenant_id, "p_kind": kind, "p_project": project_id, "p_slug": slug}
    row = direct.first(conn, _AT_SLUG[project_id is not None], params)
    return None if row is None else _entity(row)


def link(
    conn: Connection, tenant_id: str, from_id: str, to_id: str, relation: str, now: datetime
) -> workspace.WorkspaceEdge:
    """An explicit edge between two entities (idempotent)."""
    get(conn, tenant_id, from_id)
    get(conn, tenant_id, to_id)
    edge = {"p_from": from_id, "p_to": to_id, "p_relation": relation}
    found = direct.scalar(conn, _EDGE, edge)
    edge_id = found or new_id()
    if found is None:
        row = {
            "id": edge_id,
            "tenant_id": tenant_id,
            "from_id": from_id,
            "to_id": to_id,
            "relation": relation,
            "created_at": now,
        }
        direct.execute(conn, _INSERT_EDGE, row)
    return workspace.WorkspaceEdge(id=edge_id, from_id=from_id, to_id=to_id, relation=relation)


@growing
def search(
    conn: Connection,
    tenant_id: str,
    project_id: str | None,
    text: str,
    kinds: Sequence[str],
    limit: int,
) -> list[workspace.WorkspaceEntity]:
    """Live entities of the project whose name or fields contain ``text`` (ignoring case),
    of ``kinds`` (any kind when empty): those whose name holds it first, then by name;
    at most ``limit``."""
    wanted = text.casefold()
    in_name = sa.func.lower(_ent.c.name).contains(wanted, autoescape=True)
    in_data = sa.func.lower(sa.cast(_ent.c.data, sa.Text)).contains(wanted, autoescape=True)
    statement = (
        sa.select(_ent)
        .where(_ent.c.tenant_id == tenant_id, _LIVE, _project_is(project_id))
        .where(sa.or_(in_name, in_data))
        .order_by(sa.case((in_name, 0), else_=1), sa.func.lower(_ent.c.name), _ent.c.id)
        .limit(limit)
    )
    if kinds:
        statement = statement.where(_ent.c.kind.in_(list(kinds)))
    return [_entity(dict(r._mapping)) for r in conn.execute(statement)]


@growing
def list_some(
    conn: Connection, tenant_id: str, project_id: str | None, kind: str, limit: int
) -> tuple[list[workspace.WorkspaceEntity], int]:
    """At most ``limit`` live entities of a kind in a project, in tree order, and how many
    there are in all."""
    where = (_ent.c.tenant_id == tenant_id, _ent.c.kind == kind, _LIVE, _project_is(project_id))
    total = conn.execute(sa.select(sa.func.count()).select_from(_ent).where(*where)).scalar()
    rows = conn.execute(sa.select(_ent).where(*where).order_by(*_TREE_ORDER).limit(limit))
    return [_entity(dict(r._mapping)) for r in rows], int(total or 0)


def get_many(
    conn: Connection, tenant_id: str, entity_ids: Sequence[str]
) -> list[workspace.WorkspaceEntity]:
    """The live entities of these ids, in the order asked (unknown ids are left out)."""
    if not entity_ids:
        return []
    statement = sa.select(_ent).where(
        _ent.c.tenant_id == tenant_id, _LIVE, _ent.c.id.in_(list(entity_ids))
    )
    found = {e.id: e for e in (_entity(dict(r._mapping)) for r in conn.execute(statement))}
    return [found[i] for i in dict.fromkeys(entity_ids) if i in found]


def edges_of(conn: Connection, tenant_id: str, entity_id: str) -> list[workspace.WorkspaceEdge]:
    """The edges from and to an entity, oldest first."""
    statement = (
        sa.select(_edges)
        .where(
            _edges.c.tenant_id == tenant_id,
            sa.or_(_edges.c.from_id == entity_id, _edges.c.to_id == entity_id),
        )
        .order_by(_edges.c.created_at, _edges.c.id)
    )
    return [
        workspace.WorkspaceEdge(id=r.id, from_id=r.from_id, to_id=r.to_id, relation=r.relation)
        for r in conn.execute(statement)
    ]


def _project_is(project_id: str | None) -> sa.ColumnElement[bool]:
    column = _ent.c.project_id
    return column == project_id if project_id is not None else column.is_(None)


def _slug(data: dict[str, Any]) -> str | None:
    slug = data.get("slug")
    return slug if isinstance(slug, str) and len(slug) <= SLUG_LENGTH else None


def _entity(row: direct.Row) -> workspace.WorkspaceEntity:
    return workspace.WorkspaceEntity.model_validate(row)
