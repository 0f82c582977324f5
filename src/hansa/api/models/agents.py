"""Agents (the roster and the tenant's registered ones) and projects."""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from hansa.api.models.base import Masked, Out, Time
from hansa.domain.agent import AgentDefinition, Category
from hansa.domain.base import Wire


class Avatar(Wire):
    """How the panel draws an agent."""

    initials: str
    color: str
    """``#rrggbb``."""


class AgentOut(Out):
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
    webhooks: dict[str, str] = Field(default_factory=dict)
    """How an external assistant is reached: ``message``, where its messages are POSTed."""
    message_webhook_id: str | None = None
    """The webhook delivering them (``GET /api/webhooks/{id}/deliveries``: its attempts)."""
    webhook_secret: str | None = None
    """Its signing secret: only in the answer to the registration, shown once."""

    @model_validator(mode="before")
    @classmethod
    def _drawn(cls, data: Any) -> Any:
        """An agent's ``avatar`` is its initials and colour, drawn together."""
        if isinstance(data, AgentDefinition):
            avatar = {"initials": data.initials, "color": data.color}
            return {**data.model_dump(), "avatar": avatar}
        return data


class ProjectOut(Out):
    """A project; the secrets in its ``config`` show as ``***``."""

    id: str
    name: str
    domain: str | None
    cms_platform: str | None
    allowed_task_types: list[str] | None
    """None: every registered task type (law of allowed scope)."""
    config: Masked
    created_at: Time
