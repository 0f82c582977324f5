"""A webhook's URL checked before it is stored, by the outbound guard's own rules.

Deliveries go through ``tasks/connectors/outbound.call``, which checks every address it
connects to; this refuses at creation (422) what it would refuse then: a scheme other than
http(s), a host that is no host name, and a host that is or resolves to a loopback, private,
link-local or other non-public address unless ``HANSA_OUTBOUND_ALLOW`` lists it.
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

import anyio

from hansa import errors
from hansa.domain.secrets import mask_url
from hansa.tasks.connectors import addresses
from hansa.tasks.connectors.outbound import OutboundPolicy

_PORTS = {"http": 80, "https": 443}


def _refused(url: str, why: str) -> errors.InvalidInput:
    return errors.InvalidInput(
        f"refused webhook url {mask_url(url)!r}: {why}", details={"field": "url"}
    )


async def check(policy: OutboundPolicy, url: str, *, field: str = "url") -> None:
    """InvalidInput (``details.field``: ``field``) unless the outbound guard admits ``url``."""
    try:
        await _check(policy, url)
    except errors.InvalidInput as exc:
        raise errors.InvalidInput(exc.message, details={**exc.details, "field": field}) from None


async def _check(policy: OutboundPolicy, url: str) -> None:
    try:
        parts = urlsplit(url)
        port = parts.port or _PORTS.get(parts.scheme, 0)
        host = parts.hostname or ""
    except ValueError as exc:
        raise _refused(url, f"not a valid URL ({exc})") from exc
    if parts.scheme not in _PORTS:
        raise _refused(url, "only http and https URLs may be called")
    if parts.username or parts.password:
        raise _refused(url, "credentials in the URL are not sent; the signature authenticates")
    name = addresses.canonical(host)
    written = host.strip("[]").rstrip(".").lower()
    literal = addresses.literal_ip(written)
    if literal is not None and str(literal) != written:
        raise _refused(url, f"{written} is {literal} written another way")
    if literal is None and not addresses.HOSTNAME.fullmatch(name):
        raise _refused(url, "bad host")
    if (name, port) in policy.allow:
        return
    found = addresses.fixed_addresses(name)
    if found is None:
        try:
            infos = await anyio.getaddrinfo(name, port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError) as exc:
            raise _refused(url, f"cannot resolve {name}") from exc
        found = list(dict.fromkeys(ipaddress.ip_address(info[4][0]) for info in infos))
    for ip in found:
        reason = addresses.deny_reason(ip)
        if reason and (str(ip), port) not in policy.allow:
            raise _refused(
                url,
                f"{ip} is {reason}; list the target in HANSA_OUTBOUND_ALLOW to admit it",
            )
