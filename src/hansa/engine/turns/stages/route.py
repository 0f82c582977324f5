"""Stage 3 of 6: the supervisor routes the message and records why (seed 000 §5)."""

from __future__ import annotations

from collections.abc import Callable

import anyio.to_thread
from sqlalchemy import Connection

from hansa.domain import conversation, event, message, turn
from hansa.domain.routing import RoutingDecision
from hansa.engine import thinking
from hansa.engine.turns.pipeline import Then, TurnContext
from hansa.store import conversations, turns

ANSWERS_THE_PLAN = "the message answers the supervisor's planning questions or plan"
PLANS_IT = "a change to plan: the supervisor plans it himself"


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
    return Then.NEXT


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
