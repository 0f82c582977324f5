"""Request and response bodies of API.md (camelCase on the wire)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from hansa.domain import agent, conversation, llm_call, message, project


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


class ProjectPatch(Body):
    """``PATCH /api/projects/{id}``: only the fields given change."""

    name: str | None = Field(default=None, min_length=1, max_length=200)
    domain: str | None = Field(default=None, max_length=253)
    cms_platform: str | None = Field(default=None, max_length=64)
    allowed_task_types: list[str] | None = None
    config: dict[str, Any] | None = None


class ConversationCreate(Body):
    """``POST /api/conversations``."""

    project_id: str | None = None
    title: str | None = Field(default=None, max_length=200)
    active_agent_id: str | None = None


class MessageCreate(Body):
    """``POST /api/conversations/{id}/messages``."""

    content: str
    active_agent_id: str | None = None
    project_context: dict[str, Any] | None = None


class ChatMessageIn(Body):
    """One message of a seed-compatible chat request."""

    role: Literal["user", "assistant", "system"]
    content: str


class ChatRequest(Body):
    """``POST /api/assistant/chat`` (seed 000 §12.1)."""

    conversation_id: str | None = None
    messages: list[ChatMessageIn] = Field(min_length=1)
    active_agent_id: str | None = None
    project_context: dict[str, Any] | None = None


def project_out(p: project.Project) -> dict[str, Any]:
    """A project as JSON."""
    return {
        "id": p.id,
        "name": p.name,
        "domain": p.domain,
        "cmsPlatform": p.cms_platform,
        "allowedTaskTypes": None if p.allowed_task_types is None else list(p.allowed_task_types),
        "config": p.config,
        "createdAt": p.created_at.isoformat(),
    }


def conversation_out(c: conversation.Conversation) -> dict[str, Any]:
    """A conversation as JSON."""
    return {
        "id": c.id,
        "state": c.state.value,
        "currentAgent": c.current_agent,
        "projectId": c.project_id,
        "title": c.title,
        "lastSeq": c.last_seq,
        "createdAt": c.created_at.isoformat(),
        "updatedAt": c.updated_at.isoformat(),
        "metadata": c.metadata,
    }


def message_out(m: message.Message) -> dict[str, Any]:
    """A message as JSON."""
    return {
        "id": m.id,
        "kind": m.kind.value,
        "author": m.author.value,
        "agentId": m.agent_id,
        "content": m.content,
        "runId": m.run_id,
        "turnId": m.turn_id,
        "createdAt": m.created_at.isoformat(),
        "metadata": m.metadata,
    }


def agent_out(a: agent.AgentDefinition) -> dict[str, Any]:
    """An agent as JSON."""
    return {
        "id": a.id,
        "displayName": a.display_name,
        "role": a.role,
        "roleSummary": a.role_summary,
        "category": a.category.value,
        "visible": a.visible,
        "ordering": a.ordering,
        "capabilities": list(a.capabilities),
        "examplePrompts": list(a.example_prompts),
        "avatar": {"initials": a.initials, "color": a.color},
    }


def llm_call_out(c: llm_call.LlmCall) -> dict[str, Any]:
    """A model call record as JSON."""
    return c.model_dump(mode="json", by_alias=True, exclude={"tenant_id"})


def iso(value: datetime) -> str:
    """An ISO-8601 timestamp."""
    return value.isoformat()
