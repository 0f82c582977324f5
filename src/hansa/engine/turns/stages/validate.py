"""Stage 1 of 6: load the conversation and the user's message; check the turn may run."""

from __future__ import annotations

from sqlalchemy import Connection

from hansa import errors
from hansa.domain import conversation, message
from hansa.engine.turns.pipeline import Then, TurnContext
from hansa.store import conversations, messages, summaries

_USER = message.Kind.USER
_HISTORY_KINDS = (message.Kind.USER, message.Kind.ASSISTANT)
_HUMAN_STATES = (conversation.State.HANDOFF_PENDING, conversation.State.AGENT_ACTIVE)


async def validate(ctx: TurnContext) -> Then:
    """Load what the turn needs; a conversation held by a human gets no AI reply."""

    last = ctx.services.settings.prompt_max_messages + 1

    def load(conn: Connection) -> tuple[conversation.Conversation, list[message.Message]]:
        convo = conversations.get(conn, ctx.tenant_id, ctx.conversation_id)
        # the rolling summary and the messages after it, for the prompt later; they
        # normally hold this turn's message
        ctx.summary = summaries.latest(conn, ctx.tenant_id, ctx.conversation_id)
        after = ctx.summary.covered_through_seq if ctx.summary is not None else 0
        if ctx.summary is not None and ctx.summary.facts.kept_message_ids:
            ctx.kept = messages.by_ids(
                conn, ctx.tenant_id, ctx.conversation_id, ctx.summary.facts.kept_message_ids
            )
        ctx.history, ctx.history_total = messages.newest_after(
            conn, ctx.tenant_id, ctx.conversation_id, after, _HISTORY_KINDS, last
        )
        found = [m for m in ctx.history if m.turn_id == ctx.turn_id and m.kind is _USER]
        if not found:  # newer messages are already queued behind this one
            found = messages.list_for(
                conn, ctx.tenant_id, ctx.conversation_id, turn_id=ctx.turn_id, kinds=(_USER,)
            )
        return convo, found

    convo, found = await ctx.services.db.read(load)
    ctx.conversation = convo
    if not found:
        raise errors.NotFound(f"the message of turn {ctx.turn_id} is missing")
    ctx.user_text = found[0].content
    if convo.state in _HUMAN_STATES:
        ctx.batch().status(
            "A human agent has this conversation; the assistants stay quiet",
            agent_id=ctx.supervisor.id,
        )
        return Then.FINALIZE
    if convo.state is conversation.State.ARCHIVED:
        raise errors.Conflict("this conversation is archived")
    return Then.NEXT
