"""Health, the caller and its tenant, API keys."""

from __future__ import annotations

from typing import Literal

from hansa.api.models.base import Out
from hansa.domain.base import Wire
from hansa.domain.principal import ApiKey, Role


class Alive(Wire):
    """``GET /healthz``."""

    status: Literal["ok"]


class Ready(Wire):
    """``GET /readyz``: the database takes a write."""

    status: Literal["ready"]


class TenantOut(Wire):
    """``GET /api/tenant``."""

    id: str
    name: str


class PrincipalOut(Out):
    """Who calls: a person's or a script's key (``user``), an agent's token, or local mode."""

    kind: Literal["user", "agent", "local"]
    """``principal.Kind``'s values (an enum of its own would clash with a message's kind)."""
    id: str
    """The key's id, the agent's id, or ``local``."""
    role: Role


class Me(Out):
    """``GET /api/me``, ``POST /api/session``."""

    tenant_id: str
    principal: PrincipalOut


class KeyCreated(ApiKey):
    """A new key or agent token: its secret, ``key``, is in this answer and nowhere else."""

    key: str
    """The secret (``hk_…``): send it as ``Authorization: Bearer <key>``."""


__all__ = ["Alive", "ApiKey", "KeyCreated", "Me", "PrincipalOut", "Ready", "TenantOut"]
