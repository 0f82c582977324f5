"""Who is calling: the request's credential, the principal it names, and local mode.

A credential is an API key (or agent token) in ``Authorization: Bearer`` or
``X-Api-Key`` (what the Agent Protocol's clients, ``langgraph-sdk`` among them, send), in
``?access_token=`` (GET and WebSocket only: EventSource and WebSocket clients cannot
set headers), or in the panel's session cookie. With none, the caller is the local
principal only in local mode: the server listens on loopback only and no key was ever
made (revoking every key does not bring it back; ``hansa keys reset-local`` does). See
docs/security.md.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from enum import StrEnum
from urllib.parse import urlsplit

from starlette.requests import HTTPConnection

from hansa.domain.principal import Kind, OriginDenied, Principal, Role, Unauthenticated
from hansa.engine.runtime.services import Services
from hansa.store import keys
from hansa.store.db import DEFAULT_TENANT_ID

SESSION_COOKIE = "hansa_session"
"""The panel's HttpOnly, SameSite=Strict cookie; its value is the key itself."""

LOCAL = Principal(tenant_id=DEFAULT_TENANT_ID, kind=Kind.LOCAL, id="local", role=Role.ADMIN)
"""The caller in local mode."""

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
"""Host names a request may use in local mode (with any port)."""

UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


class Via(StrEnum):
    """Where a credential came from; a cookie is sent by the browser on its own."""

    HEADER = "header"
    QUERY = "query"
    COOKIE = "cookie"


@dataclass(frozen=True, slots=True)
class Credential:
    """A presented secret and where it came from."""

    secret: str
    via: Via


def is_loopback(host: str) -> bool:
    """Whether a listening address reaches this machine only (``0.0.0.0`` does not)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def credential(conn: HTTPConnection) -> Credential | None:
    """The credential the request presents, if any (a malformed header is an empty one)."""
    header = conn.headers.get("authorization")
    if header is not None:
        scheme, _, value = header.partition(" ")
        return Credential(value.strip() if scheme.lower() == "bearer" else "", Via.HEADER)
    api_key = conn.headers.get("x-api-key")
    if api_key is not None:
        return Credential(api_key.strip(), Via.HEADER)
    if conn.scope["type"] == "websocket" or conn.scope.get("method") in ("GET", "HEAD"):
        token = conn.query_params.get("access_token")
        if token:
            return Credential(token, Via.QUERY)
    cookie = conn.cookies.get(SESSION_COOKIE)
    return Credential(cookie, Via.COOKIE) if cookie else None


async def principal_for(services: Services, secret: str) -> Principal | None:
    """The principal of a live key, or None."""
    found = await services.db.read(keys.find, secret)
    return None if found is None else found.principal()


async def identify(
    services: Services, conn: HTTPConnection, found: Credential | None, *, loopback: bool
) -> Principal | None:
    """The principal of the request: its key's, else the local one in local mode, else None.

    In local mode a key that is not one (there is none) is ignored: clients that must send
    some key (the ``openai`` client's placeholder, ``langgraph-sdk`` with
    ``LANGSMITH_API_KEY`` set) get the local principal, as without it. Otherwise raises
    ``Unauthenticated`` for a key that is unknown or revoked (a stale cookie counts as no
    credential: the panel then asks for a key again).
    """
    if found is not None:
        principal = await principal_for(services, found.secret)
        if principal is not None:
            return principal
    if loopback and not await services.db.read(keys.ever_issued):
        return LOCAL
    if found is not None and found.via is not Via.COOKIE:
        raise Unauthenticated("the API key is not valid (unknown or revoked)")
    return None


def _host_name(host: str) -> str:
    return (urlsplit(f"//{host}").hostname or "").lower()


def check_host(conn: HTTPConnection) -> None:
    """Local mode answers loopback names only: a page on another name that resolves to
    this machine (DNS rebinding) is refused. The server's own address as the ASGI server
    reports it is loopback too when it listens on loopback; an in-process app has none."""
    host = conn.headers.get("host")
    if host is None:
        return
    name = _host_name(host)
    server = conn.scope.get("server")
    if name in LOOPBACK_NAMES or (server is not None and name == str(server[0]).lower()):
        return
    raise OriginDenied(
        f"host {host!r} is not a loopback name; without keys Hansa answers only "
        "localhost, 127.0.0.1 and [::1]",
        details={"host": host},
    )


def _authority(scheme: str, netloc: str) -> str:
    netloc = netloc.lower()
    default = {"http": ":80", "https": ":443", "ws": ":80", "wss": ":443"}.get(scheme, "")
    return netloc.removesuffix(default) if default else netloc


def same_origin(conn: HTTPConnection, origin: str) -> bool:
    """Whether ``Origin`` names the host the request was sent to."""
    parts = urlsplit(origin)
    host = conn.headers.get("host")
    if parts.scheme not in ("http", "https") or not parts.netloc or host is None:
        return False
    return _authority(parts.scheme, parts.netloc) == _authority(parts.scheme, host)


def check_origin(
    conn: HTTPConnection, *, required: bool, listed: frozenset[str] = frozenset()
) -> None:
    """A state-changing request or a WebSocket from another site is refused, unless the
    operator listed its origin (``HANSA_CORS_ORIGINS``: ``listed``); ``required`` (a
    cookie's credential) also refuses one that names no origin at all."""
    writes = conn.scope["type"] == "websocket" or conn.scope.get("method") in UNSAFE_METHODS
    if not writes:
        return
    origin = conn.headers.get("origin")
    if origin is None:
        if required:
            raise OriginDenied("a request authenticated by the session cookie needs an Origin")
        return
    if not same_origin(conn, origin) and origin not in listed:
        raise OriginDenied(
            f"requests from {origin!r} are refused: another site may not act here "
            "(HANSA_CORS_ORIGINS lists the origins whose pages may)",
            details={"origin": origin},
        )
