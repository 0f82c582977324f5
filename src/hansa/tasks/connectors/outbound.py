"""Outbound HTTP that refuses server-side request forgery: the one guard of every connector.

``webhook.call`` (:func:`call`) and the WordPress and WooCommerce connectors
(:class:`OutboundClient`) connect through ``_VettingBackend.connect_tcp``: it resolves the host
itself, checks every address, and connects to a checked address (never re-resolving, so DNS
rebinding cannot swap in another one). The URL, Host header and TLS server name stay the
original ones. Loopback, private, link-local (cloud metadata) and other non-public targets are
refused unless ``HANSA_OUTBOUND_ALLOW`` lists them; credentials go only over https unless it
does; proxies and ``.netrc`` from the environment are ignored; bodies are capped both ways,
a response by the bytes it decompresses to (``bounded.py``).
Webhook redirects are followed here, one hop at a time, so each hop is checked too; connectors
follow none.
"""

from __future__ import annotations

import ipaddress
import json
import socket
from collections.abc import AsyncIterator, Iterable, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Self
from urllib.parse import urljoin, urlsplit, urlunsplit

import anyio
import httpcore
import httpx

from hansa.domain.secrets import is_secret_header, mask_url
from hansa.tasks.base import Result, TaskFailed
from hansa.tasks.connectors import addresses, bounded

_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
_UNSENT_HEADERS = ("host", "content-length", "transfer-encoding", "connection")
_CREDENTIAL_HEADERS = ("authorization", "proxy-authorization", "cookie")
_DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass(frozen=True)
class OutboundPolicy:
    """What connectors and ``webhook.call`` may reach, and how much they may send, wait for
    and read."""

    allow: frozenset[tuple[str, int]] = frozenset()
    """``(host, port)`` targets admitted even though they are loopback or private."""
    timeout_seconds: float = 10
    """Deadline for a whole webhook call, redirects included (connectors set their own)."""
    max_response_bytes: int = 1_048_576
    """Largest response body read, decompressed (``HANSA_OUTBOUND_MAX_RESPONSE_BYTES``);
    more fails with ``response_too_large``."""
    max_request_bytes: int = 1_048_576
    """Largest request body sent; more fails with ``request_too_large``."""
    max_redirects: int = 5
    """Redirect hops followed (each one checked) before giving up."""
    allowed_schemes: tuple[str, ...] = ("http", "https")
    """URL schemes that may be called at all."""

    def __post_init__(self) -> None:
        # Match on canonical spellings: "LOCALHOST." is "localhost", "[::1]" is "::1".
        canonical = frozenset((addresses.canonical(host), port) for host, port in self.allow)
        object.__setattr__(self, "allow", canonical)

    @classmethod
    def parse(cls, text: str, *, max_response_bytes: int = 1_048_576) -> OutboundPolicy:
        """Build a policy from ``HANSA_OUTBOUND_ALLOW``, e.g. ``"127.0.0.1:8080,localhost:9000"``.

        Args:
            text: Comma-separated ``host:port`` entries; IPv6 hosts in brackets (``[::1]:80``).
            max_response_bytes: ``HANSA_OUTBOUND_MAX_RESPONSE_BYTES``.

        Returns:
            A policy admitting exactly those targets, with default limits but the
            response's.

        Raises:
            ValueError: An entry is not ``host:port`` with a valid host and a port 1-65535.
        """
        allow: set[tuple[str, int]] = set()
        for entry in (part.strip() for part in text.split(",")):
            if not entry:
                continue
            host, _, port_text = entry.rpartition(":")
            bad = f"HANSA_OUTBOUND_ALLOW entry {entry!r}"
            if not host or not port_text.isdigit() or not 1 <= int(port_text) <= 65535:
                raise ValueError(f"{bad} is not host:port with a port from 1 to 65535")
            if ":" in host and not host.startswith("["):
                raise ValueError(f"{bad}: write an IPv6 address in brackets, like [::1]:8080")
            name = addresses.canonical(host)
            if addresses.literal_ip(name) is None and not addresses.HOSTNAME.fullmatch(name):
                raise ValueError(f"{bad} does not name a valid host")
            allow.add((name, int(port_text)))
        return cls(allow=frozenset(allow), max_response_bytes=max_response_bytes)


async def _vet(policy: OutboundPolicy, host: str, port: int) -> list[addresses.IPAddress]:
    """The addresses ``host`` may be reached at; TaskFailed if any of them is refused."""
    name = addresses.canonical(host)
    found = addresses.fixed_addresses(name)
    if found is None:
        try:
            infos = await anyio.getaddrinfo(name, port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError) as exc:
            raise httpcore.ConnectError(f"cannot resolve {host}: {exc}") from exc
        found = list(dict.fromkeys(ipaddress.ip_address(info[4][0]) for info in infos))
    if (name, port) in policy.allow:
        return found
    for ip in found:
        reason = addresses.deny_reason(ip)
        if reason and (str(ip), port) not in policy.allow:
            shown = host if str(ip) == name else f"{host} (which resolves to {ip})"
            raise TaskFailed(
                f"refused to call {shown} on port {port}: {ip} is {reason}; "
                "list the target in HANSA_OUTBOUND_ALLOW to admit it",
                code="outbound_denied",
            )
    return found


