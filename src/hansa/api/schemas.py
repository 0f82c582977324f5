"""Request and response bodies of API.md (camelCase on the wire)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic.alias_generators import to_camel

from hansa.domain import agent, conversation, llm_call, message, project, run, secrets

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


def project_out(p: project.Project) -> dict[str, Any]:
    """A project as JSON; its secrets are write-only (``***``)."""
    return {
        "id": p.id,
        "name": p.name,
        "domain": p.domain,
        "cmsPlatform": p.cms_platform,
        "allowedTaskTypes": None if p.allowed_task_types is None else list(p.allowed_task_types),
        "config": secrets.mask(p.config),
        "createdAt": p.created_at.isoformat(),
    }


def conversation_out(c: conversation.Conversation) -> dict[str, Any]:
    """A conversation as JSON; the secrets in its metadata (the planning state) masked."""
    return {
        "id": c.id,
        "state": c.state.value,
        "currentAgent": c.current_agent,
        "projectId": c.project_id,
        "title": c.title,
        "lastSeq": c.last_seq,
        "createdAt": c.created_at.isoformat(),
        "updatedAt": c.updated_at.isoformat(),
        "context": secrets.mask(c.context),
        "metadata": secrets.mask(c.metadata),  # the plan in progress, its steps' parameters
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
        "metadata": secrets.mask(m.metadata),
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


def task_out(t: run.Task) -> dict[str, Any]:
    """A task with every seed 000 §8.1 field, plus its parameters hash; secrets masked."""
    return {
        "id": t.id,
        "runId": t.run_id,
        "conversationId": t.conversation_id,
        "projectId": t.project_id,
        "parentTaskId": t.parent_task_id,
        "stepGroup": t.step_group,
        "sequenceOrder": t.sequence_order,
        "nodeId": t.node_id,
        "dependsOn": t.depends_on,
        "createdByAgentId": t.created_by,
        "status": t.status.value,
        "taskType": t.task_type,
        "parameters": secrets.mask(t.parameters),
        "parametersHash": t.parameters_hash,
        "summary": secrets.mask_text(t.summary),
        "isReversibleBySystem": t.is_reversible_by_system,
        "irreversibleConfirmedAt": (
            t.irreversible_confirmed_at.isoformat() if t.irreversible_confirmed_at else None
        ),
        "attempts": t.attempts,
        "scheduledAt": t.scheduled_at.isoformat() if t.scheduled_at else None,
        "result": secrets.mask(t.result),
        "error": secrets.mask(t.error),
        "createdAt": t.created_at.isoformat(),
        "updatedAt": t.updated_at.isoformat(),
        "metadata": secrets.mask(t.metadata),
    }


def run_card(
    r: run.Run,
    tasks: list[run.Task],
    thinking: list[message.Message],
    names: dict[str, str],
) -> dict[str, Any]:
    """``GET /api/runs/{id}``: the run, its agents, tasks grouped with their thinking."""
    groups = sorted({t.step_group for t in tasks})
    agents = sorted({t.created_by for t in tasks}, key=lambda a: (a != "chief", a))
    return {
        "id": r.id,
        "conversationId": r.conversation_id,
        "projectId": r.project_id,
        "title": r.title,
        "status": r.status.value,
        "createdByAgentId": r.created_by,
        "createdAt": r.created_at.isoformat(),
        "updatedAt": r.updated_at.isoformat(),
        "agents": [{"id": a, "displayName": names.get(a, a)} for a in agents],
        "groups": [
            {
                "stepGroup": g,
                "tasks": [task_out(t) for t in tasks if t.step_group == g],
                "thinking": [
                    {
                        "agentId": m.agent_id,
                        "summary": m.content,
                        "createdAt": m.created_at.isoformat(),
                    }
                    for m in thinking
                    if m.metadata.get("group") == g
                ],
            }
            for g in groups
        ],
        "thinking": [
            {"agentId": m.agent_id, "summary": m.content, "createdAt": m.created_at.isoformat()}
            for m in thinking
            if not m.metadata.get("group")
        ],
        "metadata": secrets.mask(r.metadata),
    }
