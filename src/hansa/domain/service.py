"""A tenant's named outbound service: where ``service.call`` sends a request that names it.

A graph or a rule names a service (``{"service": "logging", "path": "/api/logs/query"}``)
instead of writing an address and credentials into its nodes: the service holds its base
URL (checked by the outbound guard when it is saved), its headers (credentials sealed at
rest like every stored secret, never shown in clear) and the methods a graph or rule may
call on it without a person's confirmation (``unattendedMethods``). Any other call to it,
and any call to an address written in a node, waits for a person as before.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal
from urllib.parse import urlsplit

from hansa.domain.base import Wire

Method = Literal["GET", "POST", "PUT", "PATCH", "DELETE"]
METHODS: tuple[Method, ...] = ("GET", "POST", "PUT", "PATCH", "DELETE")
NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]{0,63}$"
"""A service's name, as a node's ``service`` names it."""
MAX_HEADERS = 20
"""Headers one service may send."""
MAX_HEADER_CHARS = 4_000
"""The longest header value."""


class Service(Wire):
    """A stored service; ``headers`` as stored (secrets sealed when sealing is on)."""

    id: str
    tenant_id: str
    name: str
    base_url: str
    headers: dict[str, str]
    unattended_methods: list[Method]
    """What a graph or rule may call without a person's confirmation; the rest waits."""
    created_at: datetime
    updated_at: datetime

    def url(self, path: str | None) -> str:
        """``path`` (starting with ``/``) on the service's base URL."""
        return self.base_url.rstrip("/") + (path or "")

    def unattended(self, method: str) -> bool:
        """Whether a call by ``method`` may be made without a person's confirmation."""
        return method in self.unattended_methods


def same_origin(base_url: str, url: str) -> bool:
    """Whether ``url`` goes where ``base_url`` does (scheme, host and port): a path filled
    from a template never steers a call to another host."""
    try:
        base, there = urlsplit(base_url), urlsplit(url)
        return (base.scheme, base.hostname, base.port) == (there.scheme, there.hostname, there.port)
    except ValueError:
        return False