class _VettingBackend(httpcore.AsyncNetworkBackend):
    """Opens TCP connections only to vetted addresses; all other I/O is delegated."""

    def __init__(self, policy: OutboundPolicy) -> None:
        self._policy = policy
        self._inner = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore's signature)
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        error: Exception = httpcore.ConnectError(f"no address for {host}")
        for ip in await _vet(self._policy, host, port):
            try:
                return await self._inner.connect_tcp(
                    str(ip), port, timeout, local_address, socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                error = exc
        raise error

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class _BoundedStream(httpx.AsyncByteStream):
    """A response body decoded by ``bounded.BoundedBody`` as it arrives."""

    def __init__(self, raw: httpx.AsyncByteStream, body: bounded.BoundedBody) -> None:
        self._raw = raw
        self._body = body

    def __aiter__(self) -> AsyncIterator[bytes]:
        return bounded.decoded(self._raw, self._body)

    async def aclose(self) -> None:
        await self._raw.aclose()


class _VettedTransport(httpx.AsyncHTTPTransport):
    def __init__(self, policy: OutboundPolicy) -> None:
        super().__init__(trust_env=False)
        self._limit = policy.max_response_bytes
        # httpx 0.28 has no public hook for the network backend, so the pool its methods use
        # is replaced by one built with public httpcore options (tests prove it is used).
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=httpx.create_ssl_context(trust_env=False),
            network_backend=_VettingBackend(policy),
        )

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """The answer with its body decoded here, within the cap (``bounded.py``)."""
        response = await super().handle_async_request(request)
        assert isinstance(response.stream, httpx.AsyncByteStream)
        encoding = response.headers.get("content-encoding")
        body = await bounded.opened(encoding, self._limit, request.url.host, response.aclose)
        return httpx.Response(
            response.status_code,
            headers=bounded.plain_headers(response.headers.raw),
            stream=_BoundedStream(response.stream, body),
            extensions=response.extensions,
            request=request,
        )


