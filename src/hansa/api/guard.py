"""The gate every request passes first: who is calling, and may a browser ask this.

Pure ASGI middleware, outermost but for the access log (``api/access.py``), for HTTP and
WebSocket alike. It puts the request's principal in ``scope["state"]["principal"]``
(``api/deps.py`` hands it to routes) and refuses, in the API error shape:

- 401 ``unauthenticated``: a ``KEYED`` path with no principal, or a bad key;
- 403 ``origin_denied``: in local mode a ``Host`` that is not a loopback name (DNS
  rebinding); in local mode, with the session cookie, and at ``/api/session``, a
  state-changing request or a WebSocket whose ``Origin`` is another site (with the
  cookie, one with no ``Origin`` at all).

What each role may do once in is ``api/policy.py``'s business.
"""

from __future__ import annotations

from starlette.requests import HTTPConnection
from starlette.types import ASGIApp, Receive, Scope, Send

from hansa import errors
from hansa.api import auth
from hansa.api.errors import refuse
from hansa.domain.principal import Kind, Principal, Unauthenticated

KEYED = ("/api/", "/ap/", "/v1/", "/ag-ui/", "/mcp")
"""Where every request needs a principal (and counts against its rate, ``api/limits.py``):
Hansa's API, the Agent Protocol, OpenAI-compatible chat, AG-UI and the MCP server."""
SESSION_PATH = "/api/session"
"""Signing in and out: open to callers without a principal."""


def is_public(path: str) -> bool:
    """Paths that answer without a principal: the panel, health, the API's description."""
    return not path.startswith(KEYED) or path == SESSION_PATH


class Guard:
    """Authenticate, then apply the browser rules, before anything else runs."""

    def __init__(self, app: ASGIApp, *, loopback: bool) -> None:
        self.app = app
        self.loopback = loopback
        """Whether the server listens on loopback only (local mode is possible)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        try:
            principal = await self._admit(HTTPConnection(scope))
        except errors.UserError as exc:
            await refuse(scope, receive, send, exc)
            return
        scope.setdefault("state", {})["principal"] = principal
        await self.app(scope, receive, send)

    async def _admit(self, conn: HTTPConnection) -> Principal | None:
        services = conn.scope["app"].state.services
        path: str = conn.scope["path"]
        public = is_public(path)
        found = auth.credential(conn)
        try:
            principal = await auth.identify(services, conn, found, loopback=self.loopback)
        except Unauthenticated:
            if not public:
                raise
            principal = None  # a bad key does not keep anyone from the panel
        if principal is None and not public:
            raise Unauthenticated(
                "this server needs an API key: send Authorization: Bearer <key> "
                "(create one with: hansa keys create --tenant <tenant> --role admin)"
            )
        local = principal is not None and principal.kind is Kind.LOCAL
        if local:
            auth.check_host(conn)
        by_cookie = found is not None and found.via is auth.Via.COOKIE and not local
        if local or by_cookie or path == SESSION_PATH:
            auth.check_origin(conn, required=by_cookie)
        return principal
