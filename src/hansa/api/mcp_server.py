"""The MCP server at ``/mcp``: Hansa's task types, and ``ask_the_team``, as tools for other
agents (streamable HTTP, the official SDK's low-level ``Server``; ``api/mcp_tools.py`` holds
the tools).

Every request needs a principal, found by ``api/guard.py`` as for ``/api/``: an API key in
``Authorization: Bearer``, or none in local mode. Without one (no key, an unknown or revoked
key) the answer is 401 in the API error shape. The tools run as that principal's tenant.

The transport is stateless and answers in JSON: no MCP session is kept between requests, so
any API process can answer any request; a call says which conversation it continues.
Mounted as a plain ASGI route, the server is not part of the OpenAPI description.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from starlette.requests import HTTPConnection
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

import hansa
from hansa.api import mcp_tools
from hansa.api.deps import current_principal
from hansa.api.errors import error_body, refuse
from hansa.domain.principal import Principal, Unauthenticated
from hansa.engine.runtime.services import Services

log = logging.getLogger(__name__)

PATH = "/mcp"
"""Where the app serves it."""

INSTRUCTIONS = (
    "Hansa's task types as tools, under Hansa's laws: a task outside its agent's scope or "
    "missing a required parameter is refused; an irreversible one does not run but awaits "
    "a person's confirmation in Hansa. ask_the_team runs a turn of Hansa's agents."
)


class McpServer:
    """The ``/mcp`` endpoint: an ASGI app that serves while ``serving`` runs."""

    def __init__(self) -> None:
        self._services: Services | None = None
        self._manager: StreamableHTTPSessionManager | None = None
        self._server: Server[Any] = Server(
            "hansa",
            version=hansa.__version__,
            title="Hansa",
            instructions=INSTRUCTIONS,
            get_tool_input_schema=self._input_schema,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
        )

    @asynccontextmanager
    async def serving(self, services: Services) -> AsyncIterator[None]:
        """Serve requests with ``services`` (within the app's lifespan)."""
        manager = StreamableHTTPSessionManager(
            app=self._server,
            stateless=True,
            json_response=True,
            # api/guard.py already checks Host and Origin (local mode, cookies)
            security_settings=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        async with manager.run():
            self._services, self._manager = services, manager
            try:
                yield
            finally:
                self._services = self._manager = None

    def route(self) -> Route:
        """Its route at ``PATH`` (an ASGI app's route has no OpenAPI entry)."""
        return Route(PATH, self, name="mcp")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        principal = scope.get("state", {}).get("principal")
        if principal is None:  # a public path to the guard: refused here
            missing = Unauthenticated(
                "the MCP server needs an API key: send Authorization: Bearer <key> "
                "(an unknown or revoked key is refused too)"
            )
            await refuse(scope, receive, send, missing)
            return
        if scope["method"] != "POST":  # stateless: no stream to open (GET), no session to end
            not_allowed = error_body("method_not_allowed", "the MCP server takes POST only")
            await JSONResponse(not_allowed, 405, {"Allow": "POST"})(scope, receive, send)
            return
        if self._manager is None:
            raise RuntimeError("the MCP server is not serving (outside the app's lifespan)")
        await self._manager.handle_request(scope, receive, send)

    def _running(self) -> Services:
        if self._services is None:
            raise RuntimeError("the MCP server is not serving")
        return self._services

    def _input_schema(self, name: str) -> dict[str, Any] | None:
        return mcp_tools.input_schema(self._running(), name)

    async def _list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        _principal(ctx)
        return types.ListToolsResult(tools=mcp_tools.describe(self._running()))

    async def _call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        services = self._running()
        if mcp_tools.input_schema(services, params.name) is None:
            raise MCPError(code=types.INVALID_PARAMS, message=f"unknown tool {params.name!r}")
        principal = _principal(ctx)
        try:
            return await mcp_tools.call(services, principal, params.name, params.arguments or {})
        except Exception:  # the caller learns nothing internal, as from the API
            log.exception("MCP tool %s failed", params.name)
            failed = "the server failed to run this tool"
            return types.CallToolResult(content=[types.TextContent(text=failed)], is_error=True)


def _principal(ctx: ServerRequestContext[Any]) -> Principal:
    """The caller of the request, as the guard found it."""
    if not isinstance(ctx.request, HTTPConnection):
        raise MCPError(code=types.INVALID_REQUEST, message="no HTTP request to authenticate")
    return current_principal(ctx.request)