def _spelled_out(url: str) -> str:
    """``url`` with a legacy IPv4 host (``0177.0.0.1``, refused by httpx) written plainly."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    ip = addresses.literal_ip(host)
    if not isinstance(ip, ipaddress.IPv4Address) or str(ip) == host:
        return url
    userinfo, at, hostport = parts.netloc.rpartition("@")
    return urlunsplit(parts._replace(netloc=userinfo + at + hostport.replace(host, str(ip), 1)))


def _refuse_disguised(url: str) -> None:
    """An internal address written unusually (``2130706433``, ``0x7f000001``, ``127.1``)
    is refused even when its usual spelling is allowed: the allow list names exact targets."""
    try:
        written = (urlsplit(url).hostname or "").strip("[]").rstrip(".").lower()
    except ValueError:
        return  # not a URL at all: _target says so
    ip = addresses.literal_ip(written)
    reason = addresses.deny_reason(ip) if ip is not None and str(ip) != written else None
    if reason:
        raise TaskFailed(
            f"refused to call {written}: it is {ip}, {reason}, written another way, "
            "which HANSA_OUTBOUND_ALLOW never admits",
            code="outbound_denied",
        )


def _target(policy: OutboundPolicy, url: str) -> httpx.URL:
    _refuse_disguised(url)
    try:
        parsed = httpx.URL(_spelled_out(url))
    except (httpx.InvalidURL, ValueError) as exc:
        raise TaskFailed(f"not a valid URL: {mask_url(url)!r} ({exc})", code="bad_url") from exc
    if parsed.scheme not in policy.allowed_schemes:
        schemes = " and ".join(policy.allowed_schemes)
        message = f"refused to call {mask_url(url)!r}: only {schemes} URLs may be called"
        raise TaskFailed(message, code="outbound_denied")
    name = addresses.canonical(parsed.host)
    if addresses.literal_ip(name) is None and not addresses.HOSTNAME.fullmatch(name):
        raise TaskFailed(f"not a valid URL: {mask_url(url)!r} (bad host)", code="bad_url")
    return parsed


def _listed(policy: OutboundPolicy, target: httpx.URL) -> bool:
    port = target.port or _DEFAULT_PORTS.get(target.scheme, 0)
    return (addresses.canonical(target.host), port) in policy.allow


def _credentials_over(policy: OutboundPolicy, target: httpx.URL) -> None:
    """Credentials go over https only, unless the operator listed the target."""
    if target.scheme != "https" and not _listed(policy, target):
        raise TaskFailed(
            f"refused to send credentials to {target.host} over plain http: use an https "
            "address (or list the target in HANSA_OUTBOUND_ALLOW)",
            code="outbound_denied",
        )


def check_target(policy: OutboundPolicy, url: str, *, credentials: bool) -> None:
    """Refuse ``url`` before any connection, as a webhook's is refused: a scheme other than
    http(s), a bad or disguised host, or (``credentials``) credentials over plain http to a
    target the operator did not list. Raises TaskFailed (``outbound_denied``, ``bad_url``)."""
    target = _target(policy, url)
    if credentials:
        _credentials_over(policy, target)


async def vetted_addresses(
    policy: OutboundPolicy, host: str, port: int
) -> list[addresses.IPAddress]:
    """The addresses ``host`` may be reached at (connect to these, never re-resolve);
    TaskFailed (``outbound_denied``) if any is refused. For transports other than httpx's
    (the MCP client's) that vet their own connections."""
    return await _vet(policy, host, port)


def stays_inside(policy: OutboundPolicy, url: str) -> bool:
    """Whether a call to ``url`` can carry nothing past what the operator vetted.

    True when the target is listed in the policy, or when the guard refuses it before any
    connection (a literal internal address, a disguised one, a bad URL). False for every
    other host: what is sent there leaves for good.
    """
    try:
        target = _target(policy, url)
    except TaskFailed:
        return True
    if _listed(policy, target):
        return True
    fixed = addresses.fixed_addresses(addresses.canonical(target.host))
    port = target.port or _DEFAULT_PORTS[target.scheme]
    return fixed is not None and any(
        addresses.deny_reason(ip) is not None and (str(ip), port) not in policy.allow
        for ip in fixed
    )


def _encode(body: Any) -> tuple[bytes, str | None]:
    if body is None:
        return b"", None
    if isinstance(body, str):
        return body.encode(), "text/plain; charset=utf-8"
    try:
        return json.dumps(body, allow_nan=False).encode(), "application/json"
    except (TypeError, ValueError) as exc:
        raise TaskFailed(f"the body cannot be sent as JSON: {exc}", code="bad_body") from exc


async def _read(response: httpx.Response, limit: int) -> Result:
    data = await _capped(response, limit)
    content_type = response.headers.get("content-type", "")
    body: Any = data.decode(response.encoding or "utf-8", errors="replace")
    media = content_type.split(";")[0].strip().lower()
    if media == "application/json" or media.endswith("+json"):
        try:
            body = json.loads(data)
        except ValueError:
            pass
    headers = {"content-type": content_type} if content_type else {}
    return {
        "statusCode": response.status_code,
        "body": body,
        "headers": headers,
        "url": str(response.url),
    }


async def call(
    policy: OutboundPolicy,
    *,
    url: str,
    method: str,
    headers: dict[str, str] | None = None,
    body: Any = None,
    idempotency_key: str,
) -> Result:
    """Call ``url`` unless it (or any redirect hop) reaches a loopback or private address.

    Args:
        policy: Admitted targets and limits.
        url: An ``http`` or ``https`` URL.
        method: One of GET, POST, PUT, PATCH, DELETE.
        headers: Extra request headers.
        body: A string (sent as text) or any other JSON value (sent as JSON).
        idempotency_key: Sent as ``Idempotency-Key`` so the receiver can drop repeats.

    Returns:
        ``{statusCode, body, headers, url}``: the body parsed when it is JSON, else text;
        ``headers`` holds ``content-type``; ``url`` is the final URL. 5xx answers are results.

    Raises:
        TaskFailed: ``outbound_denied``, ``bad_method``, ``bad_url``, ``bad_body``,
            ``request_too_large``, ``response_too_large``, ``too_many_redirects``, and the
            retryable ``timeout`` and ``connection_failed``.
    """
    verb = method.upper()
    if verb not in _METHODS:
        message = f"method {method!r} is not one of {', '.join(_METHODS)}"
        raise TaskFailed(message, code="bad_method")
    content, content_type = _encode(body)
    if len(content) > policy.max_request_bytes:
        limit = policy.max_request_bytes
        raise TaskFailed(f"the body is larger than {limit} bytes", code="request_too_large")
    target = _target(policy, url)
    sent = httpx.Headers(headers or {})
    for name in _UNSENT_HEADERS:
        sent.pop(name, None)
    if any(is_secret_header(name) for name in sent) or target.userinfo:
        _credentials_over(policy, target)
    if content_type and "content-type" not in sent:
        sent["Content-Type"] = content_type
    sent["Idempotency-Key"] = idempotency_key
    sent["Accept-Encoding"] = "identity"  # no compressed bombs: the cap counts what we hold
    try:
        with anyio.fail_after(policy.timeout_seconds):
            return await _follow(policy, target, verb, sent, content)
    except (TimeoutError, httpx.TimeoutException) as exc:
        message = f"{mask_url(url)} did not answer in time"
        raise TaskFailed(message, code="timeout", retryable=True) from exc
    except httpx.TransportError as exc:
        message = f"could not reach {mask_url(url)}: {type(exc).__name__}"
        raise TaskFailed(message, code="connection_failed", retryable=True) from exc


async def _follow(
    policy: OutboundPolicy, target: httpx.URL, verb: str, sent: httpx.Headers, content: bytes
) -> Result:
    async with _client(policy, policy.timeout_seconds) as client:
        for _ in range(policy.max_redirects + 1):
            request = client.build_request(verb, target, headers=sent, content=content or None)
            response = await client.send(request, stream=True, follow_redirects=False)
            try:
                if not response.has_redirect_location:
                    return await _read(response, policy.max_response_bytes)
                hop = _target(policy, urljoin(str(target), response.headers["location"]))
            finally:
                await response.aclose()
            if response.status_code in (302, 303) or (response.status_code, verb) == (301, "POST"):
                verb, content = "GET", b""
                sent.pop("content-type", None)
            if (hop.scheme, hop.host, hop.port) != (target.scheme, target.host, target.port):
                # a service's credentials go to it alone, whatever their header's name
                for name in [n for n in sent if n in _CREDENTIAL_HEADERS or is_secret_header(n)]:
                    sent.pop(name, None)
            target = hop
    limit = policy.max_redirects
    shown = mask_url(str(target))
    raise TaskFailed(f"more than {limit} redirects from {shown}", code="too_many_redirects")


def _client(policy: OutboundPolicy, timeout: float) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        transport=_VettedTransport(policy),
        timeout=timeout,
        trust_env=False,
        follow_redirects=False,
    )


