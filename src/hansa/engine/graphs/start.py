"""A graph's run: one task per node, in the graph's order, started at once.

A node becomes a task of its node type's task type (``TaskRegistry.for_node``: ``wait`` is
``wait.durable``), owned by the node's agent (``llm.invoke``'s ``agentId``), else the
run's, else (a task type the run's agent may not run, such as ``webhook.call`` for Hans)
the first roster agent's that may; it depends on the nodes its in-edges come from, and a
``condition``'s out-edge adds the branch it must take (``metadata.when``). The run is
stored and approved in one transaction: it starts at once, under the same laws as any run
(an irreversible node still waits for the user's confirmation). Templates in the configs
are filled in as each task starts (``runs/run_job.py``), from the run's inputs and the
results of the nodes before it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection

from hansa.domain import event
from hansa.domain.base import new_id
from hansa.domain.graph import Component, Graph
from hansa.domain.node_configs import FACTS
from hansa.engine import laws, runs, templates
from hansa.engine.runtime.recorder import Batch, Recorder
from hansa.engine.runtime.services import Services
from hansa.store import conversations
from hansa.tasks.base import TaskType
from hansa.tasks.registry import TaskRegistry

GROUP = "G"
"""The step group of every task of a graph (their order is their dependencies)."""


@dataclass(frozen=True)
class GraphRunRequest:
    """``POST /api/graphs/{id}/runs``: where the run goes and what it starts from."""

    conversation_id: str
    agent_id: str
    """Who owns the nodes that name no agent of their own."""
    inputs: dict[str, Any] = field(default_factory=dict)
    """``{message?, user?, context?, …}``: the templates' namespaces."""


Owner = Callable[[TaskType[Any]], str]
"""Who owns a node of a task type that names no agent of its own."""


def drafts(
    graph: Graph, owner: Owner, project_id: str | None, registry: TaskRegistry
) -> list[runs.TaskDraft]:
    """The graph's nodes as task drafts, in the graph's (topological) order."""
    after: dict[str, list[str]] = {c.id: [] for c in graph.components}
    when: dict[str, list[tuple[str, str]]] = {c.id: [] for c in graph.components}
    for edge in graph.edges:
        after[edge.to].append(edge.from_)
        if edge.when is not None:
            when[edge.to].append((edge.from_, edge.when))
    by_id = {c.id: c for c in graph.components}
    found: list[runs.TaskDraft] = []
    for i, node_id in enumerate(_in_order(graph)):
        node = by_id[node_id]
        kind = registry.for_node(node.type)
        named = node.config.get("agentId")  # only a node that asks a model may name one
        found.append(
            runs.TaskDraft(
                GROUP,
                kind.name,
                parameters(node, registry),
                str(named or owner(kind)),
                f"{node.id} ({node.type})",
                sequence_order=i,
                project_id=project_id,
                ref=node.id,
                node_id=node.id,
                after=tuple(after[node.id]),
                when=tuple(when[node.id]),
            )
        )
    return found


def parameters(node: Component, registry: TaskRegistry) -> dict[str, Any]:
    """A node's task parameters: its config, and the facts it reads by path (its task
    type's ``reads``: a condition's fields, an ``llm.invoke``'s ``contextFields``), filled
    as the task starts."""
    config = dict(node.config)
    kind = registry.for_node(node.type)
    paths = kind.reads(kind.params.model_validate(config)) if kind.reads else ()
    if paths:
        config[FACTS] = templates.facts_wanted(paths)
    return config


def _owner(change: runs.RunChange, tenant_id: str, agent_id: str) -> Owner:
    """The run's agent owns the nodes it may run; a node it may not (a ``webhook.call`` for
    Hans) is the first roster agent's that may, so a task type is a node type as it is."""
    services = change.services
    runner = services.agents.get(change.conn, tenant_id, agent_id)

    def owner(kind: TaskType[Any]) -> str:
        if runner is None or laws.holds(runner, kind):
            return agent_id
        return next((a.id for a in services.roster if laws.holds(a, kind)), agent_id)

    return owner


def _in_order(graph: Graph) -> list[str]:
    """Kahn's order, ties by the components' own order (the graph was checked acyclic)."""
    position = {c.id: i for i, c in enumerate(graph.components)}
    entering = {c.id: 0 for c in graph.components}
    leaving: dict[str, list[str]] = {c.id: [] for c in graph.components}
    for edge in graph.edges:
        entering[edge.to] += 1
        leaving[edge.from_].append(edge.to)
    ready = deque(sorted((n for n, k in entering.items() if k == 0), key=position.__getitem__))
    order: list[str] = []
    while ready:
        node = ready.popleft()
        order.append(node)
        for nxt in sorted(leaving[node], key=position.__getitem__):
            entering[nxt] -= 1
            if entering[nxt] == 0:
                ready.append(nxt)
    return order


def new_run(
    graph: Graph,
    request: GraphRunRequest,
    project_id: str | None,
    registry: TaskRegistry,
    owner: Owner,
) -> runs.NewRun:
    """The run of ``graph`` that ``request`` asks for."""
    return runs.NewRun(
        request.conversation_id,
        f"{graph.name} (graph v{graph.version})"[:200],
        project_id,
        drafts(graph, owner, project_id, registry),
        metadata={
            "graph": {"id": graph.id, "version": graph.version, "name": graph.name},
            "inputs": request.inputs,
            "edges": [e.model_dump(by_alias=True) for e in graph.edges],
        },
    )


def starting(
    services: Services,
    tenant_id: str,
    found: Callable[[Connection], Graph],
    request: GraphRunRequest,
    project_id: str | None,
    batch: Batch,
) -> str:
    """Add to ``batch`` the steps that store the run of the graph ``found`` reads and start
    it (an approval), in ``batch``'s transaction; the run's id."""
    run_id = new_id()

    def store(change: runs.RunChange) -> object:
        registry = change.services.registry
        owner = _owner(change, tenant_id, request.agent_id)
        graph = found(change.conn)
        return runs.store_run(change, new_run(graph, request, project_id, registry, owner))

    batch.then(runs.on_run(services, tenant_id, run_id, batch, store))
    batch.then(runs.approving(services, tenant_id, run_id, batch))
    return run_id


async def start(
    services: Services, tenant_id: str, graph: Graph, request: GraphRunRequest
) -> tuple[str, list[event.Event]]:
    """Store the graph's run and start it, in one transaction: its id and its events."""
    cid = request.conversation_id
    conversation = await services.db.read(lambda conn: conversations.get(conn, tenant_id, cid))
    batch = Batch(cid, None)
    run_id = starting(
        services, tenant_id, lambda conn: graph, request, conversation.project_id, batch
    )
    stored = await Recorder(services, tenant_id, cid).write(batch)
    return run_id, stored
