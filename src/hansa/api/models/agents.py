"""Agents (the roster and the tenant's registered ones) and projects."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from hansa.domain.agent import Category
from hansa.domain.base import Wire


class Avatar(Wire):
    """How the panel draws an agent."""

    initials: str
    color: str
    """``#rrggbb``."""


class AgentOut(Wire):
    """An agent of the roster or one the tenant registered (``visible`` false)."""

    id: str
    display_name: str
    role: str
    role_summary: str
    category: Category
    visible: bool
    ordering: int
    capabilities: list[str]
    """What it may do: the law of allowed scope holds its tasks to these."""
    example_prompts: list[str]
    avatar: Avatar


class ProjectOut(Wire):
    """A project; the secrets in its ``config`` show as ``***``."""

    id: str
    name: str
    domain: str | None
    cms_platform: str | None
    allowed_task_types: list[str] | None
    """None: every registered task type (law of allowed scope)."""
    config: dict[str, Any]
    created_at: datetime
