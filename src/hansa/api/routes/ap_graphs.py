"""An assistant's graph, schemas and subgraphs under ``/ap`` (``assistants.get_graph``,
``get_schemas``, ``get_subgraphs``; ``RemoteGraph.get_graph`` draws the first).

Hansa's agents are not LangGraph graphs; each is drawn as what a run of it does: Hans
(the supervisor) from ``__start__`` routes to himself or to one of the tenant's agents
(conditional edges), and each answers, to ``__end__``; any other agent is one node between
``__start__`` and ``__end__``. Input, output and state are a thread's values (its messages,
its context keys). There are no subgraphs (``{}``). ``xray`` is accepted and changes
nothing.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query

from hansa.api.deps import ServicesDep, TenantDep
from hansa.api.models.agent_protocol import GraphEdge, GraphNode, GraphOut, SchemasOut, Values
from hansa.api.models.base import answers
from hansa.domain.agent import AgentDefinition

router = APIRouter(prefix="/ap", tags=["agent-protocol"])
START, END = "__start__", "__end__"


def _node(agent: AgentDefinition) -> GraphNode:
    return GraphNode(
        id=agent.id, type="runnable", data={"id": ["hansa", "agent"], "name": agent.id}
    )


@router.get("/assistants/{assistant_id}/graph", responses=answers(GraphOut, 404))
async def get_assistant_graph(
    assistant_id: str,
    services: ServicesDep,
    tenant: TenantDep,
    xray: bool | int = Query(default=False),  # noqa: B008 - accepted: no subgraphs to show
) -> GraphOut:
    """The assistant drawn as a graph: what a run of it does."""
    agent = await services.agents.require(tenant, assistant_id)
    ends = [GraphNode(id=START, type="schema", data=START)]
    ends.append(GraphNode(id=END, type="schema", data=END))
    if agent.id != services.supervisor.id:
        edges = [GraphEdge(source=START, target=agent.id), GraphEdge(source=agent.id, target=END)]
        return GraphOut(nodes=[*ends, _node(agent)], edges=edges)
    team = [a for a in await services.agents.listing(tenant) if a.id != agent.id]
    edges = [GraphEdge(source=START, target=agent.id)]
    edges.append(GraphEdge(source=agent.id, target=END, conditional=True))
    for other in team:
        edges.append(GraphEdge(source=agent.id, target=other.id, conditional=True))
        edges.append(GraphEdge(source=other.id, target=END))
    return GraphOut(nodes=[*ends, _node(agent), *map(_node, team)], edges=edges)


@router.get("/assistants/{assistant_id}/schemas", responses=answers(SchemasOut, 404))
async def get_assistant_schemas(
    assistant_id: str, services: ServicesDep, tenant: TenantDep
) -> SchemasOut:
    """The assistant's input, output and state schemas: a thread's values."""
    agent = await services.agents.require(tenant, assistant_id)
    values = Values.model_json_schema(by_alias=True)
    empty: dict[str, Any] = {"type": "object", "properties": {}}
    return SchemasOut(
        graph_id=agent.id,
        input_schema=values,
        output_schema=values,
        state_schema=values,
        config_schema=empty,
        context_schema=empty,
    )


@router.get(
    "/assistants/{assistant_id}/subgraphs",
    response_model=dict[str, SchemasOut],
    responses=answers(None, 404),
)
@router.get(
    "/assistants/{assistant_id}/subgraphs/{namespace}",
    operation_id="getAssistantSubgraphsIn",
    response_model=dict[str, SchemasOut],
    responses=answers(None, 404),
)
async def get_assistant_subgraphs(
    assistant_id: str,
    services: ServicesDep,
    tenant: TenantDep,
    namespace: str | None = None,
    recurse: bool = False,
) -> dict[str, SchemasOut]:
    """The assistant's subgraphs (in ``namespace``): none."""
    await services.agents.require(tenant, assistant_id)
    return {}
