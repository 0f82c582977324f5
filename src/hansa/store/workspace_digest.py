"""The reads behind the context packs' project summaries (``domain.context_digest``).

Each reads columns, never a document's fields: a document's size is measured by the
database (``length`` of its JSON as text), so a project of large documents costs the same
to outline as one of small ones. The engine caches the results (``engine.context_cache``).
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy import Connection

from hansa.domain.context_digest import (
    DocumentOutline,
    EntityChange,
    ProjectBrief,
    ProjectDigest,
    TenantOverview,
)
from hansa.store import tables
from hansa.store.db import growing

_ent = tables.workspace_entities
_proj = tables.projects
_LIVE = _ent.c.deleted_at.is_(None)


def _of_project(tenant_id: str, project_id: str) -> tuple[sa.ColumnElement[bool], ...]:
    return (_ent.c.tenant_id == tenant_id, _ent.c.project_id == project_id, _LIVE)


@growing
def project_digest(
    conn: Connection, tenant_id: str, project_id: str, *, recent: int
) -> ProjectDigest:
    """A project's document outline (tree order), its live entities by kind and its
    ``recent`` latest changes, newest first."""
    mine = _of_project(tenant_id, project_id)
    chars = sa.func.length(sa.cast(_ent.c.data, sa.Text))
    outline = conn.execute(
        sa.select(
            _ent.c.id, _ent.c.name, _ent.c.parent_id, _ent.c.position, _ent.c.created_at, chars
        )
        .where(*mine, _ent.c.kind == "document")
        .order_by(_ent.c.parent_id, _ent.c.position, _ent.c.created_at)
    )
    documents = tuple(
        DocumentOutline(
            id=r[0], name=r[1], parent_id=r[2], position=r[3], created_at=r[4], chars=r[5] or 0
        )
        for r in outline
    )
    counts = _counts(conn, sa.and_(*mine))
    latest = conn.execute(
        sa.select(_ent.c.id, _ent.c.kind, _ent.c.name, _ent.c.created_at, _ent.c.updated_at)
        .where(*mine)
        .order_by(_ent.c.updated_at.desc(), _ent.c.id.desc())
        .limit(recent)
    )
    changes = tuple(
        EntityChange(id=r[0], kind=r[1], name=r[2], created_at=r[3], updated_at=r[4])
        for r in latest
    )
    return ProjectDigest(documents=documents, counts=counts.get(project_id, {}), recent=changes)


@growing
def tenant_overview(
    conn: Connection, tenant_id: str, *, projects: int, top_documents: int
) -> TenantOverview:
    """The tenant's ``projects`` newest projects, each with its live entities by kind and
    the titles of its first ``top_documents`` top-level documents; and how many it has."""
    total = conn.execute(
        sa.select(sa.func.count()).select_from(_proj).where(_proj.c.tenant_id == tenant_id)
    ).scalar()
    rows = conn.execute(
        sa.select(_proj.c.id, _proj.c.name, _proj.c.domain)
        .where(_proj.c.tenant_id == tenant_id)
        .order_by(_proj.c.created_at.desc(), _proj.c.id.desc())
        .limit(projects)
    ).all()
    ids = [r[0] for r in rows]
    if not ids:
        return TenantOverview(projects=(), total=int(total or 0))
    in_them = sa.and_(_ent.c.tenant_id == tenant_id, _ent.c.project_id.in_(ids), _LIVE)
    counts = _counts(conn, in_them)
    tops: dict[str, list[str]] = {}
    top_rows = conn.execute(
        sa.select(_ent.c.project_id, _ent.c.name)
        .where(in_them, _ent.c.kind == "document", _ent.c.parent_id.is_(None))
        .order_by(_ent.c.project_id, _ent.c.position, _ent.c.created_at)
    )
    for project_id, name in top_rows:
        titles = tops.setdefault(project_id, [])
        if len(titles) < top_documents:
            titles.append(name)
    briefs = tuple(
        ProjectBrief(
            id=r[0],
            name=r[1],
            domain=r[2],
            counts=counts.get(r[0], {}),
            top_documents=tuple(tops.get(r[0], ())),
        )
        for r in rows
    )
    return TenantOverview(projects=briefs, total=int(total or 0))


def _counts(conn: Connection, where: sa.ColumnElement[bool]) -> dict[str, dict[str, int]]:
    """Live entities by project and kind."""
    rows = conn.execute(
        sa.select(_ent.c.project_id, _ent.c.kind, sa.func.count())
        .where(where)
        .group_by(_ent.c.project_id, _ent.c.kind)
        .order_by(_ent.c.project_id, _ent.c.kind)
    )
    counts: dict[str, dict[str, int]] = {}
    for project_id, kind, count in rows:
        counts.setdefault(project_id, {})[kind] = int(count)
    return counts
