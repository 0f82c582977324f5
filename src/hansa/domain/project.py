"""Projects and the project context built from them (seed 000 §7)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import Field

from hansa.domain.base import Wire


class Project(Wire):
    """A project of a tenant: a site, its CMS and what Hansa may do there."""

    id: str
    tenant_id: str
    name: str
    domain: str | None
    cms_platform: str | None
    allowed_task_types: tuple[str, ...] | None
    """None means every registered task type (law of allowed scope)."""
    config: dict[str, Any]
    created_at: datetime


class ProjectContext(Wire):
    """What agents know about the project in focus; built in one place, reused everywhere."""

    project_id: str | None = None
    project_name: str | None = None
    project_domain: str | None = None
    cms_platform: str | None = None
    allowed_task_types: tuple[str, ...] | None = None
    config: dict[str, Any] = Field(default_factory=dict)

    @property
    def is_cross_project(self) -> bool:
        """True when no project is in focus: context is scoped to the tenant."""
        return self.project_id is None

    def describe(self) -> str:
        """A short plain-language description for prompts."""
        if self.is_cross_project and not self.project_name:
            return "No project is in focus (cross-project conversation)."
        parts = [f"Project: {self.project_name or self.project_id}"]
        if self.project_domain:
            parts.append(f"domain {self.project_domain}")
        if self.cms_platform:
            parts.append(f"CMS {self.cms_platform}")
        return ", ".join(parts) + "."
