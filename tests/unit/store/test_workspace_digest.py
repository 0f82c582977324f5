"""The context packs' reads (store/workspace_digest.py) on SQLite and PostgreSQL: a
project's outline in tree order with sizes but no content, its counts by kind, its latest
changes; a tenant's projects, newest first, with their counts and first documents."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from hansa.domain.base import new_id, utcnow
from hansa.domain.project import Project
from hansa.store import projects, workspace, workspace_digest
from hansa.store.db import DEFAULT_TENANT_ID as T
from hansa.store.db import Database

START = utcnow()


def _project(db: Database, name: str, minutes: int) -> str:
    made = Project(
        id=new_id(),
        tenant_id=T,
        name=name,
        domain=f"{name.lower()}.example",
        cms_platform=None,
        allowed_task_types=None,
        config={},
        created_at=START + timedelta(minutes=minutes),
    )
    db.write_now(lambda conn: projects.create(conn, made))
    return made.id


def _make(
    db: Database,
    project: str,
    kind: str,
    name: str,
    minutes: int,
    data: dict[str, Any] | None = None,
    parent: str | None = None,
) -> str:
    return db.write_now(
        lambda conn: workspace.create(
            conn,
            T,
            project,
            kind,
            name,
            data or {},
            START + timedelta(minutes=minutes),
            parent_id=parent,
        )
    ).id


def test_a_project_digest_is_its_outline_counts_and_latest_changes(db: Database) -> None:
    pid = _project(db, "Aquaverter", 0)
    body = {"content": "x" * 500}
    research = _make(db, pid, "document", "Research", 1, body)
    brand = _make(db, pid, "document", "Brand book", 2)
    interviews = _make(db, pid, "document", "Interviews", 3, body, parent=research)
    task = _make(db, pid, "task", "Renew SSL", 4)
    gone = _make(db, pid, "goal", "Old goal", 5)
    _make(db, _project(db, "Other", 1), "document", "Elsewhere", 6)
    db.write_now(lambda conn: workspace.set_deleted(conn, T, gone, START))
    later = START + timedelta(minutes=9)
    db.write_now(lambda conn: workspace.update(conn, T, brand, {"name": "Brand guide"}, later))

    digest = db.write_now(lambda conn: workspace_digest.project_digest(conn, T, pid, recent=3))

    outline = {d.id: (d.name, d.parent_id, d.chars) for d in digest.documents}
    assert set(outline) == {research, brand, interviews}, "live documents of the project"
    assert outline[interviews][1] == research
    assert outline[research][2] >= len(json.dumps(body)) - 2, "its size, measured in SQL"
    assert outline[brand][2] < 10
    assert digest.counts == {"document": 3, "task": 1}
    assert [(c.id, c.action) for c in digest.recent] == [
        (brand, "updated"),
        (task, "created"),
        (interviews, "created"),
    ]


def test_a_tenant_overview_lists_the_newest_projects_with_counts_and_top_documents(
    db: Database,
) -> None:
    old = _project(db, "Old", 0)
    new = _project(db, "New", 5)
    empty = _project(db, "Empty", 3)
    for i, title in enumerate(("Alpha", "Beta", "Gamma", "Delta")):
        top = _make(db, new, "document", title, 10 + i)
    _make(db, new, "document", "Child", 20, parent=top)
    _make(db, old, "task", "A task", 21)

    overview = db.write_now(
        lambda conn: workspace_digest.tenant_overview(conn, T, projects=2, top_documents=3)
    )
    everything = db.write_now(
        lambda conn: workspace_digest.tenant_overview(conn, T, projects=10, top_documents=3)
    )

    assert overview.total == 3 and [p.id for p in overview.projects] == [new, empty]
    first = overview.projects[0]
    assert first.counts == {"document": 5} and first.domain == "new.example"
    assert first.top_documents == ("Alpha", "Beta", "Gamma"), "top-level, in order, at most 3"
    assert overview.projects[1].counts == {} and overview.projects[1].top_documents == ()
    assert [p.id for p in everything.projects] == [new, empty, old]
    assert everything.projects[2].counts == {"task": 1}
