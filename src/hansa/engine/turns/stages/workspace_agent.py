"""A workspace request goes to an agent that holds the workspace tools.

Triage recognises a request about workspace entities (a document, a goal…). The agent
the routing rules chose answers it when the law of allowed scope lets it create
entities here; otherwise Hans hands the turn to one that may (a documents specialist
first, then Hans himself, then any), with a status chip and a thinking entry, and the
prompt speaks as that agent.
"""

from __future__ import annotations

from hansa.domain import message
from hansa.domain.agent import AgentDefinition
from hansa.engine import laws, thinking
from hansa.engine.prompts import persona
from hansa.engine.turns.pipeline import TurnContext
from hansa.engine.turns.stages.route import answering
from hansa.models.base import ChatMessage

WORKSPACE_TOOL = "entity.create"
"""The tool that tells whether an agent may change workspace entities here."""


def workspace_agent(ctx: TurnContext) -> AgentDefinition | None:
    """Who answers a workspace request instead of ``ctx.agent``; None: it may answer."""
    assert ctx.agent is not None and ctx.project_context is not None
    registry, project = ctx.services.registry, ctx.project_context
    if WORKSPACE_TOOL not in registry:
        return None
    tool = registry.get(WORKSPACE_TOOL)
    if laws.scope_refusal(tool, ctx.agent, project) is None:
        return None
    able = [a for a in ctx.services.roster if laws.scope_refusal(tool, a, project) is None]
    ranked = sorted(
        able, key=lambda a: ("documents" not in a.capabilities, a.id != ctx.supervisor.id)
    )
    return ranked[0] if ranked else None


def hand_to_workspace_agent(ctx: TurnContext) -> None:
    """Give the turn to ``workspace_agent`` when there is one (in the pending batch)."""
    chosen = workspace_agent(ctx)
    if chosen is None:
        return
    assert ctx.agent is not None
    before, hans = ctx.agent, ctx.supervisor
    batch = ctx.batch()
    batch.status(thinking.handoff_status(hans, chosen), agent_id=hans.id)
    batch.thinking(
        f"{hans.display_name} gives the request to {chosen.display_name}, who may change "
        f"workspace entities here ({before.display_name} may not)",
        agent_id=hans.id,
        phase=message.Phase.TRIAGE,
    )
    batch.then(answering(ctx, chosen.id))
    ctx.agent = chosen
    ctx.prompt = _speaking_as(ctx.prompt, before, chosen, hans)


def _speaking_as(
    prompt: list[ChatMessage],
    before: AgentDefinition,
    chosen: AgentDefinition,
    lead: AgentDefinition,
) -> list[ChatMessage]:
    old, new = persona(before, lead=lead), persona(chosen, lead=lead)
    for i, m in enumerate(prompt):  # the agent's own system message, after the shared part
        if m.role == "system" and old in m.content:
            changed = ChatMessage("system", m.content.replace(old, new, 1))
            return [*prompt[:i], changed, *prompt[i + 1 :]]
    return [ChatMessage("system", new), *prompt]
