"""API keys of the caller's tenant (admin): create one (its secret shown once), list, revoke."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Response
from pydantic import ConfigDict, Field

from hansa.api.deps import ServicesDep, TenantDep
from hansa.api.models import identity as models
from hansa.domain.base import Wire, new_id
from hansa.domain.principal import ApiKey, Role
from hansa.store import keys

router = APIRouter(prefix="/api/keys", tags=["keys"])


class KeyCreate(Wire):
    """``POST /api/keys``: a key for a person or a script (agents get tokens instead)."""

    model_config = ConfigDict(extra="forbid")

    role: Literal["admin", "member"]
    name: str = Field(default="", max_length=200)


def key_out(key: ApiKey, secret: str) -> models.KeyCreated:
    """A key that was just made: ``key`` (the secret) is in this answer only."""
    return models.KeyCreated.model_validate({**dict(key), "key": secret})


@router.post("", status_code=201)
async def create_key(
    body: KeyCreate, services: ServicesDep, tenant: TenantDep
) -> models.KeyCreated:
    """A new key of the tenant; its secret is in this answer and nowhere else, ever."""
    now = services.clock()
    key, secret = await services.db.write(
        lambda conn: keys.issue(conn, tenant, Role(body.role), body.name, now, key_id=new_id())
    )
    return key_out(key, secret)


@router.get("")
async def list_keys(services: ServicesDep, tenant: TenantDep) -> list[models.ApiKey]:
    """The tenant's keys and agent tokens, revoked ones included; never a secret."""
    return await services.db.read(keys.list_for, tenant)


@router.delete("/{key_id}", status_code=204)
async def revoke_key(key_id: str, services: ServicesDep, tenant: TenantDep) -> Response:
    """Revoke a key at once: the next request with it gets 401."""
    now = services.clock()
    await services.db.write(lambda conn: keys.revoke(conn, tenant, key_id, now))
    return Response(status_code=204)
