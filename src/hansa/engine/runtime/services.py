"""The engine's dependencies, built once by the composition root and passed down."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from sqlalchemy import Connection

from hansa.bus.base import Bus
from hansa.domain.agent import AgentDefinition
from hansa.domain.base import utcnow
from hansa.domain.job import Job
from hansa.domain.project import ProjectContext
from hansa.engine.context_cache import ContextCache
from hansa.engine.metrics import Metrics
from hansa.engine.routing import Router
from hansa.engine.runtime.agent_directory import AgentDirectory
from hansa.engine.scoped_prompt import scoped_prompt
from hansa.models.base import ChatMessage, Model
from hansa.models.pool import ModelPool
from hansa.settings import Settings
from hansa.store.db import Database
from hansa.tasks.connectors.mcp_config import StdioServer
from hansa.tasks.registry import TaskRegistry

if TYPE_CHECKING:
    from hansa.engine.runtime.recorder import Batch

Drive = Callable[[], Awaitable[None]]
"""A job's work, prepared before the job reaches its worker (a run's first step, say)."""


class HandoffOpener(Protocol):
    """The step that hands ``conversation_id`` to a person in ``batch``'s transaction (a
    graph's ``handoff.create``: the conversation's running runs pause, the graph's own)."""

    def __call__(
        self,
        services: Services,
        tenant_id: str,
        conversation_id: str,
        reason: str,
        priority: str,
        batch: Batch,
    ) -> Callable[[Connection], object]: ...


class LocalWorker(Protocol):
    """What this process's own worker offers the code that enqueues jobs."""

    owner: str
    """The worker's lease owner name."""

    def wake(self) -> None:
        """A job was enqueued: look now rather than at the next poll."""

    def reserve_run_slot(self) -> bool:
        """Hold a run slot for a run job a transaction is about to hand over; False if none."""

    def release_run_slots(self, count: int) -> None:
        """Give back slots held for run jobs whose transaction did not commit."""

    def adopt(self, job: Job, drive: Drive) -> None:
        """Run ``job``, claimed for this worker in a committed transaction, by ``drive``."""


@dataclass(frozen=True)
class Services:
    """Shared, stateless-per-turn services; each turn gets its own context object."""

    settings: Settings
    db: Database
    bus: Bus
    models: ModelPool
    """The process's models; ``model_for`` chooses one per call."""
    roster: list[AgentDefinition]
    """The agents in display order; the supervisor is found by id, never by position."""
    router: Router
    registry: TaskRegistry
    clock: Callable[[], datetime] = utcnow
    local_worker: LocalWorker | None = None
    """This process's worker, if it runs one (given by ``engine.running``)."""
    open_handoff: HandoffOpener | None = None
    """Hands a conversation to a person from a run's step (a graph's ``handoff.create``);
    given by ``engine.running``, which sees the handoffs package the runs may not import."""
    metrics: Metrics = field(default_factory=Metrics, compare=False)
    """The process's counters (``GET /metrics``)."""
    stdio_servers: Mapping[str, StdioServer] = field(default_factory=dict, compare=False)
    """The operator's stdio MCP servers (``[mcp_servers.<name>]`` in ``hansa.toml``): the
    only processes a project's ``config.mcpServers`` may name."""
    agents: AgentDirectory = field(init=False, repr=False, compare=False)
    """Every agent a tenant can address: the roster, then its registered agents. The one
    way to look an agent up, on every surface."""
    packs_cache: ContextCache | None = field(default=None, repr=False, compare=False)
    """The context packs' cache; built from the settings when not given (a field, so that
    ``dataclasses.replace`` keeps the one every writer invalidates)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "agents", AgentDirectory(self.roster, self.db))
        if self.packs_cache is None:
            cache = ContextCache(
                self.settings.context_cache_entries, self.settings.context_cache_seconds
            )
            object.__setattr__(self, "packs_cache", cache)

    @property
    def context_cache(self) -> ContextCache:
        """The project digests and tenant overviews of the context packs, dropped when a
        workspace change of theirs commits (``engine.context_cache``)."""
        assert self.packs_cache is not None  # set by __post_init__
        return self.packs_cache

    @property
    def supervisor(self) -> AgentDefinition:
        """Hans: the agent that routes, plans and validates."""
        return self.agents.supervisor

    async def scoped_prompt(
        self,
        tenant_id: str,
        project: ProjectContext | None,
        model: Model,
        reply: int,
        own: str,
        material: str,
    ) -> list[ChatMessage]:
        """An executor's or a session step's prompt: the shared rules and packs of
        ``project``'s scope, then ``own``, then ``material`` (``engine.scoped_prompt``)."""
        return await scoped_prompt(
            self.context_cache,
            self.db,
            self.clock,
            self.roster,
            self.supervisor,
            tenant_id,
            project,
            model,
            reply,
            own,
            material,
        )

    def may_name_model(self, spec: str) -> bool:
        """Whether a tenant's own config (a graph node's ``model``) may name ``spec``: a
        provider's model by name (``openai:…``, ``anthropic:…``), or one the operator
        configured (the server's, an agent's). A spec that names a file (``local:``,
        ``scripted:``) is the operator's to give."""
        spec = spec.strip()
        configured = {self.settings.model, *(a.model_settings.model for a in self.roster)}
        return spec in configured or spec.split(":", 1)[0] in ("openai", "anthropic")

    def model_for(
        self,
        agent: AgentDefinition,
        project: ProjectContext | None = None,
        action: str | None = None,
    ) -> Model:
        """The model of one call: the action's, else the agent's, else the project's
        (``config.llm.model``), else the server's default."""
        project_model = None
        if project is not None:
            llm = project.config.get("llm")
            project_model = llm.get("model") if isinstance(llm, dict) else None
        return self.models.choose(
            action, agent.model_settings.model, project_model, self.settings.model
        )

    def wake_worker(self) -> None:
        """Tell this process's worker, if any, that a job was enqueued."""
        if self.local_worker is not None:
            self.local_worker.wake()
