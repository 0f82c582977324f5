"""Project context, built in one place (seed 000 §7, §14.3) and reused everywhere."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection

from hansa import errors
from hansa.domain.project import ProjectContext
from hansa.store import projects

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
