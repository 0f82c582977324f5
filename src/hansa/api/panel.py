"""The assistant panel's static files, sent with the headers that keep it from being
framed (clickjacking a confirmation) or made to run what it did not ship."""

from __future__ import annotations

from pathlib import Path

from fastapi.staticfiles import StaticFiles
from starlette.datastructures import MutableHeaders
from starlette.routing import Match, Mount
from starlette.types import ASGIApp, Message, Receive, Scope, Send

HEADERS = {
    "Content-Security-Policy": "default-src 'self'; frame-ancestors 'none'; object-src 'none'",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}
"""On every response of the panel (docs/security.md, "Browser defences")."""


class _Hardened:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def send_hardened(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in HEADERS.items():
                    headers[name] = value
            await send(message)

        await self.app(scope, receive, send_hardened)


def panel(directory: Path) -> ASGIApp:
    """The panel at ``directory``, ``index.html`` for ``/``, with ``HEADERS``."""
    return _Hardened(StaticFiles(directory=directory, html=True))


class PanelMount(Mount):
    """The panel's mount at ``/``, which leaves ``/api/``, ``/v1/`` (the OpenAI-compatible
    routes), ``/ag-ui/`` (AG-UI), ``/ap/`` (the Agent Protocol) and ``/mcp`` (the MCP server) to
    the routes: there an
    unknown path is a 404 and a known one asked with another method a 405 with ``Allow``, not
    a file the panel does not have."""

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        """No match under ``/api/``, ``/v1/``, ``/ag-ui/``, ``/ap/`` or ``/mcp``; elsewhere, as any
        mount."""
        path = str(scope.get("path", ""))
        if path.startswith(("/api/", "/v1/", "/ag-ui/", "/ap/", "/mcp/")) or path == "/mcp":
            return Match.NONE, {}
        return super().matches(scope)
