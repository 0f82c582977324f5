"""Hansa as an MCP client: list and call the tools of a project's MCP servers.

A server is reached over stdio (a process started for the session) or streamable HTTP
through the outbound guard (every connection to a vetted address, credentials over https
only unless ``HANSA_OUTBOUND_ALLOW`` lists the target, no redirects off the endpoint's
origin, every response read within ``HANSA_OUTBOUND_MAX_RESPONSE_BYTES`` decompressed).
Each listing or call opens one session and closes it; failures become ``TaskFailed`` a
user can read (``mcp_unreachable``, ``outbound_denied``…).

What a server says of its tools is kept in a :class:`ToolCatalog`, by the server's stored
config entry, so that the laws, which judge without waiting on the network, can read a
tool's schema and hints: see ``tasks/builtin/mcp_call.py``.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpcore
import httpcore2
import httpx2
import jsonschema  # type: ignore[import-untyped]  # no stubs pinned
import mcp_types as types
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from hansa import errors
from hansa.domain.secrets import is_secret_header, mask_text, mask_url
from hansa.tasks.base import TaskFailed
from hansa.tasks.connectors import bounded, mcp_config, outbound
from hansa.tasks.connectors.mcp_config import HttpServer, StdioServer

LISTING_SECONDS = 30.0
"""How long a listing stays fresh for ``GET /api/projects/{id}/mcp-tools``; a call always
lists again."""
LISTINGS_KEPT = 256
"""Servers whose listing the process keeps: a listing is keyed by its config entry's
fingerprint, so each edit of a server's entry adds one, and the replaced ones are never asked
for again (issue 35)."""
MAX_PROBLEMS = 5


@dataclass(frozen=True)
class ToolFacts:
    """What a server says of one tool."""

    name: str
    description: str
    input_schema: dict[str, Any]
    read_only: bool | None
    """``annotations.readOnlyHint`` (None: not given, which MCP reads as false)."""
    destructive: bool | None
    """``annotations.destructiveHint`` (None: not given, which MCP reads as true)."""

    @property
    def needs_confirmation(self) -> bool:
        """The law of no return on a call: only a tool the server calls read-only changes
        nothing; every other one (destructive, or without hints) waits for consent."""
        return self.read_only is not True

    @classmethod
    def of(cls, tool: types.Tool) -> ToolFacts:
        """The facts of an SDK tool."""
        hints = tool.annotations
        return cls(
            name=tool.name,
            description=tool.description or "",
            input_schema=dict(tool.input_schema),
            read_only=hints.read_only_hint if hints else None,
            destructive=hints.destructive_hint if hints else None,
        )


def argument_problems(schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> list[str]:
    """How ``arguments`` break the tool's input schema, in plain words (empty: none)."""
    try:
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
    except jsonschema.SchemaError:
        return []  # the server's schema is broken: it has the last word on its arguments
    validator = cls(schema)
    found = []
    for err in sorted(validator.iter_errors(dict(arguments)), key=lambda e: list(e.path)):
        where = ".".join(["arguments", *(str(p) for p in err.path)])
        found.append(f"{where}: {mask_text(err.message)[:200]}")
    return found[:MAX_PROBLEMS]


class ToolCatalog:
    """The latest listing of each server, by its stored config entry's fingerprint."""

    def __init__(self) -> None:
        self._listings: dict[str, tuple[float, dict[str, ToolFacts]]] = {}

    def known(self, key: str) -> dict[str, ToolFacts] | None:
        """The latest listing of the server (of any age), or None if it was never listed."""
        found = self._listings.get(key)
        return found[1] if found else None

    def fresh(self, key: str, seconds: float = LISTING_SECONDS) -> dict[str, ToolFacts] | None:
        """The listing if it is younger than ``seconds``."""
        found = self._listings.get(key)
        if found is None or time.monotonic() - found[0] > seconds:
            return None
        return found[1]

    def keep(self, key: str, tools: Iterable[ToolFacts]) -> dict[str, ToolFacts]:
        """Record a listing; returns it by tool name."""
        listing = {t.name: t for t in tools}
        self._listings.pop(key, None)  # re-inserted: the newest, the last to be forgotten
        while len(self._listings) >= LISTINGS_KEPT:
            del self._listings[next(iter(self._listings))]  # the least recently listed
        self._listings[key] = (time.monotonic(), listing)
        return listing

    def __len__(self) -> int:
        return len(self._listings)


