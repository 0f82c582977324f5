"""What the planning protocol gets from the turn that plans, and what it hands back."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from sqlalchemy import Connection

from hansa.domain import conversation, message
from hansa.domain.agent import AgentDefinition
from hansa.domain.llm_call import LlmCall
from hansa.domain.plan import PlanningState
from hansa.domain.project import ProjectContext
from hansa.engine.runtime.recorder import Batch
from hansa.engine.runtime.services import Services
from hansa.store import conversations


class Speak(Protocol):
    """Adds an assistant message said whole to a batch as streamed text reaches a client:
    its ``text_delta`` events, then the message under the same id (the turn passes
    ``turns/deltas.py``'s ``say_whole``, the path a reply's text takes); the message's id."""

    def __call__(
        self,
        batch: Batch,
        text: str,
        *,
        agent_id: str,
        max_chars: int,
        metadata: dict[str, Any] | None = None,
    ) -> str: ...


@dataclass
class PlanningRequest:
    """One user message that Hans plans with: its words, the project, and the turn's batch."""

    services: Services
    tenant_id: str
    conversation_id: str
    turn_id: str
    text: str
    project: ProjectContext
    batch: Batch
    """The turn's pending batch: what the protocol says, thinks and changes commits with it."""
    speak: Speak
    """How Hans's messages stream (``say``)."""
    flush: Callable[[], Awaitable[None]]
    """Commits the turn's pending batch now (it stays the turn's, emptied): for what the
    user should see while the planner waits on a model."""
    calls: list[LlmCall] = field(default_factory=list)
    """Model calls made while planning, stored with the turn's end."""

    @property
    def supervisor(self) -> AgentDefinition:
        """Hans, who plans."""
        return self.services.supervisor

    def say(self, text: str, **metadata: Any) -> None:
        """Hans's answer to the user: it streams as a reply's text does (``text_delta``
        events under the message's id, then the message), in the turn's transaction."""
        self.say_in(self.batch, text, **metadata)

    def say_in(self, batch: Batch, text: str, **metadata: Any) -> None:
        """``say`` into ``batch``: a step's, whose events name its run."""
        self.speak(
            batch,
            text,
            agent_id=self.supervisor.id,
            max_chars=self.services.settings.delta_flush_chars,
            metadata=metadata,
        )

    def think(self, text: str) -> None:
        """A planning thinking entry, written from a template."""
        self.batch.thinking(text, agent_id=self.supervisor.id, phase=message.Phase.PLANNING)

    def remember(self, conn: Connection, state: PlanningState | None, *, waiting: bool) -> None:
        """Keep (or drop) the plan between turns; the conversation waits for the user or not."""
        now = self.services.clock()
        target = conversation.State.WAITING_FOR_USER if waiting else conversation.State.AI_ACTIVE
        stored = state.model_dump(mode="json", by_alias=True) if state is not None else None
        conversations.set_planning(conn, self.tenant_id, self.conversation_id, stored, now)
        conversations.move(conn, self.tenant_id, self.conversation_id, target, now)

    def remember_later(self, state: PlanningState | None, *, waiting: bool) -> None:
        """``remember`` in the turn's transaction."""
        self.batch.then(lambda conn: self.remember(conn, state, waiting=waiting))


@dataclass(frozen=True)
class NotAPlan:
    """The request needs no run (or no plan could be drafted): the agent answers."""


@dataclass(frozen=True)
class Asked:
    """Hans asked for what is missing (or how to go on); the conversation waits."""


@dataclass(frozen=True)
class Planned:
    """The plan is shown and stored as a run awaiting approval (or refused by the laws,
    which Hans says in the same transaction)."""

    run_id: str


@dataclass(frozen=True)
class Adjusted:
    """The user changed a plan awaiting approval: that run is cancelled and the new plan
    is asked about or shown."""

    replaced_run_id: str
    then: Asked | Planned


@dataclass(frozen=True)
class Approved:
    """The user approved the plan: its run starts in the turn's transaction."""

    run_id: str


@dataclass(frozen=True)
class Cancelled:
    """The user dropped the plan; its run, if one was stored, is cancelled."""

    run_id: str | None


@dataclass(frozen=True)
class Undo:
    """The user confirmed Hans's offer to undo a run: it is rolled back as on its card."""

    run_id: str


Outcome = NotAPlan | Asked | Planned | Adjusted | Approved | Cancelled | Undo
"""What planning decided for this turn."""
