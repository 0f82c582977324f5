"""The MCP server's tools (``api/mcp_server.py`` serves them): one per task type an agent may
use, run as ``POST /api/assistant/execute`` runs it, and ``ask_the_team``, a turn.

A tool's name is its task type's as model providers accept tool names
(``^[a-zA-Z0-9_-]+$``, ``engine/toolbox.wire_name``): ``entity.create`` is
``entity_create``, since clients hand MCP tools to OpenAI or Anthropic models as they are.
The task types keep their names; a call naming one (``entity.create``) is still taken.

A task tool's input is its task type's parameters plus three optional arguments:
``agentId`` (who owns the task; the tenant's supervisor unless named, an agent's token's own
agent), ``conversationId`` (where the task is recorded; a new conversation per call unless
named) and ``projectId``. The laws hold as they do for the route: a refusal (allowed scope,
clarity) is a tool error carrying Hansa's message and its ``{"error": …}`` body as
structured content, and an irreversible task does not run: it awaits a person's
confirmation (the panel, or ``POST /api/tasks/{id}/confirm``).
"""

from __future__ import annotations

import logging
from typing import Any

import mcp_types as types
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from hansa import errors
from hansa.api.errors import error_body
from hansa.api.schemas import AgentId, Id
from hansa.domain import event, run, secrets
from hansa.domain.message import Author, Kind
from hansa.domain.principal import Forbidden, Principal
from hansa.domain.principal import Kind as PrincipalKind
from hansa.engine import runs, toolbox
from hansa.engine.runtime.services import Services
from hansa.engine.turns import chat
from hansa.tasks.base import TaskType

log = logging.getLogger(__name__)

ASK_THE_TEAM = "ask_the_team"
"""The tool that runs a turn: a message to the team, answered by its agents."""

CALL_ARGUMENTS = ("agentId", "conversationId", "projectId")
"""The arguments a task tool takes besides its task type's parameters (a type that names a
parameter so keeps it: the call's value goes to the task)."""


