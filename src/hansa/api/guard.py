"""The gate every request passes first: who is calling, and may a browser ask this.

Pure ASGI middleware, outermost but for the access log (``api/access.py``), for HTTP and
WebSocket alike. It puts the request's principal in ``scope["state"]["principal"]``
(``api/deps.py`` hands it to routes) and refuses, in the API error shape:

- 401 ``unauthenticated``: a ``KEYED`` path with no principal, or a bad key;
- 403 ``origin_denied``: in local mode a ``Host`` that is not a loopback name (DNS
  rebinding); in local mode, with the session cookie, and at ``/api/session``, a
  state-changing request or a WebSocket whose ``Origin`` is another site that
  ``HANSA_CORS_ORIGINS`` does not list (with the cookie, one with no ``Origin`` at all).

``Cors``, just outside it, answers browsers' CORS preflights before anyone is asked who
they are (a preflight carries no credential), and lets pages of the listed origins read
the answers; pages of any other origin get no CORS header, and their preflights 403.

What each role may do once in is ``api/policy.py``'s business.
"""

from __future__ import annotations

from collections.abc import Collection

from starlette.datastructures import Headers
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import HTTPConnection
from starlette.types import ASGIApp, Receive, Scope, Send

from hansa import errors
from hansa.api import auth
from hansa.api.errors import refuse
from hansa.domain.principal import Kind, OriginDenied, Principal, Unauthenticated

KEYED = ("/api/", "/ap/", "/v1/", "/ag-ui/", "/mcp")
"""Where every request needs a principal (and counts against its rate, ``api/limits.py``):
Hansa's API, the Agent Protocol, OpenAI-compatible chat, AG-UI and the MCP server."""
SESSION_PATH = "/api/session"
"""Signing in and out: open to callers without a principal."""
EXPOSED_HEADERS = (
    "X-Hansa-Conversation-Id",
    "X-Request-ID",
    "Content-Location",
    "Retry-After",
    "WWW-Authenticate",
    "Idempotent-Replayed",
)
"""The answers' headers a page of a listed origin may read (besides CORS's safelisted ones)."""


def is_public(path: str) -> bool:
    """Paths that answer without a principal: the panel, health, the API's description."""
    return not path.startswith(KEYED) or path == SESSION_PATH


class Guard:
    """Authenticate, then apply the browser rules, before anything else runs."""

    def __init__(self, app: ASGIApp, *, loopback: bool, origins: Collection[str] = ()) -> None:
        self.app = app
        self.loopback = loopback
        """Whether the server listens on loopback only (local mode is possible)."""
        self.origins = frozenset(origins)
        """``HANSA_CORS_ORIGINS``: other origins whose pages may act here."""

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
            auth.check_origin(conn, required=by_cookie, listed=self.origins)
        return principal


class Cors(CORSMiddleware):
    """Starlette's CORS for the origins of ``HANSA_CORS_ORIGINS`` (credentials included:
    the panel's cookie), and nothing for any other: its preflight is refused in the API
    error shape, its answers carry no CORS header (a browser keeps them from its page)."""

    def __init__(self, app: ASGIApp, *, origins: Collection[str]) -> None:
        super().__init__(
            app,
            allow_origins=tuple(origins),
            allow_methods=("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"),
            allow_headers=("*",),  # a header is no credential; the origin decides
            allow_credentials=True,
            expose_headers=EXPOSED_HEADERS,
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)  # a WebSocket's Origin is the guard's
            return
        headers = Headers(scope=scope)
        origin = headers.get("origin")
        if origin is None or self.is_allowed_origin(origin):
            await super().__call__(scope, receive, send)
        elif scope["method"] == "OPTIONS" and "access-control-request-method" in headers:
            refused = OriginDenied(
                f"pages of {origin!r} may not call Hansa: the server's HANSA_CORS_ORIGINS "
                "does not list that origin",
                details={"origin": origin},
            )
            await refuse(scope, receive, send, refused)
        else:
            await self.app(scope, receive, send)
