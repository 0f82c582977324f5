"""The end of a turn: the answer and ``done``; or, for a failed turn, the truth and ``done``."""

from __future__ import annotations

from sqlalchemy import Connection

from hansa import errors
from hansa.domain import conversation, event, message, turn
from hansa.engine import thinking
from hansa.engine.turns.agent_loop import ToolLoopLimit
from hansa.engine.turns.pipeline import TurnContext
from hansa.store import conversations, llm_calls, queue, turns


async def finalize(ctx: TurnContext) -> None:
    """The assistant message, usage, ``done``, and every state change, in one transaction."""
    batch = ctx.batch()
    if ctx.agent is not None and ctx.call is not None:  # an agent replied
        batch.message(
            message.Kind.ASSISTANT,
            message.Author.ASSISTANT,
            ctx.reply_text or "(no answer)",
            agent_id=ctx.agent.id,
            message_id=ctx.reply_message_id,
        )
        if ctx.call.record is not None:
            rec = ctx.call.record
            batch.event(
                event.ContextUsageData(
                    prompt_tokens=rec.prompt_tokens, completion_tokens=rec.completion_tokens
                ),
                agent_id=ctx.agent.id,
            )
    batch.event(event.DoneData(status="completed"), agent_id=ctx.supervisor.id)
    batch.then(lambda conn: _close(ctx, conn, turn.TurnStatus.COMPLETED, None))
    await ctx.flush()


async def fail(ctx: TurnContext) -> None:
    """Say what went wrong in plain words, emit ``error`` then ``done``, free the conversation."""
    exc = ctx.error
    code = exc.code if isinstance(exc, errors.HansaError) else "internal_error"
    agent = ctx.agent or ctx.supervisor
    if isinstance(exc, ToolLoopLimit):
        text = thinking.tool_loop_message(agent, exc.rounds)
    else:
        text = thinking.failure_message(agent)
    batch = ctx.batch()
    batch.message(
        message.Kind.ASSISTANT,
        message.Author.ASSISTANT,
        text,
        agent_id=agent.id,
        metadata={"error": code},
    )
    batch.event(event.ErrorData(code=code, message=text), agent_id=agent.id)
    batch.event(event.DoneData(status="failed"), agent_id=ctx.supervisor.id)
    detail = f"{type(exc).__name__}: {exc}" if exc else "unknown error"
    batch.then(lambda conn: _close(ctx, conn, turn.TurnStatus.FAILED, detail))
    await ctx.flush()


def _close(ctx: TurnContext, conn: Connection, status: turn.TurnStatus, error: str | None) -> None:
    now = ctx.services.clock()
    for record in (*ctx.planner_calls, *ctx.reply_calls):
        llm_calls.record(conn, record)
    turns.set_status(conn, ctx.tenant_id, ctx.turn_id, status, now, error=error)
    conversations.move(
        conn,
        ctx.tenant_id,
        ctx.conversation_id,
        conversation.State.IDLE,
        now,
        strict=False,
        only_from=(conversation.State.AI_ACTIVE,),
    )
    queue.finish(conn, ctx.job, now, error=error)
