"""Who is calling: principals, their roles, and the API keys that name them.

A principal belongs to exactly one tenant, and that tenant comes from its key, never
from a request body. Three kinds:

- ``user``: an admin or member key (a person, or a script acting for one);
- ``agent``: a token bound to one registered agent, which may act only as that agent;
- ``local``: no key at all, on a server that listens on loopback only and has no key
  yet (local mode): the default tenant, with the admin's rights.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from pydantic import Field

from hansa import errors
from hansa.domain.base import Wire

TENANT_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,35}$"
"""A tenant id: letters, digits, ``_ . -``, at most 36 characters (it is a primary key)."""

KEY_PREFIX = "hk_"
"""Every API key and agent token starts with this, so that it is recognisable in a leak."""


class Role(StrEnum):
    """What a principal may do (docs/security.md, "Roles")."""

    ADMIN = "admin"
    """Everything in its tenant, including keys, agents and project settings."""
    MEMBER = "member"
    """Everyday work: conversations, runs, confirmations, rules; not keys, agents, projects."""
    AGENT = "agent"
    """Acts as one registered agent: reads conversations, posts as itself, runs its tasks."""


class Kind(StrEnum):
    """How a principal was established."""

    USER = "user"
    AGENT = "agent"
    LOCAL = "local"


class Principal(Wire):
    """The authenticated caller of one request."""

    tenant_id: str
    kind: Kind
    id: str
    """The key's id for a user, the agent's id for an agent, ``local`` in local mode."""
    role: Role
    key_id: str | None = None
    """The key that authenticated the request (None in local mode)."""

    def may_act_as(self, agent_id: str) -> bool:
        """An agent principal acts only as its own agent; people may direct any agent."""
        return self.kind is not Kind.AGENT or agent_id == self.id


class ApiKey(Wire):
    """A stored key: never its secret, which is shown once and kept only as a hash."""

    id: str
    tenant_id: str
    name: str = Field(max_length=200)
    role: Role
    agent_id: str | None = None
    """For an agent token, the agent it is bound to."""
    hint: str
    """The first characters of the secret (``hk_AbCd…``), to tell keys apart in a list."""
    created_at: datetime
    revoked_at: datetime | None = None

    def principal(self) -> Principal:
        """The principal this key authenticates."""
        if self.role is Role.AGENT:
            assert self.agent_id is not None, "an agent token names its agent"
            return Principal(
                tenant_id=self.tenant_id,
                kind=Kind.AGENT,
                id=self.agent_id,
                role=self.role,
                key_id=self.id,
            )
        return Principal(
            tenant_id=self.tenant_id, kind=Kind.USER, id=self.id, role=self.role, key_id=self.id
        )


class Unauthenticated(errors.UserError):
    """No key, or a key that is unknown or revoked (401)."""

    code = "unauthenticated"
    status = 401


class Forbidden(errors.UserError):
    """The principal's role does not allow the request (403)."""

    code = "forbidden"
    status = 403


class OriginDenied(Forbidden):
    """A request from another site, or to a host name that is not this server's (403)."""

    code = "origin_denied"