async def _capped(response: httpx.Response, limit: int) -> bytes:
    data = bytearray()
    async for chunk in response.aiter_bytes():  # counted as it arrives, whatever the headers say
        data += chunk
        if len(data) > limit:
            message = f"the response is larger than {limit} bytes"
            raise TaskFailed(message, code="response_too_large")
    return bytes(data)


@dataclass(frozen=True)
class Reply:
    """A connector's answer, read whole within the size cap."""

    status_code: int
    headers: httpx.Headers
    content: bytes

    @property
    def is_success(self) -> bool:
        """A 2xx status."""
        return 200 <= self.status_code < 300

    def json(self) -> Any:
        """The body as JSON; ValueError when it is not."""
        return json.loads(self.content)


class Closing:
    """``async with`` for anything with an ``aclose``: closed on the way out."""

    async def aclose(self) -> None:
        """Release what the object holds."""

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


class OutboundClient(Closing):
    """The HTTP client of the WordPress and WooCommerce connectors, under the webhook guard.

    Every request is checked like ``webhook.call``'s (vetted addresses, no proxies from the
    environment, capped bodies); redirects are not followed (the caller sees the 3xx);
    Basic credentials go over https only unless the target is listed.

    Args:
        policy: Admitted targets and limits.
        timeout: Deadline of one request, reading its answer included.
    """

    def __init__(self, policy: OutboundPolicy, *, timeout: float) -> None:
        self._policy = policy
        self._timeout = timeout
        self._client = _client(policy, timeout)

    async def aclose(self) -> None:
        """Close the connections."""
        await self._client.aclose()

    async def send(
        self,
        method: str,
        url: str,
        *,
        params: Mapping[str, str] | None = None,
        json: Any = None,
        auth: tuple[str, str] | None = None,
    ) -> Reply:
        """Send one request and read its answer.

        Raises:
            TaskFailed: ``outbound_denied``, ``bad_url``, ``request_too_large``,
                ``response_too_large``.
            httpx.TimeoutException: No whole answer within the deadline.
            httpx.TransportError: No connection.
        """
        target = _target(self._policy, url)
        if auth is not None:
            _credentials_over(self._policy, target)
        request = self._client.build_request(method, target, params=params, json=json)
        request.headers["Accept-Encoding"] = "identity"  # the cap counts what we hold
        if len(request.content) > self._policy.max_request_bytes:
            limit = self._policy.max_request_bytes
            raise TaskFailed(f"the body is larger than {limit} bytes", code="request_too_large")
        try:
            with anyio.fail_after(self._timeout):
                response = await self._client.send(
                    request, auth=httpx.BasicAuth(*auth) if auth else None, stream=True
                )
                try:
                    content = await _capped(response, self._policy.max_response_bytes)
                finally:
                    await response.aclose()
        except TimeoutError as exc:
            raise httpx.ReadTimeout("no whole answer in time", request=request) from exc
        return Reply(response.status_code, response.headers, content)
