"""Stage 3 of 6: the supervisor routes the message and records why (seed 000 §5)."""

from __future__ import annotations

from collections.abc import Callable

import anyio.to_thread
from sqlalchemy import Connection

from hansa.domain import conversation, event, message, turn
from hansa.domain.agent import AgentDefinition
from hansa.domain.routing import RoutingDecision
from hansa.engine import thinking
from hansa.engine.turns.pipeline import Then, TurnContext
from hansa.engine.webhooks import agent_messages
from hansa.store import conversations, turns

ANSWERS_THE_PLAN = "the message answers the supervisor's planning questions or plan"
PLANS_IT = "a change to plan: the supervisor plans it himself"
ADDRESSED = "the message was addressed to this assistant"


async def route(ctx: TurnContext) -> Then:
    """Decide the agent; record the decision, a status chip on a change, a thinking entry."""
    assert ctx.conversation is not None
    previous = ctx.work.active_agent_id or ctx.conversation.current_agent
    supervisor = ctx.supervisor
    # while Hans plans, a message answers his questions or the plan: no keyword reroutes it
    planning = bool(ctx.conversation.metadata.get("planning"))
    if planning:
        decision = ctx.services.router.keep(previous, ANSWERS_THE_PLAN)
    elif ctx.rule_route is not None:
        chosen = ctx.rule_route
        decision = RoutingDecision(
            previous_agent_id=previous,
            agent_id=chosen.agent_id,
            rule_id=chosen.rule_id,
            matched=None,
            reason=chosen.reason,
        )
    elif ctx.work.addressed and ctx.work.active_agent_id is not None:
        decision = ctx.services.router.keep(previous, ADDRESSED)
    elif ctx.triage().plan:  # a change to plan: Hans keeps the turn and plans it
        decision = RoutingDecision(
            previous_agent_id=previous,
            agent_id=supervisor.id,
            rule_id=None,
            matched=None,
            reason=PLANS_IT,
        )
    else:
        router = ctx.services.router
        if router.linear:  # keywords only: the hop to a thread would cost more than them
            decision = router.decide(ctx.user_text, previous)
        else:  # a pattern from the config runs on a worker thread, never on the loop
            decision = await anyio.to_thread.run_sync(router.decide, ctx.user_text, previous)
    agent = await ctx.services.agents.find(ctx.tenant_id, decision.agent_id)
    if agent is None:  # a registered agent removed since it was chosen: Hans answers, and says so
        decision = RoutingDecision(
            previous_agent_id=decision.previous_agent_id,
            agent_id=supervisor.id,
            rule_id=None,
            matched=None,
            reason=f"agent {decision.agent_id} is no longer available",
        )
        agent = supervisor
    ctx.decision, ctx.agent = decision, agent

    batch = ctx.batch()
    batch.event(event.SessionData(message_id=ctx.message_id), agent_id=supervisor.id)
    batch.event(
        event.RoutingData(
            previous_agent_id=decision.previous_agent_id,
            agent_id=decision.agent_id,
            rule_id=decision.rule_id,
            matched=decision.matched,
            reason=decision.reason,
        ),
        agent_id=supervisor.id,
    )
    if decision.changed and agent.id != supervisor.id:
        batch.status(thinking.handoff_status(supervisor, agent), agent_id=supervisor.id)
    entry = (
        thinking.plan_answer_entry(supervisor)
        if planning
        else thinking.routing_entry(supervisor, agent, decision)
    )
    batch.thinking(entry, agent_id=supervisor.id, phase=message.Phase.ROUTING)
    batch.then(answering(ctx, agent.id))
    if forward_to_outside(ctx, agent):
        return Then.FINALIZE
    return Then.NEXT


def forward_to_outside(ctx: TurnContext, agent: AgentDefinition) -> bool:
    """An external assistant with a message webhook answers on its own: the message is
    POSTed to it (``engine/webhooks/agent_messages.py``), a status says so, and the turn
    ends here; False (nothing done) for any other agent."""
    assert ctx.conversation is not None
    said = [m for m in ctx.history if m.id == ctx.work.message_id]
    user = ctx.conversation.user or {}
    body = agent_messages.addressed(
        message_id=ctx.work.message_id,
        conversation_id=ctx.conversation_id,
        tenant_id=ctx.tenant_id,
        turn_id=ctx.turn_id,
        agent_id=agent.id,
        content=ctx.user_text,
        sender=str(user.get("id") or "user"),
        at=said[0].created_at if said else ctx.services.clock(),
        received=said[0].metadata.get("webhook") if said else None,
    )
    batch = ctx.batch()
    if not agent_messages.forward(batch, ctx.services, ctx.tenant_id, agent, body):
        return False
    batch.status(f"{agent.display_name} is answering this message", agent_id=ctx.supervisor.id)
    return True


def answering(ctx: TurnContext, agent_id: str) -> Callable[[Connection], None]:
    """The step that gives the turn to ``agent_id``: the conversation is ``ai_active`` with
    it as the current agent, the turn running under it."""
    now = ctx.services.clock()

    def answer(conn: Connection) -> None:
        conversations.move(
            conn,
            ctx.tenant_id,
            ctx.conversation_id,
            conversation.State.AI_ACTIVE,
            now,
            current_agent=agent_id,
        )
        turns.set_status(
            conn, ctx.tenant_id, ctx.turn_id, turn.TurnStatus.RUNNING, now, agent_id=agent_id
        )

    return answer
