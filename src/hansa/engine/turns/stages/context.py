"""Stage 4 of 6: build the project context and the agent's prompt."""

from __future__ import annotations

from hansa.domain import message
from hansa.engine import thinking
from hansa.engine.project_context import build_project_context
from hansa.engine.prompts import persona
from hansa.engine.turns.pipeline import Then, TurnContext
from hansa.models.base import ChatMessage


def _before_this_turn(history: list[message.Message], turn_id: str) -> list[message.Message]:
    """The messages before this turn's own (later ones may be queued already)."""
    for i, m in enumerate(history):
        if m.turn_id == turn_id and m.kind is message.Kind.USER:
            return history[:i]
    return []


async def build_context(ctx: TurnContext) -> Then:
    """Project context (one builder for routing, prompts and planning), history, prompt."""
    assert ctx.conversation is not None and ctx.agent is not None
    project_id = ctx.conversation.project_id
    request_context = ctx.request_context
    if project_id is None and not (request_context or {}).get("projectId"):
        project = build_project_context(None, ctx.tenant_id, None, request_context)
    else:
        project = await ctx.services.db.read(
            lambda conn: build_project_context(conn, ctx.tenant_id, project_id, request_context)
        )
    ctx.project_context = project
    history = ctx.history
    ctx.batch().thinking(
        thinking.context_entry(ctx.supervisor, project),
        agent_id=ctx.supervisor.id,
        phase=message.Phase.CONTEXT,
    )
    agent = ctx.agent
    system = (
        f"{persona(agent, lead=ctx.supervisor)} {project.describe()} Answer briefly and concretely."
    )
    prompt = [ChatMessage("system", system)]
    for m in _before_this_turn(history, ctx.turn_id):
        prompt.append(
            ChatMessage("user" if m.kind is message.Kind.USER else "assistant", m.content)
        )
    prompt.append(ChatMessage("user", ctx.user_text))
    ctx.prompt = prompt
    return Then.NEXT
