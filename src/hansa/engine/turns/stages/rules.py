"""Stage 2 of 6: the tenant's ``message.received`` rules, evaluated and acted on.

Runs only when the tenant has such rules (a conversation without rules sees no
``rule_evaluated`` event). A ``route`` action chooses the agent for the next stage; a
handoff or a move to a state where no assistant answers ends the turn here.
"""

from __future__ import annotations

from hansa.domain.rules import Trigger
from hansa.engine.triggers import actions
from hansa.engine.triggers.fire import facts_of, fire
from hansa.engine.turns.pipeline import Then, TurnContext
from hansa.store import rules as rule_rows

TRIGGER: Trigger = "message.received"


async def rules(ctx: TurnContext) -> Then:
    """Evaluate the rules for this message, record the evaluation, apply the actions."""
    convo = ctx.conversation
    assert convo is not None
    found = await ctx.services.db.read(
        rule_rows.for_trigger, ctx.tenant_id, TRIGGER, convo.project_id
    )
    if not found:
        return Then.NEXT
    message = {"id": ctx.message_id, "content": ctx.user_text, "author": "user"}
    scene = actions.Scene(
        ctx.services, ctx.tenant_id, ctx.conversation_id, convo.project_id, ctx.batch()
    )
    applied = fire(scene, found, TRIGGER, facts_of(convo, message=message))
    ctx.rule_route = applied.route
    if not applied.ends_turn:
        return Then.NEXT
    await ctx.flush()  # the actions' steps add events (a handoff's): they come before ``done``
    return Then.FINALIZE
