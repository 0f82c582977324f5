"""Jobs: every unit of background work, claimed with a lease."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from hansa.domain.base import Wire


class JobStatus(StrEnum):
    """queued -> running -> done | failed; running -> queued when a lease expires."""

    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


class JobKind(StrEnum):
    """What a job does."""

    TURN = "turn"
    RUN = "run"
    """Drive one run: start its tasks group by group, execute them, record their results
    (keyed ``run:<id>``, so one worker at a time drives a run)."""
    RUN_SUMMARY = "run_summary"
    """Hans validates a finished run and answers (keyed by conversation, like turns)."""


class Job(Wire):
    """A claimed job, as a worker sees it."""

    id: int
    tenant_id: str
    kind: JobKind
    key: str | None
    """Jobs with the same key never run at the same time (the conversation id for turns)."""
    payload: dict[str, Any]
    attempts: int
    max_attempts: int
    """Claims after which the job's work is given up (and said so), instead of tried again."""
    epoch: int
    """Bumped at each claim; every write made for the job checks it."""
    lease_owner: str
    lease_until: datetime
