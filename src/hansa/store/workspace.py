"""Workspace entities (documents, tasks, goals, plans, milestones, risks, requirements,
and the pages, products and tickets of the built-in connectors) and their edges."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection

from hansa import errors
from hansa.domain.base import new_id
from hansa.store import tables

_ent = tables.workspace_entities
_edges = tables.workspace_edges


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
) -> dict[str, Any]:
    """Create an entity (or return the one made earlier with the same idempotency key)."""
    if idempotency_key is not None:
        found = (
            conn.execute(
                sa.select(_ent).where(
                    _ent.c.tenant_id == tenant_id, _ent.c.idempotency_key == idempotency_key
                )
            )
            .mappings()
            .first()
        )
        if found is not None:
            return _entity(found)
    if parent_id is not None:
        get(conn, tenant_id, parent_id)
    position = conn.scalar(
        sa.select(sa.func.count())
        .select_from(_ent)
        .where(
            _ent.c.tenant_id == tenant_id,
            _ent.c.parent_id.is_(parent_id) if parent_id is None else _ent.c.parent_id == parent_id,
            _ent.c.kind == kind,
        )
    )
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
    }
    conn.execute(_ent.insert(), row)
    return _entity(row)


def get(
    conn: Connection, tenant_id: str, entity_id: str, *, deleted: bool = False
) -> dict[str, Any]:
    """An entity, or NotFound (deleted ones only when asked)."""
    query = sa.select(_ent).where(_ent.c.id == entity_id, _ent.c.tenant_id == tenant_id)
    if not deleted:
        query = query.where(_ent.c.deleted_at.is_(None))
    row = conn.execute(query).mappings().first()
    if row is None:
        raise errors.NotFound(f"workspace entity {entity_id} not found")
    return _entity(row)


def update(
    conn: Connection, tenant_id: str, entity_id: str, patch: dict[str, Any], now: datetime
) -> dict[str, Any]:
    """Merge ``patch`` into the entity (``name`` renames it); returns it."""
    current = get(conn, tenant_id, entity_id)
    data = {**current["data"], **{k: v for k, v in patch.items() if k != "name"}}
    values: dict[str, Any] = {"data": data, "updated_at": now}
    if "name" in patch:
        values["name"] = str(patch["name"])
    conn.execute(sa.update(_ent).where(_ent.c.id == entity_id).values(**values))
    return get(conn, tenant_id, entity_id)


def set_deleted(
    conn: Connection, tenant_id: str, entity_id: str, now: datetime | None
) -> dict[str, Any]:
    """Delete (``now``) or restore (None) an entity; deletion is reversible."""
    get(conn, tenant_id, entity_id, deleted=True)
    conn.execute(sa.update(_ent).where(_ent.c.id == entity_id).values(deleted_at=now))
    return get(conn, tenant_id, entity_id, deleted=True)


def purge(conn: Connection, tenant_id: str, entity_id: str) -> None:
    """Remove an entity for good (irreversible)."""
    get(conn, tenant_id, entity_id, deleted=True)
    conn.execute(
        sa.delete(_edges).where(sa.or_(_edges.c.from_id == entity_id, _edges.c.to_id == entity_id))
    )
    conn.execute(sa.delete(_ent).where(_ent.c.id == entity_id))


def list_kind(
    conn: Connection, tenant_id: str, project_id: str | None, kind: str
) -> list[dict[str, Any]]:
    """Live entities of a kind in a project, in tree order."""
    rows = conn.execute(
        sa.select(_ent)
        .where(_ent.c.tenant_id == tenant_id, _ent.c.kind == kind, _ent.c.deleted_at.is_(None))
        .where(
            _ent.c.project_id.is_(None) if project_id is None else _ent.c.project_id == project_id
        )
        .order_by(_ent.c.parent_id, _ent.c.position, _ent.c.created_at)
    ).mappings()
    return [_entity(r) for r in rows]


def find_by(
    conn: Connection, tenant_id: str, project_id: str | None, kind: str, field: str, value: str
) -> dict[str, Any] | None:
    """The live entity of ``kind`` whose ``data[field]`` equals ``value``."""
    for entity in list_kind(conn, tenant_id, project_id, kind):
        if entity["data"].get(field) == value:
            return entity
    return None


def link(
    conn: Connection, tenant_id: str, from_id: str, to_id: str, relation: str, now: datetime
) -> dict[str, Any]:
    """An explicit edge between two entities (idempotent)."""
    get(conn, tenant_id, from_id)
    get(conn, tenant_id, to_id)
    found = conn.execute(
        sa.select(_edges.c.id).where(
            _edges.c.from_id == from_id, _edges.c.to_id == to_id, _edges.c.relation == relation
        )
    ).scalar()
    edge_id = found or new_id()
    if found is None:
        edge = {
            "id": edge_id,
            "tenant_id": tenant_id,
            "from_id": from_id,
            "to_id": to_id,
            "relation": relation,
            "created_at": now,
        }
        conn.execute(_edges.insert(), edge)
    return {"edgeId": edge_id, "fromId": from_id, "toId": to_id, "relation": relation}


def _entity(row: Any) -> dict[str, Any]:
    return {
        "id": row["id"],
        "projectId": row["project_id"],
        "kind": row["kind"],
        "name": row["name"],
        "parentId": row["parent_id"],
        "position": row["position"],
        "data": row["data"],
        "createdAt": row["created_at"].isoformat(),
        "updatedAt": row["updated_at"].isoformat(),
        "deleted": row["deleted_at"] is not None,
        "idempotencyKey": row["idempotency_key"],
    }
