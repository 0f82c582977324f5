"""Agent sessions (seed 004): an agent's step function called again and again on a goal.

Each step is one job. The engine hands the agent a frame ``{step, state, guidance?}`` and
gets back ``{nextStep, state, text?, data?, done, notes?, delaySeconds?}``; the step, the
session's new cursor and state, and the events saying so commit in one transaction, so
after a crash the next step is the one after the last recorded, never a repeat or a gap.
"""

from __future__ import annotations

import json
from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import Field, ValidationError

from hansa.domain.base import Wire

MAX_STEPS = 10_000
"""The most steps a session may be given (``maxSteps``)."""
DEFAULT_MAX_STEPS = 100
MAX_RUNTIME_SECONDS = 366 * 24 * 3600.0
"""The longest ``maxRuntimeSeconds`` (a year and a day)."""
MAX_STATE_BYTES = 64 * 1024
"""A session's state, as JSON, at most (a step answering more fails the session)."""
MAX_GUIDANCE_CHARS = 4000
MAX_TEXT_CHARS = 20_000
MAX_DELAY_SECONDS = 30 * 24 * 3600.0
"""The longest a step may put the next one off (``delaySeconds``)."""


class SessionStatus(StrEnum):
    """running -> paused -> running ...; -> stopped | completed | failed (final).

    A stop that lands while a step is in flight passes through ``stopping``: that step
    finishes and is recorded with what its tools did, then the session is ``stopped``
    (decision 0037). A stop with no step in flight stops at once.
    """

    RUNNING = "running"
    PAUSED = "paused"
    STOPPING = "stopping"
    STOPPED = "stopped"
    COMPLETED = "completed"
    FAILED = "failed"

    @property
    def final(self) -> bool:
        """Whether nothing more happens to a session in this status."""
        return self in (SessionStatus.STOPPED, SessionStatus.COMPLETED, SessionStatus.FAILED)


class AgentSession(Wire):
    """A session, as stored and as the API shows it."""

    id: str
    tenant_id: str = Field(exclude=True)
    agent_id: str
    conversation_id: str
    goal: str
    status: SessionStatus
    iteration: int
    """Steps recorded so far; the next step recorded is ``iteration + 1``."""
    step: str
    """The cursor the next step starts from (the last step's ``nextStep``)."""
    state: dict[str, Any]
    guidance: str | None
    """Guidance waiting for the next step (given to exactly that one)."""
    max_steps: int
    max_runtime_seconds: float | None
    next_run_at: datetime | None
    every_seconds: float | None = None
    """Ongoing work's cadence: the next step waits at least this long (a step may ask for
    longer with ``delaySeconds``)."""
    reason: str | None
    """Why the session ended, paused or is stopping (``done``, ``max_steps``,
    ``max_runtime``, ``stopped``, an error)."""
    created_at: datetime
    updated_at: datetime


class SessionStep(Wire):
    """One recorded step, append-only."""

    session_id: str
    iteration: int
    step: str
    next_step: str
    text: str | None
    data: dict[str, Any] | None
    done: bool
    notes: str | None
    guidance: str | None
    state: dict[str, Any]
    tools: list[dict[str, Any]] | None = None
    """The tools the step called, ``{name, ok, error?}`` each in order; None when none."""
    started_at: datetime
    finished_at: datetime


class FrameOut(Wire):
    """What a step answers."""

    next_step: str = Field(min_length=1, max_length=200)
    state: dict[str, Any] = Field(default_factory=dict)
    text: str | None = Field(default=None, max_length=MAX_TEXT_CHARS)
    data: dict[str, Any] | None = None
    done: bool = False
    notes: str | None = Field(default=None, max_length=2000)
    delay_seconds: float = Field(default=0.0, ge=0, le=MAX_DELAY_SECONDS)
    """Run the next step this much later (durably: a waiting session holds no worker)."""


FRAME_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "nextStep": {"type": "string"},
        "state": {"type": "object"},
        "text": {"type": "string"},
        "data": {"type": "object"},
        "done": {"type": "boolean"},
        "notes": {"type": "string"},
        "delaySeconds": {"type": "number"},
    },
    "required": ["nextStep", "state", "done"],
}
"""The JSON schema a model's answer to a step follows (structured output)."""


def following(step: str) -> str:
    """The cursor after ``step`` when an answer names none: a number counts on."""
    return str(int(step) + 1) if step.isdigit() else f"{step}+1"


def parse_frame(answer: str, step: str, state: dict[str, Any]) -> FrameOut:
    """The step's answer as a frame. An answer that is not a frame's JSON is the step's
    text: the session goes on to the following step with its state unchanged."""
    text = answer.strip()
    if text.startswith("{"):
        try:
            return FrameOut.model_validate(json.loads(text))
        except (ValueError, ValidationError):
            pass
    return FrameOut(next_step=following(step), state=state, text=text[:MAX_TEXT_CHARS] or None)


def state_too_large(state: dict[str, Any]) -> bool:
    """Whether ``state`` passes :data:`MAX_STATE_BYTES` as JSON."""
    return len(json.dumps(state, separators=(",", ":"))) > MAX_STATE_BYTES
