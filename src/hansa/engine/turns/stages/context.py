"""Stage 4 of 6: build the project context, the context packs and the agent's prompt.

The prompt is one system message (the team's rules, the packs, the rolling summary), the
messages after the summary, a system message saying who the agent is (then one with its
agent state, when it keeps one), and the user's message, fitted to the model's context
window by ``context_budget.fit``; what did not fit is reported by ``context_usage``.
Everything before the agent's own message is the same for every agent of the
conversation, so a turn routed to another agent than the last reuses the tokens the
embedded model evaluated for the last one (issue 34).
"""

from __future__ import annotations

from sqlalchemy import Connection

from hansa import errors
from hansa.domain import message
from hansa.domain.context_digest import ProjectDigest, TenantOverview
from hansa.domain.project import ProjectContext
from hansa.domain.workspace import WorkspaceEdge, WorkspaceEntity
from hansa.engine import (
    agent_notes,
    context_budget,
    context_packs,
    project_context,
    prompts,
    rolling_summary,
    thinking,
)
from hansa.engine.project_context import build_project_context
from hansa.engine.runtime.services import Services
from hansa.engine.turns.pipeline import Then, TurnContext
from hansa.models.base import ChatMessage
from hansa.store import agent_states, workspace

MAX_LINKED = 50
"""Linked entities read for the entity pack (the budget may keep fewer)."""

Linked = list[tuple[WorkspaceEdge, WorkspaceEntity]]


def _before_this_turn(history: list[message.Message], turn_id: str) -> list[message.Message]:
    """The messages before this turn's own (later ones may be queued already)."""
    for i, m in enumerate(history):
        if m.turn_id == turn_id and m.kind is message.Kind.USER:
            return history[:i]
    return []


def _focus(
    conn: Connection, tenant_id: str, entity_id: str
) -> tuple[WorkspaceEntity | None, Linked]:
    """The focused entity and the entities its edges link it to (None: it is gone)."""
    try:
        entity = workspace.get(conn, tenant_id, entity_id)
    except errors.NotFound:
        return None, []
    edges = workspace.edges_of(conn, tenant_id, entity_id)[:MAX_LINKED]
    other_ids = [e.to_id if e.from_id == entity_id else e.from_id for e in edges]
    others = {o.id: o for o in workspace.get_many(conn, tenant_id, other_ids)}
    linked = [(e, others[o]) for e, o in zip(edges, other_ids, strict=True) if o in others]
    return entity, linked


async def build_context(ctx: TurnContext) -> Then:
    """Project context (one builder for routing, prompts and planning), packs, history,
    fitted to the model's window."""
    assert ctx.conversation is not None and ctx.agent is not None
    services = ctx.services
    project_id = ctx.conversation.project_id
    request_context = ctx.request_context
    focus_id = ctx.conversation.focus_entity_id
    focused: tuple[WorkspaceEntity | None, Linked] = (None, [])
    if project_id is None and not (request_context or {}).get("projectId") and not focus_id:
        project = build_project_context(None, ctx.tenant_id, None, request_context)
    else:

        def read(conn: Connection) -> tuple[ProjectContext, tuple[WorkspaceEntity | None, Linked]]:
            found = build_project_context(conn, ctx.tenant_id, project_id, request_context)
            return found, _focus(conn, ctx.tenant_id, focus_id) if focus_id else (None, [])

        project, focused = await services.db.read(read)
    cache, tenant = services.context_cache, ctx.tenant_id  # cached until a change commits
    digest, overview = await project_context.workspace_of(
        cache, services.db, tenant, project.project_id, overview=not focus_id
    )
    ctx.project_context = project
    ctx.batch().thinking(
        thinking.context_entry(ctx.supervisor, project),
        agent_id=ctx.supervisor.id,
        phase=message.Phase.CONTEXT,
    )
    agent = ctx.agent
    packs = _packs(services, project, digest, overview, focus_id, focused[0])
    if ctx.conversation.user:
        packs.append(context_packs.user_pack(ctx.conversation.user))
    if focus_id is not None:
        outline = digest.documents if digest else ()
        packs.append(context_packs.entity_pack(focus_id, *focused, outline))
    model = services.model_for(agent, project)
    tools = _tool_tokens(ctx, offered=model.agent_tools)
    notes = await services.db.read(agent_states.get, ctx.tenant_id, ctx.conversation_id, agent.id)
    history = tuple(_chat(m) for m in _before_this_turn(ctx.history, ctx.turn_id))
    parts = context_budget.PromptParts(
        window=model.context_window,
        reply=agent.model_settings.max_tokens,
        system=prompts.base_rules(ctx.supervisor),
        agent=prompts.persona(agent, lead=ctx.supervisor, tools=tools > 0),
        tools=tools,
        message=ctx.user_text,
        packs=tuple(packs),
        summary=rolling_summary.for_prompt(ctx.summary) if ctx.summary is not None else None,
        kept=tuple(_chat(m) for m in ctx.kept),
        history=history,
        unread=max(ctx.history_total - len(ctx.history), 0),
        state=agent_notes.of(notes),
    )
    ctx.fitted = context_budget.fit(parts)
    ctx.prompt = ctx.fitted.prompt
    return Then.NEXT


def plain_prompt(services: Services, text: str) -> list[ChatMessage]:
    """The prompt of a plain turn answered by the supervisor, with no project, focus or
    history: what the embedded model is warmed with at start-up, so that the first such
    turn finds the system prompt already computed."""
    agent = services.supervisor
    model = services.model_for(agent)
    project = build_project_context(None, "", None, None)
    tools = model.agent_tools and services.settings.max_tool_rounds > 0  # as the turn's
    parts = context_budget.PromptParts(
        window=model.context_window,
        reply=agent.model_settings.max_tokens,
        system=prompts.base_rules(agent),
        agent=prompts.persona(agent, lead=agent, tools=tools),
        tools=0,  # counts for the budget only: a plain prompt leaves nothing out
        message=text,
        packs=tuple(_packs(services, project, None, _NO_PROJECTS, None, None)),
        summary=None,
        history=(),
        unread=0,
    )
    return context_budget.fit(parts).prompt


_NO_PROJECTS = TenantOverview(projects=(), total=0)
"""The warm-up's overview: a new server's first plain turn finds no project either, so the
global pack it evaluates is the one that turn sends."""


def _chat(m: message.Message) -> ChatMessage:
    return ChatMessage("user" if m.kind is message.Kind.USER else "assistant", m.content)


def _packs(
    services: Services,
    project: ProjectContext,
    digest: ProjectDigest | None,
    overview: TenantOverview | None,
    focus_id: str | None,
    entity: WorkspaceEntity | None,
) -> list[context_packs.Pack]:
    """The rules, global and project packs: what every agent of the conversation shares."""
    documents = digest.documents if digest else ()
    return [
        prompts.rules_pack(project, focus_id, entity),
        context_packs.global_pack(services.clock(), services.roster, overview),
        context_packs.project_pack(project, documents, digest),
    ]


def _tool_tokens(ctx: TurnContext, *, offered: bool) -> int:
    """The estimated tokens of the tools the agent loop will offer (none to a model that
    takes no tools, or with ``max_tool_rounds`` 0)."""
    services = ctx.services
    if not (offered and services.settings.max_tool_rounds):
        return 0
    return ctx.toolbox().tokens()
