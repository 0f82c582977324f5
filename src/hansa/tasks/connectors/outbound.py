"""Outbound HTTP for ``webhook.call`` that refuses server-side request forgery.

Every connection goes through ``_VettingBackend.connect_tcp``: it resolves the host itself,
checks every address, and connects to a checked address (never re-resolving, so DNS
rebinding cannot swap in another one). The URL, Host header and TLS server name stay the
original ones. Redirects are followed here, one hop at a time, so each hop is checked too.
"""

from __future__ import annotations

import ipaddress
import json
import re
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin, urlsplit, urlunsplit

import anyio
import httpcore
import httpx

from hansa.tasks.base import Result, TaskFailed

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
_NUMERIC_V4 = re.compile(r"(0x[0-9a-f]*|[0-9]+)(\.(0x[0-9a-f]*|[0-9]+)){0,3}", re.IGNORECASE)
_HOSTNAME = re.compile(r"[a-z0-9_-]+(\.[a-z0-9_-]+)*")
_LOCALHOST = (ipaddress.ip_address("127.0.0.1"), ipaddress.ip_address("::1"))
_CGNAT = ipaddress.ip_network("100.64.0.0/10")
_V4_COMPATIBLE = ipaddress.ip_network("::/96")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_UNSENT_HEADERS = ("host", "content-length", "transfer-encoding", "connection")
_CREDENTIAL_HEADERS = ("authorization", "proxy-authorization", "cookie")


def _literal_ip(host: str) -> IPAddress | None:
    """The address a numeric host means, in every spelling resolvers accept (``127.1``…)."""
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        pass
    if _NUMERIC_V4.fullmatch(host):
        try:
            return ipaddress.IPv4Address(socket.inet_aton(host))
        except OSError:
            return None
    return None


def _canonical(host: str) -> str:
    name = host.strip().lower().strip("[]").rstrip(".")
    ip = _literal_ip(name)
    return str(ip) if ip is not None else name


def _deny_reason(ip: IPAddress) -> str | None:
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = ip.ipv4_mapped or ip.sixtofour
        if embedded is None and (ip in _NAT64 or (ip in _V4_COMPATIBLE and int(ip) > 1)):
            embedded = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        if embedded is not None:
            reason = _deny_reason(embedded)
            return f"{reason} (written as IPv6)" if reason else None
    for reason, hit in (
        ("a loopback address", ip.is_loopback),
        ("the unspecified address", ip.is_unspecified),
        ("a link-local address (this includes the cloud metadata service)", ip.is_link_local),
        ("a multicast address", ip.is_multicast),
        ("a carrier-grade NAT address", ip in _CGNAT),
        ("a private address", ip.is_private),
        ("a reserved address", ip.is_reserved),
        ("not a public address", not ip.is_global),
    ):
        if hit:
            return reason
    return None


