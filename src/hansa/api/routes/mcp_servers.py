"""``GET`` and ``POST /api/projects/{id}/mcp-tools``: the tools of a project's MCP servers,
as ``mcp.call`` may call them (``tasks/builtin/mcp_call.py``).

A GET never starts a process: a page of another site may make a browser send one (local
mode checks no ``Origin`` on reads), so a stdio server is shown from its last listing, and
listed afresh only by the POST (checked like every write) or by a call."""

from __future__ import annotations

from typing import Literal

import anyio
from fastapi import APIRouter

from hansa import errors
from hansa.api.deps import ServicesDep, TenantDep
from hansa.api.models.base import ErrorInfo, answers
from hansa.api.models.mcp import McpServerOut, McpToolOut, McpToolsOut
from hansa.engine import runs
from hansa.engine.runtime.services import Services
from hansa.store import projects
from hansa.tasks.base import TaskFailed
from hansa.tasks.connectors import mcp_client, mcp_config
from hansa.tasks.connectors.mcp_client import CATALOG, McpServers
from hansa.tasks.connectors.mcp_config import HttpServer

router = APIRouter(prefix="/api/projects", tags=["projects"])


@router.get(
    "/{project_id}/mcp-tools",
    operation_id="listMcpTools",
    responses=answers(None, 404),
)
async def list_mcp_tools(project_id: str, services: ServicesDep, tenant: TenantDep) -> McpToolsOut:
    """The project's MCP servers (``config.mcpServers``) and their tools: schemas, hints,
    and whether a call needs the user's confirmation. A server that cannot be listed is
    shown with its error. Listings are kept a few seconds; a call always lists again. A
    stdio server is not started here: its last listing is shown (``not_listed`` before the
    first; ``POST`` lists it)."""
    return await _servers(services, tenant, project_id, start=False)


@router.post(
    "/{project_id}/mcp-tools",
    operation_id="refreshMcpTools",
    responses=answers(None, 404),
)
async def refresh_mcp_tools(
    project_id: str, services: ServicesDep, tenant: TenantDep
) -> McpToolsOut:
    """As ``GET``, but stdio servers are started and listed too."""
    return await _servers(services, tenant, project_id, start=True)


async def _servers(services: Services, tenant: str, project_id: str, *, start: bool) -> McpToolsOut:
    proj = await services.db.read(lambda conn: projects.get(conn, tenant, project_id))
    servers = McpServers(
        proj.config,
        runs.secret_box(services).open,
        runs.outbound_policy(services),
        services.stdio_servers,
    )
    names = mcp_config.names(proj.config)
    shown: list[McpServerOut | None] = [None for _ in names]

    async def one(i: int, name: str) -> None:
        shown[i] = await _listed(servers, name, start=start)

    async with anyio.create_task_group() as group:
        for i, name in enumerate(names):
            group.start_soon(one, i, name)
    return McpToolsOut(servers=[s for s in shown if s is not None])


async def _listed(servers: McpServers, name: str, *, start: bool) -> McpServerOut:
    entry = mcp_config.stored_entry(servers.config, name) or {}
    # a stored entry was checked when the config was written: its transport is one of these
    transport: Literal["stdio", "http"] = "stdio" if entry.get("transport") == "stdio" else "http"

    def failed(exc: errors.HansaError) -> McpServerOut:
        shown = ErrorInfo(code=exc.code, message=exc.message, details={})
        return McpServerOut(name=name, transport=transport, error=shown)

    try:
        key, server = servers.server(name)
    except errors.HansaError as exc:  # a secret no key opens, say
        return failed(exc)
    try:
        listing = CATALOG.fresh(key)
        if listing is None and not start and not isinstance(server, HttpServer):
            listing = CATALOG.known(key)
            if listing is None:
                return failed(_NOT_STARTED)
        if listing is None:
            with anyio.fail_after(server.timeout_seconds):
                async with mcp_client.session(server, servers.policy) as opened:
                    listing = CATALOG.keep(key, await mcp_client.list_tools(opened))
    except TimeoutError:
        return failed(TaskFailed(f"the MCP server {name!r} did not answer in time", code="timeout"))
    except TaskFailed as exc:
        return failed(exc)
    tools = [McpToolOut.of(t) for t in listing.values()]
    return McpServerOut(name=name, transport=transport, tools=tools, error=None)


_NOT_STARTED = TaskFailed(
    "a stdio server is started only by a request that may change things: "
    "POST /api/projects/{id}/mcp-tools lists it, as does any mcp.call",
    code="not_listed",
)
