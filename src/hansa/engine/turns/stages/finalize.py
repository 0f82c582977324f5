"""The end of a turn: the answer and ``done``; or, for a failed turn, the truth and ``done``."""

from __future__ import annotations

from sqlalchemy import Connection

from hansa import errors
from hansa.domain import conversation, event, job, message, turn
from hansa.domain.llm_call import LlmCall
from hansa.engine import context_packs, failures, rolling_summary, thinking
from hansa.engine.context_budget import Fitted
from hansa.engine.runtime.recorder import Batch
from hansa.engine.toolbox import ToolLoopLimit
from hansa.engine.turns import reconcile, summary_job
from hansa.engine.turns.pipeline import TurnContext
from hansa.models.base import Model
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
            usage = _usage(ctx, ctx.call.record, ctx.call.model, ctx.fitted)
            batch.event(usage, agent_id=ctx.agent.id)
        batch.then(lambda conn: _summarize_if_due(ctx, batch, conn))
        reconcile.at_turn_end(ctx, batch)  # the agent's state, within its share of the window
    elif ctx.planner_calls:  # Hans planned (or read answers) with his model: what it used
        model = ctx.services.model_for(ctx.supervisor, ctx.project_context)
        answered = [c for c in ctx.planner_calls if c.success] or ctx.planner_calls
        usage = _usage(ctx, answered[-1], model, None)
        batch.event(usage, agent_id=ctx.supervisor.id)
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
        text = failures.message(agent, exc)
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


def _usage(
    ctx: TurnContext, record: LlmCall, model: Model, fitted: Fitted | None
) -> event.ContextUsageData:
    """How much of the window the turn's last call used (the reply's; else the planner's),
    and how the reply's first prompt was fitted (a planner's prompt is not: no sections)."""
    return event.ContextUsageData(
        prompt_tokens=record.prompt_tokens,
        completion_tokens=record.completion_tokens,
        context_window=fitted.window if fitted is not None else model.context_window,
        estimate=context_packs.TOKEN_ESTIMATE,
        sections=fitted.sections if fitted is not None else {},
        budgets=fitted.budgets if fitted is not None else {},
        dropped=fitted.dropped if fitted is not None else [],
        summary_version=ctx.summary.version if ctx.summary is not None else None,
    )


def _summarize_if_due(ctx: TurnContext, batch: Batch, conn: Connection) -> None:
    """Queue the conversation's summary job when the history after the summary (with this
    turn's answer) passed its budget, unless one is queued or running already."""
    limits = rolling_summary.Thresholds.of(ctx.services.settings)
    total = ctx.history_total + 1  # the answer written with this
    chars = sum(len(m.content) for m in ctx.history) + len(ctx.reply_text)
    fitted = ctx.fitted
    # the next prompt's history: this one's, this turn's message and its answer
    this_turn = sum(
        context_packs.estimate_tokens(t) + context_packs.MESSAGE_TOKENS
        for t in (ctx.user_text, ctx.reply_text)
    )
    overflow = fitted is not None and (
        fitted.history_overflow
        or rolling_summary.nearly_full(
            fitted.sections.get("history", 0) + fitted.sections.get("kept", 0) + this_turn,
            fitted.budgets.get("history", 0),
            ctx.services.settings.summary_before_share,
        )
    )
    if not rolling_summary.needs_summary(total, chars, limits, overflow):
        return
    key = summary_job.key_of(ctx.conversation_id)
    if queue.live_statuses(conn, key):
        return
    budget = ctx.fitted.budgets.get("history", 0) if ctx.fitted is not None else 0
    work = job.ConversationSummaryJob(conversation_id=ctx.conversation_id, history_tokens=budget)
    now = ctx.services.clock()
    queue.enqueue(
        conn, ctx.tenant_id, job.JobKind.CONVERSATION_SUMMARY, job.payload(work), now, key=key
    )


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