CATALOG = ToolCatalog()
"""The process's listings: a cache of outside answers (a call always lists again, and a
listing of any age only makes the laws' verdict exact, never laxer than "ask first")."""


class _VettingBackend(httpcore2.AsyncNetworkBackend):
    """httpcore2's backend (the MCP SDK's httpx2) connecting only to vetted addresses."""

    def __init__(self, policy: outbound.OutboundPolicy) -> None:
        self._policy = policy
        self._inner = httpcore2.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore2's signature)
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        try:
            found = await outbound.vetted_addresses(self._policy, host, port)
        except httpcore.ConnectError as exc:
            raise httpcore2.ConnectError(str(exc)) from exc
        error: Exception = httpcore2.ConnectError(f"no address for {host}")
        for ip in found:
            try:
                return await self._inner.connect_tcp(
                    str(ip), port, timeout, local_address, socket_options
                )
            except (httpcore2.ConnectError, httpcore2.ConnectTimeout) as exc:
                error = exc
        raise error

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class _BoundedStream(httpx2.AsyncByteStream):
    """A response body decoded by ``bounded.BoundedBody`` as it arrives: the SDK reads
    whatever it is given, so the cap is kept below it."""

    def __init__(self, raw: httpx2.AsyncByteStream, body: bounded.BoundedBody) -> None:
        self._raw = raw
        self._body = body

    def __aiter__(self) -> AsyncIterator[bytes]:
        return bounded.decoded(self._raw, self._body)

    async def aclose(self) -> None:
        await self._raw.aclose()


class _VettedTransport(httpx2.AsyncHTTPTransport):
    def __init__(self, policy: outbound.OutboundPolicy) -> None:
        super().__init__(trust_env=False)
        self._limit = policy.max_response_bytes
        # as outbound._VettedTransport: the pool is rebuilt around the vetting backend
        self._pool = httpcore2.AsyncConnectionPool(
            ssl_context=httpx2.create_ssl_context(trust_env=False),
            network_backend=_VettingBackend(policy),
        )

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        """The answer with its body decoded here, within the cap (``bounded.py``)."""
        request.headers["Accept-Encoding"] = "identity"
        response = await super().handle_async_request(request)
        assert isinstance(response.stream, httpx2.AsyncByteStream)
        encoding = response.headers.get("content-encoding")
        body = await bounded.opened(encoding, self._limit, request.url.host, response.aclose)
        return httpx2.Response(
            response.status_code,
            headers=bounded.plain_headers(response.headers.raw),
            stream=_BoundedStream(response.stream, body),
            extensions=response.extensions,
            request=request,
        )


@contextlib.asynccontextmanager
async def session(
    server: StdioServer | HttpServer, policy: outbound.OutboundPolicy
) -> AsyncIterator[ClientSession]:
    """An initialized session with ``server`` (its secrets in clear), closed after; every
    failure inside it, the caller's included, comes out as a TaskFailed.

    Raises:
        TaskFailed: ``outbound_denied`` for a refused HTTP target, ``mcp_unreachable`` when
            the server cannot be started or reached, ``tool_error`` when it refuses a request.
    """
    if isinstance(server, HttpServer):
        credentials = any(is_secret_header(h) for h in server.headers)
        outbound.check_target(policy, server.url, credentials=credentials)
    try:
        async with contextlib.AsyncExitStack() as stack:
            if isinstance(server, HttpServer):
                http = await stack.enter_async_context(
                    httpx2.AsyncClient(
                        transport=_VettedTransport(policy),
                        headers=server.headers,
                        timeout=server.timeout_seconds,
                        trust_env=False,
                    )
                )
                read, write = await stack.enter_async_context(
                    streamable_http_client(server.url, http_client=http)
                )
            else:
                params = StdioServerParameters(  # the SDK adds only PATH, HOME and the like
                    command=server.command,
                    args=server.args,
                    env=mcp_config.child_environment(server) or None,
                )
                read, write = await stack.enter_async_context(stdio_client(params))
            opened = await stack.enter_async_context(ClientSession(read, write))
            await opened.initialize()
            yield opened
    except Exception as exc:  # the SDK's and the transport's many ways to fail, often grouped
        raise unreachable(server, exc) from exc


