"""Rules, prompt graphs and agent sessions."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import model_validator

from hansa.api.models.base import Masked, Out
from hansa.domain.base import Wire
from hansa.domain.graph import Graph
from hansa.domain.rules import Firing, RecordedFiring, Rule
from hansa.domain.session import AgentSession, SessionStatus, SessionStep


class RuleOut(Rule):
    """A rule, with when it last fired (null: never, or a config rule, whose firings are not
    kept)."""

    last_fired_at: datetime | None


class RuleTestResult(Wire):
    """``POST /api/rules/test``: what would have fired; nothing was written."""

    firings: list[Firing]


class SessionOut(Out):
    """An agent session (seed 004); its ``state`` masked where it names a secret."""

    id: str
    agent_id: str
    conversation_id: str
    goal: str
    status: SessionStatus
    iteration: int
    step: int
    """The steps recorded (as ``iteration``)."""
    next_step: str
    """The cursor the next step starts from."""
    state: Masked
    """The agent's own state."""
    guidance: str | None
    max_steps: int
    max_runtime_seconds: float | None
    next_run_at: datetime | None
    every_seconds: float | None
    reason: str | None
    created_at: datetime
    updated_at: datetime

    @model_validator(mode="before")
    @classmethod
    def _counted(cls, data: Any) -> Any:
        """API.md's ``step`` counts the steps recorded (a session's ``iteration``);
        ``nextStep`` is the session's ``step``, where the next one starts."""
        if isinstance(data, AgentSession):
            return {**data.model_dump(), "step": data.iteration, "next_step": data.step}
        return data


class SessionStepOut(SessionStep, Out):
    """A recorded step of a session; the secrets its state names show as ``***``."""

    state: Masked


__all__ = [
    "Graph",
    "RecordedFiring",
    "RuleOut",
    "RuleTestResult",
    "SessionOut",
    "SessionStep",
    "SessionStepOut",
]
