"""Agents: the roster, and the agents a tenant registers (seed 001) with their tokens."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Response
from pydantic import ConfigDict, Field, StringConstraints, field_validator
from sqlalchemy import Connection

from hansa import errors
from hansa.api.deps import ServicesDep, TenantDep
from hansa.api.models.agents import AgentOut
from hansa.api.models.base import answers, never_null
from hansa.api.models.identity import KeyCreated
from hansa.api.routes.keys import key_out
from hansa.domain.agent import AgentDefinition, Category
from hansa.domain.base import Wire, new_id
from hansa.domain.principal import ApiKey, Role
from hansa.engine.runtime.services import Services
from hansa.engine.webhooks import agent_messages
from hansa.store import keys, principals

router = APIRouter(prefix="/api/agents", tags=["agents"])

Capability = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,63}$")]

REGISTERED_ORDERING = 1000
"""Registered agents come after the roster, and the panel does not offer them as a
recipient (they answer through their own tokens, not through Hans)."""


class AgentWebhooks(Wire):
    """An external assistant's webhooks (seed 001): where its messages are POSTed."""

    model_config = ConfigDict(extra="forbid")

    message: str = Field(min_length=1, max_length=2000)
    """An absolute http(s) URL the outbound guard admits (``HANSA_OUTBOUND_ALLOW`` for a
    private address); checked now, and again at each delivery."""
    secret: str | None = Field(default=None, min_length=16, max_length=200)
    """The signing secret; generated (``whsec_`` + base64) and shown once when left out."""


class AgentRegistration(Wire):
    """``POST /api/agents``: an agent that acts from outside with a token of its own."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[A-Za-z][A-Za-z0-9_]{0,63}$")
    display_name: str = Field(min_length=1, max_length=80)
    role: str = Field(default="External agent", min_length=1, max_length=80)
    role_summary: str = Field(default="An agent registered by the tenant.", max_length=500)
    capabilities: list[Capability] = Field(default_factory=list, max_length=50)
    """What it may do: the law of allowed scope holds its tasks to these."""
    color: str = Field(default="#64748b", pattern=r"^#[0-9a-fA-F]{6}$")
    webhooks: AgentWebhooks | None = None
    """How it is reached: each message addressed to it is POSTed to ``webhooks.message``,
    signed (``engine/webhooks/agent_messages.py``)."""


class AgentUpdate(Wire):
    """``PATCH /api/agents/{id}``: the fields given change; the id does not."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=never_null)

    display_name: str | None = Field(default=None, min_length=1, max_length=80)
    role: str | None = Field(default=None, min_length=1, max_length=80)
    role_summary: str | None = Field(default=None, max_length=500)
    capabilities: list[Capability] | None = Field(default=None, max_length=50)
    color: str | None = Field(default=None, pattern=r"^#[0-9a-fA-F]{6}$")
    webhooks: AgentWebhooks | None = None
    """A new message webhook (URL, and secret or a generated one shown once): it replaces
    the agent's, whose queued deliveries end."""

    @field_validator("*", mode="before")
    @classmethod
    def _not_null(cls, value: Any) -> Any:
        # absent means "unchanged"; an agent cannot be without any of these
        if value is None:
            raise ValueError("may be left out but not null")
        return value


