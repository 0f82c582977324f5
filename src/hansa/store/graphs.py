"""Prompt graphs of a tenant: every version kept as it was saved; a change adds a version."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection

from hansa import errors
from hansa.domain.graph import Graph, GraphSpec
from hansa.store import direct, tables
from hansa.store.db import growing

_g = tables.graphs
_newer = _g.alias("newer")
_B = sa.bindparam

# Statements are built once and run through store.direct (decision 0007).
_INSERT = _g.insert()
_MINE = (_g.c.tenant_id == _B("p_tenant"), _g.c.id == _B("p_id"))
_LATEST = sa.select(_g).where(*_MINE).order_by(_g.c.version.desc()).limit(1)
_VERSION = sa.select(_g).where(*_MINE, _g.c.version == _B("p_version"))
# Versions of one graph are added one at a time: each writer first locks the graph's first
# version (always there, never changed), then reads the newest (PostgreSQL; SQLite has one
# writer at a time anyway).
_FIRST_LOCKED = sa.select(_g.c.version).where(*_MINE, _g.c.version == 1).with_for_update()
_NEWEST_OF_EACH = (
    sa.select(_g)
    .where(
        _g.c.tenant_id == _B("p_tenant"),
        ~sa.exists().where(
            _newer.c.tenant_id == _g.c.tenant_id,
            _newer.c.id == _g.c.id,
            _newer.c.version > _g.c.version,
        ),
    )
    .order_by(_g.c.id)
)


def _row(graph: Graph) -> dict[str, Any]:
    data = graph.model_dump(mode="json", by_alias=True, include={"components", "edges"})
    return {
        "tenant_id": graph.tenant_id,
        "id": graph.id,
        "version": graph.version,
        "name": graph.name,
        "components": data["components"],
        "edges": data["edges"],
        "created_at": graph.created_at,
        "created_by": graph.created_by,
    }


def _graph(row: Any) -> Graph:
    return Graph.model_validate(dict(row))


def create(conn: Connection, graph: Graph) -> None:
    """Insert a graph's version (the first, for a new graph)."""
    direct.execute(conn, _INSERT, _row(graph))


def get(conn: Connection, tenant_id: str, graph_id: str, version: int | None = None) -> Graph:
    """The graph's newest version, or ``version``; NotFound for an unknown id or version
    (also for another tenant's id)."""
    params: dict[str, Any] = {"p_tenant": tenant_id, "p_id": graph_id}
    if version is None:
        row = direct.first(conn, _LATEST, params)
    else:
        row = direct.first(conn, _VERSION, {**params, "p_version": version})
    if row is None:
        which = f"graph {graph_id}" + ("" if version is None else f" version {version}")
        raise errors.NotFound(f"{which} not found")
    return _graph(row)


def add_version(
    conn: Connection, tenant_id: str, graph_id: str, spec: GraphSpec, now: datetime, by: str
) -> Graph:
    """Store ``spec`` as the graph's next version, or NotFound."""
    if direct.first(conn, _FIRST_LOCKED, {"p_tenant": tenant_id, "p_id": graph_id}) is None:
        raise errors.NotFound(f"graph {graph_id} not found")
    newest = get(conn, tenant_id, graph_id)
    graph = Graph(
        name=spec.name,
        components=spec.components,
        edges=spec.edges,
        id=graph_id,
        tenant_id=tenant_id,
        version=newest.version + 1,
        created_at=now,
        created_by=by,
    )
    create(conn, graph)
    return graph


@growing
def list_newest(conn: Connection, tenant_id: str) -> list[Graph]:
    """The newest version of each of the tenant's graphs, oldest graph first."""
    return [_graph(r) for r in direct.rows(conn, _NEWEST_OF_EACH, {"p_tenant": tenant_id})]
