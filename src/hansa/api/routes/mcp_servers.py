"""``GET /api/projects/{id}/mcp-tools``: the tools of a project's MCP servers, as
``mcp.call`` may call them (``tasks/builtin/mcp_call.py``)."""

from __future__ import annotations

from typing import Any

import anyio
from fastapi import APIRouter

from hansa import errors
from hansa.api.deps import ServicesDep, TenantDep
from hansa.api.models.base import answers
from hansa.api.models.mcp import McpToolsOut
from hansa.engine.runs.connectors import outbound_policy, secret_box
from hansa.store import projects
from hansa.tasks.base import TaskFailed
from hansa.tasks.connectors import mcp_client, mcp_config
from hansa.tasks.connectors.mcp_client import CATALOG, McpServers

router = APIRouter(prefix="/api/projects", tags=["projects"])


@router.get(
    "/{project_id}/mcp-tools",
    operation_id="listMcpTools",
    response_model=None,
    responses=answers(McpToolsOut, 404),
)
async def list_mcp_tools(
    project_id: str, services: ServicesDep, tenant: TenantDep
) -> dict[str, Any]:
    """The project's MCP servers (``config.mcpServers``) and their tools: schemas, hints,
    and whether a call needs the user's confirmation. A server that cannot be listed is
    shown with its error. Listings are kept a few seconds; a call always lists again."""
    proj = await services.db.read(lambda conn: projects.get(conn, tenant, project_id))
    servers = McpServers(proj.config, secret_box(services).open, outbound_policy(services))
    names = mcp_config.names(proj.config)
    shown: list[dict[str, Any]] = [{} for _ in names]

    async def one(i: int, name: str) -> None:
        shown[i] = await _listed(servers, name)

    async with anyio.create_task_group() as group:
        for i, name in enumerate(names):
            group.start_soon(one, i, name)
    return {"servers": shown}


async def _listed(servers: McpServers, name: str) -> dict[str, Any]:
    entry = mcp_config.stored_entry(servers.config, name) or {}
    out: dict[str, Any] = {
        "name": name,
        "transport": entry.get("transport", "http"),
        "tools": [],
        "error": None,
    }
    try:
        key, server = servers.server(name)
    except errors.HansaError as exc:  # a secret no key opens, say
        return {**out, "error": _error(exc)}
    try:
        listing = CATALOG.fresh(key)
        if listing is None:
            with anyio.fail_after(server.timeout_seconds):
                async with mcp_client.session(server, servers.policy) as opened:
                    listing = CATALOG.keep(key, await mcp_client.list_tools(opened))
    except TimeoutError:
        late = TaskFailed(f"the MCP server {name!r} did not answer in time", code="timeout")
        return {**out, "error": _error(late)}
    except TaskFailed as exc:
        return {**out, "error": _error(exc)}
    return {**out, "tools": [t.shown() for t in listing.values()]}


def _error(exc: errors.HansaError) -> dict[str, Any]:
    return {"code": exc.code, "message": exc.message, "details": {}}