class _Arguments(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


class CallScope(_Arguments):
    """Who runs a task tool's task, and where it is recorded."""

    agent_id: AgentId | None = Field(
        default=None, description="The agent that owns the task (default: the supervisor)."
    )
    conversation_id: Id | None = Field(
        default=None, description="The conversation to record it in (default: a new one)."
    )
    project_id: Id | None = Field(default=None, description="The project it is done for.")


class AskTheTeam(_Arguments):
    """``ask_the_team``'s input."""

    message: str = Field(min_length=1, description="What to ask or tell the team.")
    agent_id: AgentId | None = Field(
        default=None, description="The agent to address (default: the supervisor)."
    )
    conversation_id: Id | None = Field(
        default=None, description="The conversation to continue (default: a new one)."
    )
    user: dict[str, Any] | None = Field(
        default=None,
        description="Who a new conversation is with: {id, displayName?, email?, ...} (user.*).",
    )


def offered(services: Services) -> dict[str, TaskType[Any]]:
    """The task types offered as tools, by tool name: every one but prompt graphs' nodes."""
    tools: dict[str, TaskType[Any]] = {}
    for task_type in services.registry.all():
        if task_type.graph_node:
            continue
        name = tool_name(task_type)
        if name in tools or name == ASK_THE_TEAM:
            other = tools[name].name if name in tools else ASK_THE_TEAM
            raise errors.ConfigError(
                f"{task_type.name!r} and {other!r} share the MCP tool name {name!r}; rename one"
            )
        tools[name] = task_type
    return tools


def tool_name(task_type: TaskType[Any]) -> str:
    """The task type's MCP tool name (``entity.create`` -> ``entity_create``)."""
    return toolbox.wire_name(task_type.name)


def _task_type(services: Services, name: str) -> TaskType[Any] | None:
    """The task type tool ``name`` runs: by its tool name, or its own."""
    tools = offered(services)
    found = tools.get(name)
    if found is None and name in services.registry:
        found = tools.get(tool_name(services.registry.get(name)))
    return found


def describe(services: Services) -> list[types.Tool]:
    """Every tool, with its input schema and hints."""
    ask = types.Tool(
        name=ASK_THE_TEAM,
        title="Ask the team",
        description="Post a message to Hansa's team of agents and wait for their answer "
        "(a turn). Returns what the agents said and the conversation's id, to continue it.",
        input_schema=AskTheTeam.model_json_schema(by_alias=True),
        annotations=types.ToolAnnotations(
            read_only_hint=False, destructive_hint=False, idempotent_hint=False
        ),
    )
    return [*(_task_tool(name, t) for name, t in offered(services).items()), ask]


def input_schema(services: Services, name: str) -> dict[str, Any] | None:
    """The tool's input schema, or None for an unknown tool."""
    if name == ASK_THE_TEAM:
        return AskTheTeam.model_json_schema(by_alias=True)
    found = _task_type(services, name)
    return None if found is None else _task_schema(found)


def _task_schema(task_type: TaskType[Any]) -> dict[str, Any]:
    schema = task_type.schema()
    properties: dict[str, Any] = dict(schema.get("properties", {}))
    extra = CallScope.model_json_schema(by_alias=True)["properties"]
    for name in CALL_ARGUMENTS:
        properties.setdefault(name, extra[name])
    return {**schema, "type": "object", "properties": properties}


def _task_tool(name: str, task_type: TaskType[Any]) -> types.Tool:
    # reversible_when: some parameters make it irreversible, so the hint is the worst case
    irreversible = not task_type.is_reversible_by_system or task_type.reversible_when is not None
    note = (
        " Irreversible: the task awaits a person's confirmation in Hansa and does not run "
        "on this call."
        if irreversible
        else ""
    )
    return types.Tool(
        name=name,
        title=task_type.name,
        description=task_type.description + note,
        input_schema=_task_schema(task_type),
        annotations=types.ToolAnnotations(
            # the registry does not say which types only read; reversible is not read-only
            read_only_hint=False,
            destructive_hint=irreversible,
            idempotent_hint=False,
        ),
    )


async def call(
    services: Services, principal: Principal, name: str, arguments: dict[str, Any]
) -> types.CallToolResult:
    """Run tool ``name`` as ``principal``; Hansa's refusals come back as tool errors."""
    try:
        if name == ASK_THE_TEAM:
            return await _ask(services, principal, AskTheTeam.model_validate(arguments))
        task_type = _task_type(services, name)
        if task_type is None:
            raise errors.NotFound(f"no tool {name!r}", details={"field": "name"})
        return await _run_task(services, principal, task_type, arguments)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "arguments"
        invalid = errors.InvalidInput(f"{field}: {first['msg']}", details={"field": field})
        return _refused(invalid)
    except errors.UserError as exc:
        return _refused(exc)
    except errors.HansaError as exc:
        log.error("MCP tool %s failed: %s", name, exc)
        return _refused(exc)


def _refused(exc: errors.HansaError) -> types.CallToolResult:
    body = error_body(exc.code, secrets.mask_text(exc.message), exc.details)
    return types.CallToolResult(
        content=[types.TextContent(text=body["error"]["message"])],
        structured_content=body,
        is_error=True,
    )


async def _run_task(
    services: Services, principal: Principal, task_type: TaskType[Any], arguments: dict[str, Any]
) -> types.CallToolResult:
    own = set(task_type.schema().get("properties", {}))
    taken = {k: arguments[k] for k in CALL_ARGUMENTS if k in arguments and k not in own}
    parameters = {k: v for k, v in arguments.items() if k not in taken}
    scope = CallScope.model_validate(taken)
    agent_id = scope.agent_id or _default_agent(services, principal)
    if not principal.may_act_as(agent_id):
        raise Forbidden(f"this token acts only as {principal.id!r}", details={"field": "agentId"})
    conversation_id = scope.conversation_id
    if conversation_id is None:
        convo = await chat.create_conversation(
            services,
            principal.tenant_id,
            project_id=scope.project_id,
            title=f"MCP: {task_type.name}",
        )
        conversation_id = convo.id
    task = await runs.execute(
        services,
        principal.tenant_id,
        conversation_id=conversation_id,
        project_id=scope.project_id,
        agent_id=agent_id,
        task_type=task_type.name,
        parameters=parameters,
        summary="",
    )
    out: dict[str, Any] = {
        "taskId": task.id,
        "runId": task.run_id,
        "conversationId": conversation_id,
        "status": task.status.value,
        "details": runs.details(task),
        "parametersHash": task.parameters_hash,
    }
    if task.error:
        out["error"] = secrets.mask_text(task.error)
    failed = task.status in (
        run.TaskStatus.FAILED,
        run.TaskStatus.CANCELLED,
        run.TaskStatus.AMBIGUOUS,
    )
    text = types.TextContent(text=_told(task_type.name, task, out))
    return types.CallToolResult(content=[text], structured_content=out, is_error=failed)


def _default_agent(services: Services, principal: Principal) -> str:
    return principal.id if principal.kind is PrincipalKind.AGENT else services.supervisor.id


def _told(name: str, task: run.Task, out: dict[str, Any]) -> str:
    match task.status:
        case run.TaskStatus.COMPLETED:
            return f"{name} completed (task {task.id})."
        case run.TaskStatus.AWAITING_CONFIRMATION:
            return (
                f"{name} is irreversible and did not run: task {task.id} awaits a person's "
                f"confirmation in Hansa (the panel, or POST /api/tasks/{task.id}/confirm)."
            )
        case _ if "error" in out:
            return f"{name} {task.status.value} (task {task.id}): {out['error']}"
        case _:
            return f"{name} is {task.status.value} (task {task.id}): GET /api/tasks/{task.id}."


async def _ask(services: Services, principal: Principal, ask: AskTheTeam) -> types.CallToolResult:
    tenant = principal.tenant_id
    if principal.kind is PrincipalKind.AGENT:
        raise Forbidden("an agent's token posts as its agent and starts no turn")
    agent_id = ask.agent_id or services.supervisor.id
    await services.agents.require(tenant, agent_id, field="agentId")
    conversation_id = ask.conversation_id
    if conversation_id is None:
        convo = await chat.create_conversation(
            services, tenant, active_agent_id=agent_id, user=ask.user
        )
        conversation_id = convo.id
    posted = await chat.post_message(
        services, tenant, conversation_id, ask.message, active_agent_id=agent_id
    )
    waited = await chat.wait_for_done(services, tenant, conversation_id, posted.turn_id, posted.seq)
    said = said_in(waited.events)
    out: dict[str, Any] = {
        "conversationId": conversation_id,
        "turnId": posted.turn_id,
        "finished": waited.finished,
        "messages": said,
    }
    text = "\n\n".join(m["content"] for m in said)
    if not waited.finished:
        text += f"\n\n(The turn is still running; follow conversation {conversation_id}.)"
    return types.CallToolResult(
        content=[types.TextContent(text=text.strip())], structured_content=out
    )


def said_in(events: list[event.Event]) -> list[dict[str, Any]]:
    """What the turn's agents answered (not status chips or the user's own message)."""
    return [
        {"messageId": ev.payload.message_id, "agentId": ev.agent_id, "content": ev.payload.content}
        for ev in events
        if isinstance(ev.payload, event.MessageData)
        and ev.payload.kind is Kind.ASSISTANT
        and ev.payload.author is Author.ASSISTANT
    ]
