"""Request bodies of API.md (camelCase on the wire); the answers are ``api/models``."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic.alias_generators import to_camel

Id = Annotated[str, Field(min_length=1, max_length=36)]
"""A stored id (its column is 36 characters wide: a ULID or a UUID fits)."""
AgentId = Annotated[str, Field(min_length=1, max_length=64)]
"""An agent's id (its columns are 64 characters wide)."""


class Body(BaseModel):
    """A camelCase JSON body."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)


class ProjectCreate(Body):
    """``POST /api/projects``."""

    name: str = Field(min_length=1, max_length=200)
    domain: str | None = Field(default=None, max_length=253)
    cms_platform: str | None = Field(default=None, max_length=64)
    allowed_task_types: list[str] | None = None
    config: dict[str, Any] = Field(default_factory=dict)


def _name_and_config_never_null(schema: dict[str, Any]) -> None:
    for name in ("name", "config"):
        prop = schema["properties"][name]
        prop["anyOf"] = [o for o in prop["anyOf"] if o != {"type": "null"}]
        prop.pop("default", None)


class ProjectPatch(Body):
    """``PATCH /api/projects/{id}``: only the fields given change."""

    model_config = ConfigDict(json_schema_extra=_name_and_config_never_null)

    name: str | None = Field(default=None, min_length=1, max_length=200)
    domain: str | None = Field(default=None, max_length=253)
    cms_platform: str | None = Field(default=None, max_length=64)
    allowed_task_types: list[str] | None = None
    config: dict[str, Any] | None = None

    @field_validator("name", "config", mode="before")
    @classmethod
    def _not_null(cls, value: Any) -> Any:
        # absent means "unchanged"; null would mean "none", which a project cannot be without
        if value is None:
            raise ValueError("may be left out but not null")
        return value


class ConversationCreate(Body):
    """``POST /api/conversations``."""

    project_id: Id | None = None
    title: str | None = Field(default=None, max_length=200)
    active_agent_id: AgentId | None = None
    user: dict[str, Any] | None = None
    """Who the conversation is with: ``{id, displayName?, email?, …}`` and attributes of
    the caller's (``tier``…), the ``user.*`` facts (``domain/conversation_user.py``)."""


class MessageCreate(Body):
    """``POST /api/conversations/{id}/messages``."""

    content: str
    active_agent_id: AgentId | None = None
    project_context: dict[str, Any] | None = None
    multitask_strategy: Literal["enqueue", "reject", "interrupt"] = "enqueue"


class Handoff(Body):
    """``POST /api/conversations/{id}/handoff``."""

    reason: str = Field(default="The user asked for a human.", max_length=500)


class ChatMessageIn(Body):
    """One message of a seed-compatible chat request."""

    role: Literal["user", "assistant", "system"]
    content: str


class ChatRequest(Body):
    """``POST /api/assistant/chat`` (seed 000 §12.1)."""

    conversation_id: Id | None = None
    messages: list[ChatMessageIn] = Field(min_length=1)
    active_agent_id: AgentId | None = None
    project_context: dict[str, Any] | None = None


class TaskIn(Body):
    """One task of ``POST /api/runs``."""

    step_group: str = Field(pattern=r"^[A-Z]{1,3}$")
    sequence_order: int = Field(default=0, ge=0, le=10_000)
    task_type: str = Field(min_length=1, max_length=64)
    parameters: dict[str, Any] = Field(default_factory=dict)
    created_by_agent_id: AgentId
    summary: str = Field(default="", max_length=500)
    project_id: Id | None = None
    ref: str | None = Field(default=None, pattern=r"^[A-Za-z][A-Za-z0-9_]{0,31}$")


class RunCreate(Body):
    """``POST /api/runs``: a programmatic plan."""

    conversation_id: Id
    project_id: Id | None = None
    title: str = Field(min_length=1, max_length=200)
    tasks: list[TaskIn] = Field(min_length=1, max_length=500)


class TaskEdit(Body):
    """A change to one task before approval."""

    task_id: Id
    parameters: dict[str, Any] | None = None
    created_by_agent_id: AgentId | None = None
    summary: str | None = Field(default=None, max_length=500)


class RunApprove(Body):
    """``POST /api/runs/{id}/approve``."""

    edits: list[TaskEdit] = Field(default_factory=list, max_length=500)


class TaskConfirm(Body):
    """``POST /api/tasks/{id}/confirm``."""

    parameters_hash: str = Field(pattern=r"^[0-9a-f]{64}$")


class ExecuteRequest(Body):
    """``POST /api/assistant/execute`` (seed 000 §12.2)."""

    run_id: Id | None = None
    conversation_id: Id
    project_id: Id | None = None
    created_by_agent_id: AgentId
    task_type: str = Field(min_length=1, max_length=64)
    parameters: dict[str, Any] = Field(default_factory=dict)
    summary: str = Field(default="", max_length=500)