class TokenCreate(Wire):
    """``POST /api/agents/{id}/tokens``."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(default="", max_length=200)


@router.get("")
async def list_agents(services: ServicesDep, tenant: TenantDep) -> list[AgentOut]:
    """The roster, Hans first, then the agents the tenant registered."""
    return [AgentOut.of(a) for a in await services.agents.listing(tenant)]


@router.post("", status_code=201, responses=answers(None, 409))
async def register_agent(
    body: AgentRegistration, services: ServicesDep, tenant: TenantDep
) -> AgentOut:
    """Register an agent of the tenant (409 for an id of the roster or one taken)."""
    if services.agents.built_in(body.id) is not None:
        raise errors.Conflict(f"{body.id!r} is an agent of the roster", details={"id": body.id})
    agent = AgentDefinition(
        id=body.id,
        display_name=body.display_name,
        role=body.role,
        role_summary=body.role_summary or body.role,
        category=Category.UTILITY,
        capabilities=tuple(dict.fromkeys(body.capabilities)),
        visible=False,
        ordering=REGISTERED_ORDERING,
        color=body.color,
    )
    secret: str | None = None
    if body.webhooks is not None:
        taken = await services.db.read(lambda conn: principals.find(conn, tenant, body.id))
        if taken is not None:  # before a webhook is made for it
            raise errors.Conflict(
                f"agent {body.id!r} is registered already", details={"id": body.id}
            )
        hooks = body.webhooks
        agent, secret = await agent_messages.attach(
            services, tenant, agent, hooks.message, hooks.secret
        )
    try:
        await services.db.write(lambda conn: principals.register(conn, tenant, agent))
    except BaseException:
        await agent_messages.detach(services, tenant, agent)  # nothing half-made is left
        raise
    return AgentOut.of(agent).model_copy(update={"webhook_secret": secret})


@router.post(
    "/{agent_id}/tokens",
    status_code=201,
    operation_id="createAgentToken",
)
async def create_token(
    agent_id: str, services: ServicesDep, tenant: TenantDep, body: TokenCreate | None = None
) -> KeyCreated:
    """A token that acts as this registered agent only; its secret is shown once."""
    now = services.clock()
    name = (body.name if body else "") or f"token of {agent_id}"

    def issue(conn: Connection) -> tuple[ApiKey, str]:
        principals.get(conn, tenant, agent_id)  # 404 for the roster's and other tenants'
        return keys.issue(conn, tenant, Role.AGENT, name, now, key_id=new_id(), agent_id=agent_id)

    key, secret = await services.db.write(issue)
    return key_out(key, secret)


def _roster_is_read_only(services: Services, agent_id: str) -> None:
    if services.agents.built_in(agent_id) is not None:
        raise errors.Conflict(
            f"{agent_id!r} is an agent of the roster: it comes from the config and is read-only",
            details={"id": agent_id},
        )


@router.patch("/{agent_id}", responses=answers(None, 409))
async def update_agent(
    agent_id: str, body: AgentUpdate, services: ServicesDep, tenant: TenantDep
) -> AgentOut:
    """Change the fields given of a registered agent (404 for another tenant's, 409 for the
    roster's); its tokens act with its new capabilities from their next request. New
    ``webhooks`` replace its message webhook (the answer shows the new secret once)."""
    _roster_is_read_only(services, agent_id)
    changes: dict[str, Any] = body.model_dump(exclude_unset=True, exclude={"webhooks"})
    if "capabilities" in changes:
        changes["capabilities"] = tuple(dict.fromkeys(changes["capabilities"]))
    before = await services.db.read(lambda conn: principals.get(conn, tenant, agent_id))
    hooked, secret = before, None
    if body.webhooks is not None:
        hooks = body.webhooks
        hooked, secret = await agent_messages.attach(
            services, tenant, before, hooks.message, hooks.secret
        )
        changes |= {"webhooks": hooked.webhooks, "message_webhook_id": hooked.message_webhook_id}

    def change(conn: Connection) -> AgentDefinition:
        current = principals.get(conn, tenant, agent_id)
        merged = {**current.model_dump(), **changes}
        if not merged["role_summary"]:
            merged["role_summary"] = merged["role"]
        updated = AgentDefinition.model_validate(merged)
        principals.update(conn, tenant, updated)
        return updated

    try:
        updated = await services.db.write(change)
    except BaseException:
        if hooked is not before:
            await agent_messages.detach(services, tenant, hooked)  # nothing half-made is left
        raise
    if hooked is not before:
        await agent_messages.detach(services, tenant, before)  # the webhook it replaced
    return AgentOut.of(updated).model_copy(update={"webhook_secret": secret})


@router.delete("/{agent_id}", status_code=204, responses=answers(None, 409))
async def remove_agent(agent_id: str, services: ServicesDep, tenant: TenantDep) -> Response:
    """Remove a registered agent and revoke its tokens at once: their next request gets
    401 (404 for another tenant's, 409 for the roster's). What it did stays recorded."""
    _roster_is_read_only(services, agent_id)
    now = services.clock()

    def remove(conn: Connection) -> AgentDefinition:
        removed = principals.remove(conn, tenant, agent_id)
        keys.revoke_of_agent(conn, tenant, agent_id, now)
        return removed

    await agent_messages.detach(services, tenant, await services.db.write(remove))
    return Response(status_code=204)
