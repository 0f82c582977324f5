"""A tenant's named outbound services (``/api/services``)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from hansa.api.schemas import Body
from hansa.domain.service import MAX_HEADER_CHARS, NAME_PATTERN, Method, Service


class ServiceOut(Service):
    """A named service: its base URL, its headers (credentials masked: ``***``), and the
    methods graphs and rules may call on it without a person's confirmation."""


_Headers = dict[
    Annotated[str, Field(min_length=1, max_length=100)],
    Annotated[str, Field(max_length=MAX_HEADER_CHARS)],
]


class ServiceCreate(Body):
    """``POST /api/services``."""

    name: str = Field(pattern=NAME_PATTERN, examples=["logging"])
    """What a ``service.call`` names (``{"service": "logging"}``); unique per tenant."""
    base_url: str = Field(min_length=1, max_length=2000, examples=["https://logs.example.com"])
    headers: _Headers = Field(default_factory=dict, examples=[{"Authorization": "Bearer …"}])
    """Sent with every call; credentials are sealed at rest and shown as ``***``."""
    unattended_methods: list[Method] = Field(default_factory=list, max_length=5)
    """The methods graphs and rules may call without a person's confirmation."""


class ServicePatch(Body):
    """``PATCH /api/services/{name}``: what is given changes; ``headers`` is the whole set
    (a value sent back as ``***`` keeps the stored one)."""

    base_url: str | None = Field(default=None, min_length=1, max_length=2000)
    headers: _Headers | None = None
    unattended_methods: list[Method] | None = Field(default=None, max_length=5)


__all__ = ["ServiceCreate", "ServiceOut", "ServicePatch"]
