"""Workspace entities and the edges between them: what the built-in task types and the
built-in CMS, shop and tickets keep in Hansa's own database."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from hansa.domain.base import Wire


class WorkspaceEntity(Wire):
    """A document, task, goal, plan, milestone, risk, requirement, page, product or ticket."""

    id: str
    tenant_id: str
    project_id: str | None
    kind: str
    name: str
    parent_id: str | None
    """Documents form a tree: the parent; siblings are ordered by ``position``."""
    position: int
    data: dict[str, Any]
    """The kind's own fields (a page's ``slug``, ``html`` and ``status``, say)."""
    idempotency_key: str | None
    """The key it was created with: creating again with the same key returns it."""
    created_at: datetime
    updated_at: datetime
    deleted_at: datetime | None
    """When it was deleted (reversibly); None while it is live."""

    @property
    def deleted(self) -> bool:
        """Whether it is deleted (and may be restored)."""
        return self.deleted_at is not None


class WorkspaceEdge(Wire):
    """A named relation from one entity to another."""

    id: str
    from_id: str
    to_id: str
    relation: str
