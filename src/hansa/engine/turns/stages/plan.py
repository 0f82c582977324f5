"""Stage 4: triage, and the planning protocol for requests that need a run."""

from __future__ import annotations

from hansa.domain import message
from hansa.engine import runs
from hansa.engine.planning import protocol
from hansa.engine.planning.llm_planner import draft_plan
from hansa.engine.planning.triage import triage
from hansa.engine.turns.pipeline import TurnContext


async def plan(ctx: TurnContext) -> None:
    """Answer simply, or plan: ask what is missing, show the plan, start it when approved."""
    if ctx.answered:
        return
    assert ctx.conversation is not None
    state = ctx.conversation.metadata.get("planning")
    if state:
        protocol.proceed(ctx, state)
    else:
        decision = triage(ctx.user_text)
        ctx.batch().thinking(
            f"{ctx.supervisor.display_name} chose a {decision.reason}",
            agent_id=ctx.supervisor.id,
            phase="triage",
        )
        if not decision.plan:
            return
        if decision.playbook is not None:
            protocol.start(ctx, decision)
        else:
            drafted = await draft_plan(ctx)
            if drafted is None:
                ctx.batch().thinking(
                    f"{ctx.supervisor.display_name} found no plan template and the model gave "
                    "no valid plan; the agent answers directly",
                    agent_id=ctx.supervisor.id,
                    phase="planning",
                )
                return
            protocol.show(
                ctx, drafted, {"plan": drafted.model_dump(mode="json"), "intent": drafted.intent}
            )
    ctx.answered = True
    await ctx.flush()
    if ctx.refusal is not None:
        ctx.batch().message(
            message.Kind.ASSISTANT,
            message.Author.ASSISTANT,
            f"I can't plan this as asked: {ctx.refusal}. Nothing was changed.",
            agent_id=ctx.supervisor.id,
            metadata={"refused": True},
        )
    if ctx.cancel_run is not None:
        await runs.cancel(ctx.services, ctx.tenant_id, ctx.cancel_run)
    if ctx.approve_run is not None:
        await runs.approve(ctx.services, ctx.tenant_id, ctx.approve_run, turn_id=ctx.turn_id)