@dataclass(frozen=True)
class OutboundPolicy:
    """What ``webhook.call`` may reach, and how much it may send, wait for and read."""

    allow: frozenset[tuple[str, int]] = frozenset()
    """``(host, port)`` targets admitted even though they are loopback or private."""
    timeout_seconds: float = 10
    """Deadline for the whole call, redirects included."""
    max_response_bytes: int = 1_048_576
    """Largest response body read; more fails with ``response_too_large``."""
    max_request_bytes: int = 1_048_576
    """Largest request body sent; more fails with ``request_too_large``."""
    max_redirects: int = 5
    """Redirect hops followed (each one checked) before giving up."""
    allowed_schemes: tuple[str, ...] = ("http", "https")
    """URL schemes that may be called at all."""

    def __post_init__(self) -> None:
        # Match on canonical spellings: "LOCALHOST." is "localhost", "[::1]" is "::1".
        canonical = frozenset((_canonical(host), port) for host, port in self.allow)
        object.__setattr__(self, "allow", canonical)

    @classmethod
    def parse(cls, text: str) -> OutboundPolicy:
        """Build a policy from ``HANSA_OUTBOUND_ALLOW``, e.g. ``"127.0.0.1:8080,localhost:9000"``.

        Args:
            text: Comma-separated ``host:port`` entries; IPv6 hosts in brackets (``[::1]:80``).

        Returns:
            A policy admitting exactly those targets, with default limits.

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
            name = _canonical(host)
            if _literal_ip(name) is None and not _HOSTNAME.fullmatch(name):
                raise ValueError(f"{bad} does not name a valid host")
            allow.add((name, int(port_text)))
        return cls(allow=frozenset(allow))


async def _vet(policy: OutboundPolicy, host: str, port: int) -> list[IPAddress]:
    """The addresses ``host`` may be reached at; TaskFailed if any of them is refused."""
    name = _canonical(host)
    literal = _literal_ip(name)
    if literal is not None:
        addresses = [literal]
    elif name == "localhost" or name.endswith(".localhost"):
        addresses = list(_LOCALHOST)  # RFC 6761: always loopback, never asked of DNS
    else:
        try:
            infos = await anyio.getaddrinfo(name, port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError) as exc:
            raise httpcore.ConnectError(f"cannot resolve {host}: {exc}") from exc
        addresses = list(dict.fromkeys(ipaddress.ip_address(info[4][0]) for info in infos))
    if (name, port) in policy.allow:
        return addresses
    for ip in addresses:
        reason = _deny_reason(ip)
        if reason and (str(ip), port) not in policy.allow:
            shown = host if str(ip) == name else f"{host} (which resolves to {ip})"
            raise TaskFailed(
                f"refused to call {shown} on port {port}: {ip} is {reason}; "
                "list the target in HANSA_OUTBOUND_ALLOW to admit it",
                code="outbound_denied",
            )
    return addresses


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


class _VettedTransport(httpx.AsyncHTTPTransport):
    def __init__(self, policy: OutboundPolicy) -> None:
        super().__init__(trust_env=False)
        # httpx 0.28 has no public hook for the network backend, so the pool its methods use
        # is replaced by one built with public httpcore options (tests prove it is used).
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=httpx.create_ssl_context(trust_env=False),
            network_backend=_VettingBackend(policy),
        )


def _spelled_out(url: str) -> str:
    """``url`` with a legacy IPv4 host (``0177.0.0.1``, refused by httpx) written plainly."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    ip = _literal_ip(host)
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
    ip = _literal_ip(written)
    reason = _deny_reason(ip) if ip is not None and str(ip) != written else None
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
        raise TaskFailed(f"not a valid URL: {url!r} ({exc})", code="bad_url") from exc
    if parsed.scheme not in policy.allowed_schemes:
        schemes = " and ".join(policy.allowed_schemes)
        message = f"refused to call {url!r}: only {schemes} URLs may be called"
        raise TaskFailed(message, code="outbound_denied")
    name = _canonical(parsed.host)
    if _literal_ip(name) is None and not _HOSTNAME.fullmatch(name):
        raise TaskFailed(f"not a valid URL: {url!r} (bad host)", code="bad_url")
    return parsed


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
    data = bytearray()
    async for chunk in response.aiter_bytes():  # counted as it arrives, whatever the headers say
        data += chunk
        if len(data) > limit:
            message = f"the response is larger than {limit} bytes"
            raise TaskFailed(message, code="response_too_large")
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
    if content_type and "content-type" not in sent:
        sent["Content-Type"] = content_type
    sent["Idempotency-Key"] = idempotency_key
    sent["Accept-Encoding"] = "identity"  # no compressed bombs: the cap counts what we hold
    try:
        with anyio.fail_after(policy.timeout_seconds):
            return await _follow(policy, target, verb, sent, content)
    except (TimeoutError, httpx.TimeoutException) as exc:
        raise TaskFailed(f"{url} did not answer in time", code="timeout", retryable=True) from exc
    except httpx.TransportError as exc:
        message = f"could not reach {url}: {exc}"
        raise TaskFailed(message, code="connection_failed", retryable=True) from exc


async def _follow(
    policy: OutboundPolicy, target: httpx.URL, verb: str, sent: httpx.Headers, content: bytes
) -> Result:
    async with httpx.AsyncClient(
        transport=_VettedTransport(policy), timeout=policy.timeout_seconds, trust_env=False
    ) as client:
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
                for name in _CREDENTIAL_HEADERS:
                    sent.pop(name, None)
            target = hop
    limit = policy.max_redirects
    raise TaskFailed(f"more than {limit} redirects from {target}", code="too_many_redirects")
