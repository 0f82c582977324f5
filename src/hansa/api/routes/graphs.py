"""Prompt graphs (seed 001): save a graph, add versions of it, read them.

Versions are immutable: a change is a new version, and every earlier one stays readable.
A body may write its components as seed 001's actions, lists nested; the graph is kept, and
read back, as the nodes and edges they compile to (``domain/action_lists.py``).
A graph with problems is refused with 422 ``invalid_graph``, listing every one of them in
``details.problems``; nothing is written then.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi import Body as BodyParam
from pydantic import Field

from hansa.api.deps import PrincipalDep, ServicesDep
from hansa.api.models.automation import Graph
from hansa.api.models.runs import RunCard
from hansa.api.routes.runs import card
from hansa.api.schemas import AgentId, Body, Id
from hansa.domain import graph
from hansa.domain.base import new_id
from hansa.domain.principal import Principal
from hansa.engine.graphs import start
from hansa.engine.runtime.services import Services
from hansa.store import graphs as graph_rows
from hansa.store import services as service_rows

router = APIRouter(prefix="/api/graphs", tags=["graphs"])

_EXAMPLE = {
    "name": "triage",
    "components": [
        {
            "id": "check",
            "type": "condition",
            "config": {"condition": {"field": "context.tier", "operator": "in", "value": ["gold"]}},
        },
        {
            "id": "vip",
            "type": "message.send",
            "config": {"content": "A specialist will call you."},
        },
        {
            "id": "usual",
            "type": "llm.invoke",
            "config": {"promptTemplate": "{{message.content}}"},
        },
    ],
    "edges": [
        {"from": "check", "to": "vip", "when": "true"},
        {"from": "check", "to": "usual", "when": "false"},
    ],
}
_SEED = {
    "name": "human handoff (seed 001)",
    "components": [
        {
            "type": "condition",
            "params": {
                "condition": {
                    "field": "message.content",
                    "operator": "contains",
                    "value": "speak to human",
                },
                "ifTrue": [
                    {
                        "type": "handoff.create",
                        "params": {"reason": "User requested human support"},
                    },
                    {"type": "message.send", "params": {"content": "Connecting you with a human."}},
                ],
            },
        }
    ],
}
GraphBody = Annotated[
    dict[str, Any],
    BodyParam(
        description=(
            "`{name, components: [{id, type, config}], edges: [{from, to, when?}]}`; a"
            " component may be a seed action `{type, params}` with nested action lists"
            " (`ifTrue`, `ifFalse`, `actions`), kept and read back as nodes and edges"
        ),
        openapi_examples={
            "condition": {"summary": "a branch", "value": _EXAMPLE},
            "seed": {"summary": "seed 001's actions, nested", "value": _SEED},
        },
    ),
]
"""Read as plain JSON: ``domain/graph.py`` checks it, so that every problem is listed."""
_VERSION = Annotated[int | None, Query(ge=1, le=2**31 - 1)]


async def _checked(services: Services, tenant: str, body: dict[str, Any]) -> graph.GraphSpec:
    task_types = (t.name for t in services.registry.all())
    named = await services.db.read(lambda conn: service_rows.names(conn, tenant))
    return graph.parse(body, task_types, services.settings.max_tasks_per_run, named)


def _author(principal: Principal) -> str:
    return f"{principal.kind.value}:{principal.id}"


@router.post("", status_code=201)
async def create_graph(body: GraphBody, services: ServicesDep, principal: PrincipalDep) -> Graph:
    """Save a new graph as its version 1; 422 ``invalid_graph`` lists every problem."""
    spec = await _checked(services, principal.tenant_id, body)
    made = graph.Graph(
        name=spec.name,
        components=spec.components,
        edges=spec.edges,
        id=new_id(),
        tenant_id=principal.tenant_id,
        version=1,
        created_at=services.clock(),
        created_by=_author(principal),
    )
    await services.db.write(lambda conn: graph_rows.create(conn, made))
    return made


@router.post(
    "/{graph_id}/versions",
    status_code=201,
    operation_id="addGraphVersion",
)
async def add_version(
    graph_id: str, body: GraphBody, services: ServicesDep, principal: PrincipalDep
) -> Graph:
    """Save ``body`` as the graph's next version (the earlier ones stay as they were)."""
    tenant = principal.tenant_id
    # an unknown (or another tenant's) graph is 404 whatever the body holds
    await services.db.read(lambda conn: graph_rows.get(conn, tenant, graph_id))
    spec = await _checked(services, tenant, body)
    now, by = services.clock(), _author(principal)
    added = await services.db.write(
        lambda conn: graph_rows.add_version(conn, tenant, graph_id, spec, now, by)
    )
    return added


@router.get("")
async def list_graphs(services: ServicesDep, principal: PrincipalDep) -> list[Graph]:
    """The newest version of each of the tenant's graphs, oldest graph first."""
    return await services.db.read(graph_rows.list_newest, principal.tenant_id)


@router.get("/{graph_id}")
async def get_graph(
    graph_id: str, services: ServicesDep, principal: PrincipalDep, version: _VERSION = None
) -> Graph:
    """The graph's newest version, or ``?version=``; 404 for an unknown id or version."""
    tenant = principal.tenant_id
    return await services.db.read(lambda conn: graph_rows.get(conn, tenant, graph_id, version))


class GraphRunBody(Body):
    """``POST /api/graphs/{id}/runs``."""

    conversation_id: Id
    version: int | None = Field(default=None, ge=1, le=2**31 - 1)
    """The version to run; the newest by default."""
    agent_id: AgentId | None = None
    """Who owns the nodes that name no agent; Hans by default."""
    inputs: dict[str, Any] = Field(default_factory=dict)
    """``{message?, user?, context?}``: what the templates' namespaces hold."""


@router.post(
    "/{graph_id}/runs",
    status_code=201,
)
async def run_graph(
    graph_id: str, body: GraphRunBody, services: ServicesDep, principal: PrincipalDep
) -> RunCard:
    """Start a run of the graph in a conversation, at once (an irreversible node still
    waits for the user's confirmation); the run's card."""
    tenant = principal.tenant_id
    found = await services.db.read(
        lambda conn: graph_rows.get(conn, tenant, graph_id, body.version)
    )
    agent_id = body.agent_id or services.supervisor.id  # the laws refuse an unknown one
    request = start.GraphRunRequest(body.conversation_id, agent_id, body.inputs)
    run_id, _ = await start.start(services, tenant, found, request)
    return await card(services, tenant, run_id)
