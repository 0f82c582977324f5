"""Stage 5 of 6: triage, and the planning protocol for requests that need a run.

Planning returns what it decided (``planning.request.Outcome``); this stage turns
that into the turn's next step: the agent replies (not a plan), or the turn ends
with the plan's messages, and an approval or a cancellation runs in the same
transaction, fenced by the turn's job. A request for ongoing work ends the turn with
an agent session started in its transaction (seed 004).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import assert_never

from hansa import errors
from hansa.domain import message
from hansa.domain.plan import Plan, PlanningState
from hansa.engine import runs
from hansa.engine.planning import deliverables, protocol, undoing, updates
from hansa.engine.planning.llm_planner import draft_plan
from hansa.engine.planning.request import (
    Adjusted,
    Approved,
    Asked,
    Cancelled,
    NotAPlan,
    Outcome,
    Planned,
    PlanningRequest,
    Undo,
)
from hansa.engine.planning.triage import Cadence, Triage
from hansa.engine.sessions import service as sessions
from hansa.engine.turns import deltas
from hansa.engine.turns.pipeline import Then, TurnContext
from hansa.engine.turns.stages.workspace_agent import hand_to_workspace_agent


async def plan(ctx: TurnContext) -> Then:
    """Answer simply, or plan: ask what is missing, show the plan, start it when approved."""
    assert ctx.conversation is not None and ctx.project_context is not None
    req = PlanningRequest(
        services=ctx.services,
        tenant_id=ctx.tenant_id,
        conversation_id=ctx.conversation_id,
        turn_id=ctx.turn_id,
        text=ctx.user_text,
        project=ctx.project_context,
        batch=ctx.batch(),
        speak=deltas.say_whole,
        flush=ctx.flush,
        calls=ctx.planner_calls,
    )
    outcome, decision = await _decide(req, ctx.conversation.planning, ctx.triage)
    batch = req.batch
    match outcome:
        case NotAPlan():
            if decision is not None and decision.ongoing is not None:
                _take_on(ctx, decision.ongoing)
                await ctx.flush()
                return Then.FINALIZE
            if decision is not None and decision.workspace:
                hand_to_workspace_agent(ctx)
            return Then.NEXT
        case Asked() | Planned():
            pass
        case Adjusted(replaced_run_id=replaced):
            batch.then(runs.cancelling(ctx.services, ctx.tenant_id, replaced, batch))
        case Approved(run_id=run_id):
            batch.then(runs.approving(ctx.services, ctx.tenant_id, run_id, batch))
        case Cancelled(run_id=run_id):
            if run_id is not None:
                batch.then(runs.cancelling(ctx.services, ctx.tenant_id, run_id, batch))
        case Undo(run_id=run_id):  # the run card's rollback, confirmed in the chat
            await ctx.flush()
            try:
                await runs.rollback(ctx.services, ctx.tenant_id, run_id)
            except runs.UndoFailed:
                pass  # the rollback's own summary says what could not be undone
            except errors.Conflict as exc:  # not undoable (any more), or an undo under way
                req.say(undoing.refused(exc.message), planning="undo", runId=run_id)
        case _:
            assert_never(outcome)
    await ctx.flush()  # the plan's steps add events: they must come before ``done``
    return Then.FINALIZE


async def _decide(
    req: PlanningRequest, state: PlanningState | None, sort: Callable[[], Triage]
) -> tuple[Outcome, Triage | None]:
    if undoing.waiting(state):
        assert state is not None
        answered = undoing.answer(req, state)
        if answered is not None:
            return answered, None
        state = None  # not an answer to the undo: the offer lapses, this is a new request
    if state is not None:
        return await protocol.proceed(req, state), None
    decision = sort()
    hans = req.supervisor
    req.batch.thinking(
        f"{hans.display_name} chose a {decision.reason}",
        agent_id=hans.id,
        phase=message.Phase.TRIAGE,
    )
    if not decision.plan:
        return NotAPlan(), decision
    if decision.undo:
        return await undoing.offer(req), decision
    if decision.target is not None:  # a change of a thing the project has: found first
        return await updates.start(req, decision), decision
    if decision.playbook is not None:
        return await protocol.start(req, decision), decision
    drafted = _parts(req, decision) or await draft_plan(req)
    if drafted is None:  # a change nobody may simply answer about: Hans asks what it is
        return protocol.ask_kind(req, decision), decision
    plan_state = PlanningState(plan=drafted, intent=drafted.intent)
    return await protocol.go(req, None, plan_state), decision


def _parts(req: PlanningRequest, decision: Triage) -> Plan | None:
    """The plan with a step per deliverable the request names, on its agent; None if it
    names none (or fewer than two agents can take theirs)."""
    if not decision.deliverables:
        return None
    agents = req.services.agents.built_ins
    placed = ", ".join(
        f"{agents[d.agent_id].display_name} ({d.word})"
        for d in decision.deliverables
        if d.agent_id in agents
    )
    req.think(f"{req.supervisor.display_name} is giving each deliverable to its agent: {placed}")
    project = req.project
    return deliverables.plan(
        decision.deliverables,
        req.text,
        req.services.agents.built_ins,
        req.services.registry,
        project.project_name or "your project",
        project.project_id,
    )


def _take_on(ctx: TurnContext, cadence: Cadence) -> None:
    """Start a session of the routed agent on the request, in this conversation, checking
    in at ``cadence``; the turn says so."""
    agent = ctx.agent or ctx.supervisor
    batch = ctx.batch()
    new = sessions.NewSession(
        agent_id=agent.id,
        goal=ctx.user_text[:4000],
        conversation_id=ctx.conversation_id,
        every_seconds=cadence.seconds,
    )
    session = sessions.opening(ctx.services, ctx.tenant_id, new, batch, ctx.conversation_id)
    deltas.say_whole(
        batch,
        f"{agent.display_name} will keep an eye on this and check in {cadence.words}, "
        "starting now. You can pause, guide or stop this work from Sessions.",
        agent_id=agent.id,
        max_chars=ctx.services.settings.delta_flush_chars,
        metadata={"sessionId": session.id},
    )
