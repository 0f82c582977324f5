"""Stage 6, for an agent with a default graph: the graph answers instead of the model.

The graph's run starts in the turn's transaction, its templates given the turn's facts
(``message``, ``context``, ``user``, ``project``, as rules see them); the turn's answer
says that it runs, and the graph's own nodes say the rest. A graph the conversation's
tenant does not have fails the turn (404 ``not_found``, named in the turn's error).
"""

from __future__ import annotations

from hansa.domain import message
from hansa.engine.graphs import start
from hansa.engine.triggers.fire import facts_of
from hansa.engine.turns.pipeline import Then, TurnContext
from hansa.store import graphs as graph_rows


async def graph_reply(ctx: TurnContext) -> Then:
    """Start the agent's default graph on the user's message."""
    agent, convo = ctx.agent, ctx.conversation
    assert agent is not None and agent.default_graph_id is not None and convo is not None
    tenant, graph_id = ctx.tenant_id, agent.default_graph_id
    found = await ctx.services.db.read(lambda conn: graph_rows.get(conn, tenant, graph_id))
    said = {"id": ctx.message_id, "content": ctx.user_text, "author": "user"}
    request = start.GraphRunRequest(ctx.conversation_id, agent.id, facts_of(convo, message=said))
    batch = ctx.batch()
    start.starting(ctx.services, tenant, lambda conn: found, request, convo.project_id, batch)
    batch.thinking(
        f"{agent.display_name} answers with the graph “{found.name}” (v{found.version})",
        agent_id=agent.id,
        phase=message.Phase.REPLY,
    )
    ctx.reply_text = f"I am running “{found.name}” for this."
    batch.message(  # no model replied, so finalize writes no answer of its own
        message.Kind.ASSISTANT,
        message.Author.ASSISTANT,
        ctx.reply_text,
        agent_id=agent.id,
        message_id=ctx.reply_message_id,
        metadata={"graphId": found.id, "graphVersion": found.version},
    )
    return Then.FINALIZE
