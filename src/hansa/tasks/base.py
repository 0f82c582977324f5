"""Task types: typed, registered actions that a run executes.

A task type names a pydantic parameter model (its JSON schema is the contract),
whether the system can reverse it (and how), the capability an agent needs, and
an async executor. Executors get validated parameters and a ``TaskContext`` with
the tenant/project scope, a stable idempotency key, and the connectors they may
use; they return a JSON-able result dict and never reach the database directly.

What the run machinery does with a task besides executing it (holds it, settles it as it
starts, forks or loops the tasks after it, tells what it did) is said here, on its type,
never by its name in the engine (decision 0024).
"""

from __future__ import annotations

import abc
import enum
import re
from collections.abc import Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Generic, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict

from hansa import errors
from hansa.domain.conversation import State
from hansa.domain.handoff import Priority
from hansa.domain.service import Service
from hansa.tasks.connectors.targets import Target

P = TypeVar("P", bound=BaseModel)

Result = dict[str, Any]


def landed(connector: CmsConnector | ShopConnector) -> Result:
    """``{"target": …}`` for a step's result: where the connector's change landed."""
    return {"target": connector.target.details()} if connector.target is not None else {}


def page_slug(text: str) -> str:
    """A page's address (slug) from a title or a path: lowercase words joined by hyphens."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:120]


class Params(BaseModel):
    """Base of every parameter model: camelCase accepted, unknown fields refused."""

    model_config = ConfigDict(populate_by_name=True, extra="forbid")


TaskFailed = errors.TaskFailed
"""An executor's clear failure (``errors.TaskFailed``, named here for task code)."""


class Operation(Protocol):
    """Reports what a task does to workspace entities, as it happens."""

    async def __call__(
        self,
        action: str,
        entity_type: str,
        entity_name: str,
        status: str,
        entity_id: str | None = None,
        patch: dict[str, Any] | None = None,
    ) -> None:
        """Record an ``operation`` (and, with ``patch``, an ``entity_patch``) event."""
        ...


async def _no_report(
    action: str,
    entity_type: str,
    entity_name: str,
    status: str,
    entity_id: str | None = None,
    patch: dict[str, Any] | None = None,
) -> None:
    return None


