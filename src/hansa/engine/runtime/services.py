"""The engine's dependencies, built once by the composition root and passed down."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from hansa.bus.base import Bus
from hansa.domain.agent import AgentDefinition
from hansa.domain.base import utcnow
from hansa.domain.job import Job
from hansa.engine.routing import Router
from hansa.models.base import Model
from hansa.settings import Settings
from hansa.store.db import Database
from hansa.tasks.registry import TaskRegistry


@dataclass
class Services:
    """Shared, stateless-per-turn services; each turn gets its own context object."""

    settings: Settings
    db: Database
    bus: Bus
    model: Model
    roster: list[AgentDefinition]
    router: Router
    registry: TaskRegistry
    clock: Callable[[], datetime] = utcnow
    wake_worker: Callable[[], None] = field(default=lambda: None)
    """Tells an in-process worker that a job was enqueued (set by the worker)."""
    adopt: Callable[[list[Job]], None] = field(default=lambda jobs: None)
    """Hands jobs claimed on its behalf to the in-process worker (set by the worker)."""
    worker_owner: str | None = None
    """The lease owner name of the in-process worker, if this process runs one."""
    reserve_run_slot: Callable[[], bool] = field(default=lambda: False)
    """Holds one of the in-process worker's run slots for a run job about to be handed to
    it; False when they are all taken (set by the worker; callable from any thread)."""
    release_run_slots: Callable[[int], None] = field(default=lambda n: None)
    """Gives back slots held for run jobs whose handing transaction failed."""
    handoffs: dict[int, Any] = field(default_factory=dict)
    """State prepared for jobs handed to the in-process worker, by job id (taken once)."""

    def agent(self, agent_id: str) -> AgentDefinition:
        """The roster entry for ``agent_id`` (the supervisor if unknown)."""
        for a in self.roster:
            if a.id == agent_id:
                return a
        return self.roster[0]

    def has_agent(self, agent_id: str) -> bool:
        """True when ``agent_id`` is in the roster."""
        return any(a.id == agent_id for a in self.roster)
