"""Stage 6 of 6: the chosen agent answers, streaming text deltas as they come."""

from __future__ import annotations

from hansa.domain import event, message
from hansa.engine import thinking
from hansa.engine.llm import CallScope, RecordedCall
from hansa.engine.runtime.faults import crash_point
from hansa.engine.runtime.recorder import Batch
from hansa.engine.turns.deltas import DeltaCoalescer
from hansa.engine.turns.pipeline import Then, TurnContext
from hansa.models.base import ModelSettings, RequestParams


async def reply(ctx: TurnContext) -> Then:
    """Stream the agent's answer; deltas are coalesced before they are stored."""
    assert ctx.agent is not None
    agent = ctx.agent
    ctx.batch().thinking(
        thinking.drafting_entry(agent), agent_id=agent.id, phase=message.Phase.REPLY
    )
    await ctx.flush()
    crash_point(ctx.services.settings, "turn.after_route")

    settings = ctx.services.settings

    async def write_delta(text: str) -> None:
        batch = Batch(ctx.conversation_id, ctx.turn_id)
        batch.event(
            event.TextDeltaData(message_id=ctx.reply_message_id, delta=text), agent_id=agent.id
        )
        await ctx.recorder.write(batch)

    coalescer = DeltaCoalescer(
        write_delta, max_chars=settings.delta_flush_chars, max_age=settings.delta_flush_ms / 1000
    )
    scope = CallScope(
        tenant_id=ctx.tenant_id,
        conversation_id=ctx.conversation_id,
        turn_id=ctx.turn_id,
        node_id="reply",
        agent_id=agent.id,
    )
    model = ctx.services.model_for(agent, ctx.project_context)
    ctx.call = RecordedCall(model, scope, ctx.services.clock)
    model_settings = ModelSettings(
        temperature=agent.model_settings.temperature, max_tokens=agent.model_settings.max_tokens
    )
    parts: list[str] = []
    try:
        async for delta in ctx.call.stream(ctx.prompt, model_settings, RequestParams()):
            parts.append(delta)
            await coalescer.add(delta)
    finally:
        rest = await coalescer.take()
    if rest:
        ctx.batch().event(
            event.TextDeltaData(message_id=ctx.reply_message_id, delta=rest), agent_id=agent.id
        )
    ctx.reply_text = "".join(parts).strip()
    return Then.FINALIZE