class Complete(Protocol):
    """A model call of an executor: ``prompt`` as the user's message after ``system``, by
    ``model`` (a ``provider:model`` spec) or the acting agent's, at ``temperature`` and
    ``max_tokens`` or the agent's; the answer's text."""

    async def __call__(
        self,
        prompt: str,
        *,
        system: str | None = None,
        model: str | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> str: ...


@dataclass(frozen=True)
class MergeContext:
    """Merge ``values`` into the conversation's context (a graph's ``context.update``)."""

    values: Mapping[str, Any]


@dataclass(frozen=True)
class MoveConversation:
    """Move the conversation to state ``to`` (a graph's ``state.transition``); refused, and
    the step failed, where its state may not move so."""

    to: State


@dataclass(frozen=True)
class OpenHandoff:
    """Hand the conversation to a person (a graph's ``handoff.create``); the run pauses
    until the person gives it back."""

    reason: str
    priority: Priority


Change = MergeContext | MoveConversation | OpenHandoff
"""A change to the conversation an execution asks for (``TaskContext.changes``): made
with its result, in the transaction that records it (``engine/runs/run_job.py``)."""


@dataclass
class TaskContext:
    """What an executor may use; built by the engine for each execution."""

    tenant_id: str
    project_id: str | None
    task_id: str
    idempotency_key: str
    """Stable across attempts of the same task: connectors pass it on."""
    project_config: dict[str, Any] = field(default_factory=dict)
    connectors: dict[str, Any] = field(default_factory=dict)
    """Named connectors (``workspace``, ``cms``, ``shop``, ``outbound``)."""
    outputs: dict[str, Result] = field(default_factory=dict)
    """Results of earlier tasks of the run, by task id and by step reference."""
    report: Operation = _no_report
    generate: Callable[[str, str], Awaitable[str]] | None = None
    """Ask the agent's model for text: ``await generate(instructions, material)``."""
    complete: Complete | None = None
    """Ask a model for text with a prompt of the caller's own (a graph's ``llm.invoke``)."""
    say: Callable[[str], None] | None = None
    """Post an assistant message to the conversation, with the step's result (a graph's
    ``message.send``); None where nothing may be said (a turn's tool call)."""
    changes: list[Change] | None = None
    """Changes to the conversation the execution asks for, made with its result in the
    step's transaction. None where the conversation may not be changed so (a turn's tool
    call)."""
    state_deltas: list[dict[str, Any]] | None = None
    """Where the execution proposes deltas to the acting agent's scratchpad
    (``domain/agent_state.py``): a tool call of a turn applies them with its result. None
    where there is no scratchpad (a run's step)."""
    grounds: tuple[str, ...] = ()
    """What the run was given and found, for Hans's review (``TaskType.check``, the audit):
    its request as planned, the project, its steps' parameters as written and the results of
    its steps no model wrote. A figure, link, date or promise of a model's writing that none
    of them holds is invented (``domain/grounding.py``). Empty outside a run's step."""

    def connector(self, name: str) -> Any:
        """The connector called ``name``; a clear failure when it is not configured."""
        try:
            return self.connectors[name]
        except KeyError:
            raise TaskFailed(
                f"this project has no {name} connection configured", code="connector_missing"
            ) from None


Executor = Callable[[P, TaskContext], Awaitable[Result]]
Checker = Callable[[P, TaskContext], Awaitable[list[str]]]
"""Reads a completed execution back (its result is ``ctx.outputs['self']``): every way the
outside system differs from what was planned, in plain words; empty when it matches."""

ANY_AGENT = "any_agent"
"""The capability of a task type every agent may use (its own scratchpad)."""


@dataclass(frozen=True)
class Judging:
    """What a step's reversibility may depend on besides its validated parameters."""

    written: Mapping[str, Any] = field(default_factory=dict)
    """The parameters as written: at plan time, step references (``{{ref.field}}``) not yet
    filled in."""
    trusted: frozenset[tuple[str, int]] = frozenset()
    """``(host, port)`` targets the operator vetted (``HANSA_OUTBOUND_ALLOW``)."""
    config: Mapping[str, Any] = field(default_factory=dict)
    """The project's configuration as stored (secrets sealed): an ``mcp.call`` reads its
    server's entry there."""
    service: Callable[[str], Service | None] = field(default=lambda name: None)
    """The tenant's service of a name (``/api/services``): a ``service.call`` to one is
    made unattended when the service allows its method."""


class Flow(enum.Enum):
    """How a task governs the tasks that depend on it (``TaskType.flow``)."""

    FORK = "fork"
    """Its children run side by side under its ``strategy`` (``all``, ``any``, ``settle``)
    and its ``timeout`` (a graph's ``parallel``)."""
    LOOP = "loop"
    """Its body runs once per item of its result's ``items``, in order (a graph's
    ``loop``)."""


@dataclass(frozen=True)
class TaskType(Generic[P]):
    """One registered action."""

    name: str
    description: str
    params: type[P]
    executor: Executor[P]
    capability: str
    """The capability an agent must hold to own this task (law of allowed scope);
    ``ANY_AGENT``: every agent holds it."""
    is_reversible_by_system: bool = True
    undo: Executor[P] | None = None
    """Reverses a completed execution; its result is ``ctx.outputs['self']``. Run by
    ``POST /api/tasks/{id}/undo`` and ``/api/runs/{id}/rollback`` (``engine/runs/undo.py``).
    A reversible type without one changes nothing that needs undoing."""
    check: Checker[P] | None = None
    """Hans's review of a completed run step (``engine/runs/invoke.py``): reads the result
    back through the connectors; what it finds reaches the final message."""
    retryable: bool = True
    """Whether failures marked retryable may be retried (never for irreversible types)."""
    reversible_when: Callable[[P, Judging], bool] | None = None
    """For types whose reversibility depends on the parameters (a GET webhook to a vetted
    target, carrying no earlier result, is harmless)."""
    problems: Callable[[P, Judging], list[str]] | None = None
    """The law of clarity beyond the parameter model: what else is wrong with the parameters
    (an ``mcp.call``'s arguments against its tool's schema), in plain words."""
    graph_node: bool = False
    """A node type of prompt graphs (``llm.invoke``, ``condition``…): a graph's step only,
    never offered to an agent as a tool."""
    node_type: str | None = None
    """The graph node type this task type runs, where the two names differ (a graph's
    ``wait`` is ``wait.durable``: the plain ``wait`` sleeps in its executor)."""
    settle: Callable[[P], Result | None] | None = None
    """A pure node (``condition``, ``parallel``) reads nothing outside and changes nothing:
    the run job decides it as it starts, in the transaction that starts it, from its
    parameters alone (its ``TaskFailed`` fails it), so a chain of them costs one step. Its
    executor serves a call from anywhere else, and the nodes it answers None for (work that
    may take time, such as a condition's pattern tests: never in a transaction)."""
    hold: Callable[[P], timedelta] | None = None
    """How long the run waits, durably, before the task runs (a graph's ``wait``): the
    first time it would start it goes back to ``open`` with a due time the store keeps,
    like a retry's backoff, and holds no worker while it waits."""
    flow: Flow | None = None
    """What the task does to the tasks that depend on it besides running before them: the
    scheduler's rules for a fork's children or a loop's body (``engine/runs/forks.py``,
    ``loops.py``)."""
    answers: bool = False
    """Its result's ``text`` is a model's answer: the latest one completed is a graph's
    ``{{llmResponse}}`` (``llm.invoke``)."""
    lands_via: str | None = None
    """The connector its changes go through (``cms``, ``shop``): where they land is that
    connector's target for the project (``tasks/connectors/targets.py``), which the plan
    names and its result carries (``target``). None: nothing outside Hansa's records."""
    model_written: bool = False
    """Its result is a model's writing (a draft, a review's notes): nothing in it grounds
    a claim of another step (``TaskContext.grounds``); an ``answers`` type's is too."""
    reads: Callable[[P], Collection[str]] | None = None
    """The facts a graph's node reads by path (a condition's fields, an ``llm.invoke``'s
    ``contextFields``): its run fills them in as the task starts (``engine/graphs/start.py``)."""
    binds: Callable[[P], tuple[str, ...]] | None = None
    """The bare names it binds for the tasks that depend on it (a loop's body), in order:
    a loop's ``itemKey``, then its ``indexKey``. The scheduler binds them for each copy of
    the body (``engine/runs/loops.py``); a rule's save lets its body name them
    (``engine/rules/evaluate.py``)."""
    refers: Callable[[P], Collection[str]] | None = None
    """What its parameters name besides their templates, as a template names it (a
    condition's fields): a rule's save refuses one that names nothing the chain will hold
    there, as it does a template. Unlike ``reads``, which is only what to fill in: an
    ``llm.invoke``'s ``contextFields`` name namespaces the trigger may not carry (they are
    then given empty)."""
    ends_turn: Callable[[P], bool] | None = None
    """Whether, as a rule's action, it ends the turn: no assistant answers the message the
    rule fired on (``handoff.create``; a ``state.transition`` to a state where no one
    answers: ``engine/triggers/actions.py``)."""
    moves_to: Callable[[P], State] | None = None
    """The state it moves the conversation to (``state.transition``): a rule's save refuses
    one the conversation's state table forbids from every state its trigger can find the
    conversation in (``engine/rules/reachable.py``)."""
    describe: Callable[[Mapping[str, Any]], str | None] | None = None
    """The timeline's sentence for a completed execution, from its result ("Page created in
    WordPress at https://…"); None, or no sentence: the generic "<type> completed"."""
    at_once: bool = False
    """Its executor never waits: it only says something or asks for a change of the
    conversation (``message.send``, ``context.update``, ``state.transition``,
    ``handoff.create``). At the head of a rule's chain it runs in the trigger's
    transaction (``engine/triggers/actions.py``, decision 0023)."""

    def reversible(self, params: P, judging: Judging | None = None) -> bool:
        """Whether the system can reverse this execution."""
        if self.reversible_when is not None:
            return self.reversible_when(params, judging or Judging(params.model_dump()))
        return self.is_reversible_by_system

    def schema(self) -> dict[str, Any]:
        """The parameters' JSON schema: built once (pydantic builds it anew on each call,
        and every turn offers its tools), shared by every caller, so never to be changed."""
        built: dict[str, Any] | None = self.__dict__.get("_schema")
        if built is None:
            built = self.params.model_json_schema(by_alias=True)
            object.__setattr__(self, "_schema", built)
        return built


class CmsConnector(abc.ABC):
    """A content management system holding a project's pages."""

    target: Target | None = None
    """Where its changes land for the project (set by whoever chose it): a step's result
    says so (``landed``)."""

    @abc.abstractmethod
    async def create_page(
        self, *, title: str, slug: str, html: str, status: str, idempotency_key: str
    ) -> Result:
        """Create a page; returns at least ``{pageId, url, status}``. Idempotent per key."""

    @abc.abstractmethod
    async def get_page(self, page_id: str) -> Result:
        """``{pageId, title, slug, html, status, url}``; TaskFailed if there is none."""

    @abc.abstractmethod
    async def find_pages(self, name: str) -> list[Result]:
        """The pages whose title is ``name`` (ignoring case) or whose address (slug) is
        ``name`` as a slug, a leading ``/`` allowed; each as ``get_page`` returns it."""

    @abc.abstractmethod
    async def update_page(
        self,
        page_id: str,
        *,
        html: str | None = None,
        title: str | None = None,
        status: str | None = None,
    ) -> Result:
        """Change a page; returns the page."""

    @abc.abstractmethod
    async def delete_page(self, page_id: str) -> Result:
        """Delete a page for good; returns ``{pageId, deleted: true}``."""


class ShopConnector(abc.ABC):
    """An online shop holding a project's products."""

    target: Target | None = None
    """Where its changes land for the project (set by whoever chose it)."""

    @abc.abstractmethod
    async def create_product(
        self, *, name: str, price: str, description: str, status: str, idempotency_key: str
    ) -> Result:
        """Create a product; returns at least ``{productId, url, status}``. Idempotent per key."""

    @abc.abstractmethod
    async def delete_product(self, product_id: str) -> Result:
        """Remove a product; returns ``{productId, deleted: true}``."""
