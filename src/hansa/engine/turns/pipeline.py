"""The turn pipeline (seed 003): a per-turn context object and small stages.

validate -> rules -> route -> build context -> plan -> reply, then finalize. Each stage says
what happens next: ``Then.NEXT`` goes on to the next stage, ``Then.FINALIZE`` ends
the turn (a stage answered it), and an exception ends it through ``fail``.
Streaming and non-streaming callers share this one path: it writes events, and
callers either follow them live or wait for the ``done``.

A turn writes through one pending ``Batch`` (``ctx.batch()``): stages add messages,
events and steps (state changes) to it, and ``ctx.flush()`` commits all of it in
one transaction guarded by the turn's job.
"""

from __future__ import annotations

import asyncio
import enum
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from hansa import errors, tracing
from hansa.domain.agent import AgentDefinition
from hansa.domain.base import new_id
from hansa.domain.conversation import Conversation
from hansa.domain.job import Job, TurnJob
from hansa.domain.llm_call import LlmCall
from hansa.domain.message import Message
from hansa.domain.project import ProjectContext
from hansa.domain.routing import RoutingDecision
from hansa.domain.summary import ConversationSummary
from hansa.engine import llm, runs
from hansa.engine.context_budget import Fitted
from hansa.engine.planning.triage import Triage, triage
from hansa.engine.runtime.recorder import Batch, Recorder
from hansa.engine.runtime.services import Services
from hansa.engine.toolbox import Toolbox
from hansa.engine.triggers.actions import RouteTo
from hansa.models.base import ChatMessage

log = logging.getLogger(__name__)


class Then(enum.Enum):
    """What a stage decided comes next."""

    NEXT = "next"
    """Go on with the next stage."""
    FINALIZE = "finalize"
    """The turn is answered: skip to ``finalize``."""


@dataclass
class TurnContext:
    """Everything one turn knows; never shared between turns."""

    services: Services
    job: Job
    tenant_id: str
    work: TurnJob
    """What the turn's job says: the turn, its conversation and message, the caller's hints."""
    recorder: Recorder
    conversation: Conversation | None = None
    user_text: str = ""
    decision: RoutingDecision | None = None
    agent: AgentDefinition | None = None
    project_context: ProjectContext | None = None
    history: list[Message] = field(default_factory=list)
    """The user and assistant messages after the rolling summary (the newest
    ``prompt_max_messages`` of them), loaded with the conversation."""
    history_total: int = 0
    """How many messages there are after the summary in all (``history`` holds the newest)."""
    summary: ConversationSummary | None = None
    """The conversation's rolling summary, when it has one."""
    kept: list[Message] = field(default_factory=list)
    """The older messages the summary keeps word for word (a pasted document)."""
    fitted: Fitted | None = None
    """The prompt as fitted to the model's window, and what it left out (``context_usage``)."""
    prompt: list[ChatMessage] = field(default_factory=list)
    reply_message_id: str = field(default_factory=new_id)
    reply_text: str = ""
    call: llm.RecordedCall | None = None
    """The agent's last reply call; None when no agent replied (the turn was answered
    earlier)."""
    reply_calls: list[LlmCall] = field(default_factory=list)
    """Every model call of the reply (one per round of the agent loop, and those its tools
    made), stored with the turn's end."""
    error: Exception | None = None
    planner_calls: list[LlmCall] = field(default_factory=list)
    """Model calls of the planner, stored with the turn's end."""
    rule_route: RouteTo | None = None
    """A rule's ``route`` action: who answers instead of the routing rules' choice."""
    pending: Batch | None = None
    triaged: Triage | None = None
    """How the planner sorted the user's message (``triage``), once asked."""
    offered: Toolbox | None = None
    """The tools offered to the answering agent (``toolbox``), once asked."""

    @property
    def turn_id(self) -> str:
        """The turn's id."""
        return self.work.turn_id

    @property
    def conversation_id(self) -> str:
        """The conversation the turn answers in."""
        return self.work.conversation_id

    @property
    def message_id(self) -> str:
        """The user message the turn answers."""
        return self.work.message_id

    @property
    def request_context(self) -> dict[str, Any] | None:
        """Project context sent with the message."""
        return self.work.project_context

    @property
    def supervisor(self) -> AgentDefinition:
        """Hans."""
        return self.services.supervisor

    def triage(self) -> Triage:
        """How the planner sorts the user's message: plan it or not, and why (computed
        once a turn: routing and planning both ask)."""
        if self.triaged is None:
            self.triaged = triage(self.user_text, self.services.router.rules)
        return self.triaged

    def toolbox(self) -> Toolbox:
        """The tools the laws let the answering agent use in this project: made once per
        agent a turn (the context's budget counts them, the reply offers them)."""
        assert self.agent is not None and self.project_context is not None
        if self.offered is None or self.offered.agent is not self.agent:
            services = self.services
            trusted = runs.trusted_targets(services)
            self.offered = Toolbox(
                services.registry, self.agent, self.project_context, trusted=trusted
            )
        return self.offered

    def batch(self) -> Batch:
        """The batch of not-yet-written entries and steps of this turn (made on first use)."""
        if self.pending is None:
            self.pending = Batch(self.conversation_id, self.turn_id)
        return self.pending

    async def flush(self) -> None:
        """Commit the pending batch (its steps, messages and events) in one transaction.

        The batch stays the turn's, emptied: what holds it (a rule's ``Scene``, a
        ``PlanningRequest``) goes on adding to the turn's next transaction, never to a
        batch already written."""
        batch = self.batch()
        await self.recorder.write(batch)
        batch.items.clear()


Stage = Callable[[TurnContext], Awaitable[Then]]
End = Callable[[TurnContext], Awaitable[None]]


async def run_pipeline(
    ctx: TurnContext, stages: tuple[Stage, ...], finalize: End, fail: End
) -> None:
    """Run ``stages`` until one answers, then ``finalize``; any failure goes to ``fail``
    (a lost lease to nobody: another worker owns the turn now, or the turn was cancelled).

    A turn cut off (its lease lost, its task cancelled) never writes its end, with which
    its model calls were to be stored: they are stored on their own (``llm.keep``)."""
    try:
        await _run(ctx, stages, finalize, fail)
    except errors.StaleLease:
        log.warning("turn %s lost its lease; another worker owns it now", ctx.turn_id)
        await llm.keep(ctx.services.db, [*ctx.planner_calls, *ctx.reply_calls])
    except asyncio.CancelledError:
        await llm.keep(ctx.services.db, [*ctx.planner_calls, *ctx.reply_calls])
        raise


async def _run(ctx: TurnContext, stages: tuple[Stage, ...], finalize: End, fail: End) -> None:
    try:
        for stage in stages:
            with tracing.span(f"hansa.stage {stage.__name__}"):
                then = await stage(ctx)
            if then is Then.FINALIZE:
                break
        with tracing.span(f"hansa.stage {finalize.__name__}"):
            await finalize(ctx)
    except errors.StaleLease:
        raise
    except Exception as exc:  # the turn fails, the server stays healthy
        log.exception("turn %s failed", ctx.turn_id)
        ctx.pending = None
        ctx.error = exc
        await fail(ctx)