def unreachable(server: StdioServer | HttpServer, exc: BaseException) -> TaskFailed:
    inner = exc
    while isinstance(inner, BaseExceptionGroup) and inner.exceptions:
        inner = inner.exceptions[0]
    if isinstance(inner, TaskFailed):
        return inner
    if isinstance(inner, MCPError):  # the server's own refusal (an unknown tool, say)
        return TaskFailed(
            f"the MCP server {server.name!r} refused: {mask_text(str(inner))[:300]}",
            code="tool_error",
        )
    where = mask_url(server.url) if isinstance(server, HttpServer) else server.command
    reason = mask_text(str(inner) or type(inner).__name__)[:200]
    return TaskFailed(
        f"the MCP server {server.name!r} ({where}) cannot be reached: {reason}",
        code="mcp_unreachable",
        retryable=True,
    )


async def list_tools(opened: ClientSession) -> list[ToolFacts]:
    """Every tool the session's server offers, following its pages."""
    found: list[ToolFacts] = []
    cursor: str | None = None
    for _ in range(100):
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await opened.list_tools(params=params)
        found.extend(ToolFacts.of(t) for t in page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return found


def result_of(called: types.CallToolResult) -> dict[str, Any]:
    """A tool's answer as a task's result: its text, its structured content and its other
    content blocks (without binary data)."""
    text = "\n".join(c.text for c in called.content if isinstance(c, types.TextContent))
    other = [
        c.model_dump(mode="json", by_alias=True, exclude={"data", "blob"})
        for c in called.content
        if not isinstance(c, types.TextContent)
    ]
    out: dict[str, Any] = {"text": text}
    if called.structured_content is not None:
        out["structured"] = called.structured_content
    if other:
        out["content"] = other
    return out


@dataclass(frozen=True)
class McpServers:
    """A project's MCP servers for one execution (the ``mcp`` connector)."""

    config: Mapping[str, Any]
    """The project's configuration as stored (secrets sealed)."""
    open_secrets: Callable[[Any], Any]
    """Opens sealed secrets (``SecretBox.open``)."""
    policy: outbound.OutboundPolicy
    operator: Mapping[str, StdioServer] = field(default_factory=dict)
    """The operator's stdio servers (``hansa.toml``), the only ones a project may name."""

    def server(self, name: str) -> tuple[str, StdioServer | HttpServer]:
        """The server called ``name``, its secrets in clear, with its catalog key.

        Raises:
            TaskFailed: ``connector_missing`` when the project names no such server, or a
                stdio server the operator does not (or no longer) configure(s).
        """
        entry = mcp_config.stored_entry(self.config, name)
        if entry is None:
            raise TaskFailed(unknown_server(self.config, name), code="connector_missing")
        try:
            (server,) = mcp_config.parse([self.open_secrets(dict(entry))])
        except errors.InvalidInput as exc:  # stored before stdio servers were the operator's
            raise TaskFailed(exc.message, code="connector_config") from exc
        if isinstance(server, HttpServer):
            return mcp_config.fingerprint(entry), server
        own = self.operator.get(server.name)
        if own is None:
            raise TaskFailed(
                f"this server has no stdio MCP server called {server.name!r}: the operator "
                f"configures them in hansa.toml ([{mcp_config.OPERATOR_SECTION}.<name>])",
                code="connector_missing",
            )
        # the entry's key, as the laws find it: the operator's command changes only with a
        # restart, which empties the catalog
        return mcp_config.fingerprint(entry), own


def unknown_server(config: Mapping[str, Any], name: str) -> str:
    """Why ``name`` names no server of ``config``, with the ones it has."""
    known = mcp_config.names(config)
    has = f"it has {', '.join(repr(n) for n in known)}" if known else "it has none"
    return f"this project has no MCP server called {name!r} ({has})"
