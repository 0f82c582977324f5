"""The turn pipeline (seed 003): a per-turn context object and small stages.

validate -> route -> build context -> agent reply -> finalize. Streaming and
non-streaming callers share this one path: it writes events, and callers
either follow them live or wait for the ``done``.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection

from hansa import errors
from hansa.domain.agent import AgentDefinition
from hansa.domain.base import new_id
from hansa.domain.conversation import Conversation
from hansa.domain.job import Job
from hansa.domain.llm_call import LlmCall
from hansa.domain.message import Message
from hansa.domain.project import ProjectContext
from hansa.domain.routing import RoutingDecision
from hansa.engine.llm import RecordedCall
from hansa.engine.runtime.recorder import Batch, Extra, Recorder
from hansa.engine.runtime.services import Services
from hansa.models.base import ChatMessage

log = logging.getLogger(__name__)


@dataclass
class TurnContext:
    """Everything one turn knows; never shared between turns."""

    services: Services
    job: Job
    tenant_id: str
    turn_id: str
    conversation_id: str
    message_id: str
    active_agent_id: str | None
    request_context: dict[str, Any] | None
    recorder: Recorder
    conversation: Conversation | None = None
    user_text: str = ""
    decision: RoutingDecision | None = None
    agent: AgentDefinition | None = None
    project_context: ProjectContext | None = None
    history: list[Message] = field(default_factory=list)
    """Recent user and assistant messages, loaded with the conversation."""
    prompt: list[ChatMessage] = field(default_factory=list)
    reply_message_id: str = field(default_factory=new_id)
    reply_text: str = ""
    call: RecordedCall | None = None
    answered: bool = False
    """Set by a stage that settled the turn without an agent reply; later stages skip."""
    error: Exception | None = None
    planned: Extra | None = None
    """The planning stage's run creation, run in the next flush's transaction."""
    created_run: str | None = None
    refusal: str | None = None
    """Why the laws refused the plan, in words for the user."""
    planner_calls: list[LlmCall] = field(default_factory=list)
    """Model calls of the planner, stored with the turn's end."""
    approve_run: str | None = None
    cancel_run: str | None = None
    pending: Batch | None = None
    pending_extras: list[Extra] = field(default_factory=list)

    @property
    def supervisor(self) -> AgentDefinition:
        """Hans."""
        return self.services.roster[0]

    def batch(self) -> Batch:
        """The batch of not-yet-written entries of this turn (created on first use)."""
        if self.pending is None:
            self.pending = Batch(self.conversation_id, self.turn_id)
        return self.pending

    def also(self, extra: Extra) -> None:
        """Write ``extra`` in the same transaction as the pending batch."""
        self.pending_extras.append(extra)

    async def flush(self, *, then: Extra | None = None) -> None:
        """Commit the pending batch and extras (and ``then``) in one transaction."""
        batch = self.pending or Batch(self.conversation_id, self.turn_id)
        extras = [*self.pending_extras, *([then] if then else [])]
        self.pending, self.pending_extras = None, []

        def run_extras(conn: Connection) -> None:
            for extra in extras:
                extra(conn)

        prepare, self.planned = self.planned, None
        await self.recorder.write(batch, run_extras, prepare=prepare)


Stage = Callable[[TurnContext], Awaitable[None]]


async def run_pipeline(ctx: TurnContext, stages: tuple[Stage, ...], on_error: Stage) -> None:
    """Run ``stages`` in order; any failure goes to ``on_error`` (a lost lease to nobody)."""
    try:
        for stage in stages:
            await stage(ctx)
    except errors.StaleLease:
        log.warning("turn %s lost its lease; another worker owns it now", ctx.turn_id)
    except Exception as exc:  # the turn fails, the server stays healthy
        log.exception("turn %s failed", ctx.turn_id)
        ctx.pending, ctx.pending_extras = None, []
        ctx.error = exc
        await on_error(ctx)
