"""Stage 6 of 6: the chosen agent answers, streaming text deltas and calling its tools."""

from __future__ import annotations

from hansa import tracing
from hansa.domain import message
from hansa.domain.agent import AgentDefinition
from hansa.engine import thinking
from hansa.engine.runtime.faults import crash_point
from hansa.engine.turns import scratchpad
from hansa.engine.turns.agent_loop import AgentLoop
from hansa.engine.turns.pipeline import Then, TurnContext
from hansa.engine.turns.stages.graph_reply import graph_reply


async def reply(ctx: TurnContext) -> Then:
    """The agent loop: the model answers, using the tools the laws allow it on the way."""
    assert ctx.agent is not None and ctx.project_context is not None
    agent = ctx.agent
    with tracing.agent_invocation(agent.id, agent.display_name, ctx.conversation_id):
        return await _answer(ctx, agent)


async def _answer(ctx: TurnContext, agent: AgentDefinition) -> Then:
    if agent.default_graph_id is not None:
        return await graph_reply(ctx)
    ctx.batch().thinking(
        thinking.drafting_entry(agent), agent_id=agent.id, phase=message.Phase.REPLY
    )
    await ctx.flush()
    crash_point(ctx.services.settings, "turn.after_route")
    services = ctx.services
    if ctx.fitted is not None:  # handed over since the context was built: the answerer's notes
        ctx.prompt = await scratchpad.carry(
            services, ctx.tenant_id, ctx.conversation_id, agent.id, ctx.prompt, ctx.fitted
        )
    ctx.reply_text = await AgentLoop(ctx, ctx.toolbox()).run()
    return Then.FINALIZE
