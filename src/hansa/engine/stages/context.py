"""Stage 3: build the project context and the agent's prompt."""

from __future__ import annotations

from sqlalchemy import Connection

from hansa.domain import message
from hansa.domain.project import ProjectContext
from hansa.engine import thinking
from hansa.engine.context import build_project_context
from hansa.engine.turn import TurnContext
from hansa.models.base import ChatMessage
from hansa.store import messages

_HISTORY_KINDS = (message.Kind.USER, message.Kind.ASSISTANT)


async def build_context(ctx: TurnContext) -> None:
    """Project context (one builder for routing, prompts and planning), history, prompt."""
    if ctx.answered:
        return
    assert ctx.conversation is not None and ctx.agent is not None
    history_size = ctx.services.settings.history_messages
    project_id = ctx.conversation.project_id

    def load(conn: Connection) -> tuple[ProjectContext, list[message.Message]]:
        project = build_project_context(conn, ctx.tenant_id, project_id, ctx.request_context)
        history = messages.list_for(
            conn, ctx.tenant_id, ctx.conversation_id, kinds=_HISTORY_KINDS, last=history_size + 1
        )
        return project, history

    project, history = await ctx.services.db.read(load)
    ctx.project_context = project
    ctx.batch().thinking(
        thinking.context_entry(ctx.supervisor, project),
        agent_id=ctx.supervisor.id,
        phase="context",
    )
    agent = ctx.agent
    system = (
        f"You are {agent.display_name}, the {agent.role} of a team of AI assistants led by "
        f"{ctx.supervisor.display_name}. {agent.role_summary} "
        f"{project.describe()} Answer briefly and concretely."
    )
    prompt = [ChatMessage("system", system)]
    for m in history:
        if m.turn_id == ctx.turn_id and m.kind is message.Kind.USER:
            continue
        prompt.append(
            ChatMessage("user" if m.kind is message.Kind.USER else "assistant", m.content)
        )
    prompt.append(ChatMessage("user", ctx.user_text))
    ctx.prompt = prompt
