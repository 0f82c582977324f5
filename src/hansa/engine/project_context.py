"""Project context, built in one place (seed 000 §7, §14.3) and reused everywhere; and the
project digests and tenant overviews the context packs show, through the context cache."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection

from hansa import errors
from hansa.domain.context_digest import ProjectDigest, TenantOverview
from hansa.domain.project import ProjectContext
from hansa.engine.context_cache import TENANT, ContextCache
from hansa.store import projects, workspace_digest
from hansa.store.db import Database

_REQUEST_FIELDS = ("projectName", "projectDomain", "cmsPlatform")


def build_project_context(
    conn: Connection | None,
    tenant_id: str,
    project_id: str | None,
    request_context: dict[str, Any] | None = None,
) -> ProjectContext:
    """The context for a turn: the stored project, then what the request adds.

    The stored project wins over the request for the fields it has; the request
    fills what is missing (e.g. a project not stored in Hansa).
    """
    request_context = request_context or {}
    project_id = project_id or request_context.get("projectId")
    stored: dict[str, Any] = {}
    if project_id is not None and conn is not None:
        try:
            proj = projects.get(conn, tenant_id, project_id)
        except errors.NotFound:  # a project Hansa doesn't store: the request describes it
            proj = None
        if proj is not None:
            stored = {
                "project_name": proj.name,
                "project_domain": proj.domain,
                "cms_platform": proj.cms_platform,
                "allowed_task_types": proj.allowed_task_types,
                "config": proj.config,
            }
    from_request = {
        "project_name": request_context.get("projectName"),
        "project_domain": request_context.get("projectDomain"),
        "cms_platform": request_context.get("cmsPlatform"),
    }
    merged = {k: v for k, v in from_request.items() if v is not None}
    merged.update({k: v for k, v in stored.items() if v is not None})
    return ProjectContext(project_id=project_id, **merged)


RECENT_CHANGES = 5
"""The latest entity changes a project's summary lists ("recent activity")."""
OVERVIEW_PROJECTS = 20
"""The newest projects the global pack lists (it says how many there are in all)."""
TOP_DOCUMENTS = 3
"""The top-level document titles the global pack names per project."""


async def project_digest(
    cache: ContextCache, db: Database, tenant_id: str, project_id: str
) -> ProjectDigest:
    """The project's document outline, counts and latest changes, from the context cache
    (read when a change of the project committed since, or the entry expired)."""
    return await cache.get(
        (tenant_id, project_id, "digest"),
        lambda: db.read(
            workspace_digest.project_digest, tenant_id, project_id, recent=RECENT_CHANGES
        ),
    )


async def tenant_overview(cache: ContextCache, db: Database, tenant_id: str) -> TenantOverview:
    """The tenant's newest projects, a line of each, from the context cache."""
    return await cache.get(
        (tenant_id, TENANT, "overview"),
        lambda: db.read(
            workspace_digest.tenant_overview,
            tenant_id,
            projects=OVERVIEW_PROJECTS,
            top_documents=TOP_DOCUMENTS,
        ),
    )


async def workspace_of(
    cache: ContextCache, db: Database, tenant_id: str, project_id: str | None, *, overview: bool
) -> tuple[ProjectDigest | None, TenantOverview | None]:
    """What the packs show of the workspace: the project's digest, or with no project (and
    ``overview``) the tenant's overview of its projects."""
    if project_id is not None:
        return await project_digest(cache, db, tenant_id, project_id), None
    return None, await tenant_overview(cache, db, tenant_id) if overview else None
