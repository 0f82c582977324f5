"""What the context packs say about a project's workspace, read once and cached (seed 002
§4.2-4.3, §9.1): the document outline (titles, never content), the entities by kind, the
latest changes, and, across a tenant's projects, a line of each.

These are read models for prompts only: small, frozen, and cheap to keep in memory, so
that a turn reads them from ``engine.context_cache`` rather than every document's body.
"""

from __future__ import annotations

from datetime import datetime

from hansa.domain.base import Wire


class DocumentOutline(Wire):
    """A document as the tree shows it: where it sits and how long it is, not what it says."""

    id: str
    name: str
    parent_id: str | None
    position: int
    created_at: datetime
    chars: int
    """The size of its stored fields (JSON characters): what a full read would cost."""


class EntityChange(Wire):
    """One of a project's latest changes: an entity created or updated."""

    id: str
    kind: str
    name: str
    created_at: datetime
    updated_at: datetime

    @property
    def action(self) -> str:
        """``created`` when it was not changed since, else ``updated``."""
        return "created" if self.updated_at <= self.created_at else "updated"


class ProjectDigest(Wire):
    """A project's workspace for the project and entity packs."""

    documents: tuple[DocumentOutline, ...]
    """Every live document, in tree order (parent, position, creation)."""
    counts: dict[str, int]
    """Live entities by kind."""
    recent: tuple[EntityChange, ...]
    """The latest changes, newest first."""


class ProjectBrief(Wire):
    """One project in the global pack's list."""

    id: str
    name: str
    domain: str | None
    counts: dict[str, int]
    """Live entities by kind."""
    top_documents: tuple[str, ...]
    """The titles of its first top-level documents, in order."""


class TenantOverview(Wire):
    """A tenant's projects for the global pack: the newest ``projects`` of ``total``."""

    projects: tuple[ProjectBrief, ...]
    total: int
