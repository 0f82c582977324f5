"""Host names and IP addresses as the outbound guard reads them: every spelling of an
address, and why an address is not a public one."""

from __future__ import annotations

import ipaddress
import re
import socket

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

HOSTNAME = re.compile(r"[a-z0-9_-]+(\.[a-z0-9_-]+)*")
"""A canonical host name (lowercase, no trailing dot)."""
_NUMERIC_V4 = re.compile(r"(0x[0-9a-f]*|[0-9]+)(\.(0x[0-9a-f]*|[0-9]+)){0,3}", re.IGNORECASE)
_LOCALHOST = (ipaddress.ip_address("127.0.0.1"), ipaddress.ip_address("::1"))
_CGNAT = ipaddress.ip_network("100.64.0.0/10")
_V4_COMPATIBLE = ipaddress.ip_network("::/96")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def literal_ip(host: str) -> IPAddress | None:
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


def canonical(host: str) -> str:
    """``host`` as the allow list compares it: lowercase, no brackets or trailing dot, an
    address in its usual spelling."""
    name = host.strip().lower().strip("[]").rstrip(".")
    ip = literal_ip(name)
    return str(ip) if ip is not None else name


def deny_reason(ip: IPAddress) -> str | None:
    """Why ``ip`` is not a public address (loopback, private, link-local…), or None."""
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = ip.ipv4_mapped or ip.sixtofour
        if embedded is None and (ip in _NAT64 or (ip in _V4_COMPATIBLE and int(ip) > 1)):
            embedded = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        if embedded is not None:
            reason = deny_reason(embedded)
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


def fixed_addresses(name: str) -> list[IPAddress] | None:
    """The addresses a canonical host name means without asking DNS, or None."""
    literal = literal_ip(name)
    if literal is not None:
        return [literal]
    if name == "localhost" or name.endswith(".localhost"):
        return list(_LOCALHOST)  # RFC 6761: always loopback, never asked of DNS
    return None
