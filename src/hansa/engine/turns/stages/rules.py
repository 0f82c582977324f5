"""Stage 2 of 6: the tenant's ``message.received`` rules, evaluated and acted on, and the
claim/defer turn-taking their ``route`` actions start.

Runs only when the tenant has such rules (a conversation without rules sees no
``rule_evaluated`` event) or the conversation has external participants. Matching
``route`` actions claim the message; with external participants the claim window stays
open for their claims; one claim responds (a local winner answers through the next
stages, an external one answers on its own and the turn ends). A handoff, or a move to a
state where no assistant answers, ends the turn here.
"""

from __future__ import annotations

from datetime import timedelta

from hansa.domain.rules import Trigger
from hansa.engine.triggers import actions, claims
from hansa.engine.triggers.fire import evaluated, facts_of, fire
from hansa.engine.turns.pipeline import Then, TurnContext
from hansa.engine.turns.stages.route import forward_to_outside
from hansa.store import rules as rule_rows

TRIGGER: Trigger = "message.received"


async def rules(ctx: TurnContext) -> Then:
    """Evaluate the rules for this message, record the evaluation, apply the actions,
    resolve the claims."""
    convo = ctx.conversation
    assert convo is not None
    services = ctx.services
    found = await services.db.read(rule_rows.for_trigger, ctx.tenant_id, TRIGGER, convo.project_id)
    external = claims.external_participants(services, convo)
    if not found and not external:
        return Then.NEXT
    message = {"id": ctx.message_id, "content": ctx.user_text, "author": "user"}
    scene = actions.Scene(
        services, ctx.tenant_id, ctx.conversation_id, convo.project_id, ctx.batch()
    )
    facts = facts_of(convo, message=message)
    evaluation = await evaluated(services, found, TRIGGER, facts)  # off the event loop
    firings, applied = fire(scene, found, TRIGGER, facts, evaluation)
    if applied.ends_turn:
        await ctx.flush()  # the actions' steps add events (a handoff's): they come before ``done``
        return Then.FINALIZE
    now = services.clock()
    window = timedelta(milliseconds=services.settings.claim_window_ms)
    local = claims.local_claims(firings, now, window)
    hans = services.supervisor.id
    claims.announce(scene.batch, local, hans)
    everyone = local
    if external:
        claims.set_window(scene, ctx.turn_id, now + window)
        await ctx.flush()  # the claims and the open window, for external claimants
        await claims.wait_window(now + window, services)
        scene = actions.Scene(
            services, ctx.tenant_id, ctx.conversation_id, convo.project_id, ctx.batch()
        )
        claims.set_window(scene, ctx.turn_id, None)
        await ctx.flush()  # closed: a claim either committed before this, or gets 409
        everyone = await claims.turn_claims(
            services, ctx.tenant_id, ctx.conversation_id, ctx.turn_id, convo.last_seq
        )
        scene = actions.Scene(
            services, ctx.tenant_id, ctx.conversation_id, convo.project_id, ctx.batch()
        )
    if not everyone:
        ctx.rule_route = applied.route
        return Then.NEXT
    participants = [
        str(p) for p in convo.metadata.get("participants") or [a.id for a in services.roster]
    ]
    resolved = claims.resolve(scene.batch, everyone, participants, hans)
    winner = resolved.winner
    if winner.external:
        outside = await services.agents.find(ctx.tenant_id, winner.assistant_key)
        if outside is None or not forward_to_outside(ctx, outside):  # it says so itself
            who = outside.display_name if outside is not None else winner.assistant_key
            scene.batch.status(f"{who} is answering this message", agent_id=hans)
        await ctx.flush()
        return Then.FINALIZE
    ctx.rule_route = actions.RouteTo(
        resolved.rule_id or "claim", winner.assistant_key, winner.justification.reason
    )
    return Then.NEXT
