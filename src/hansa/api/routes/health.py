"""Health and the agent roster."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from hansa.api.deps import ServicesDep, TenantDep
from hansa.api.schemas import agent_out
from hansa.store.db import DEFAULT_TENANT_ID

router = APIRouter()


@router.get("/healthz")
async def healthz() -> dict[str, str]:
    """The server answers."""
    return {"status": "ok"}


@router.get("/api/tenant")
async def tenant(tenant: TenantDep) -> dict[str, str]:
    """The caller's tenant."""
    return {"id": tenant, "name": "Default tenant" if tenant == DEFAULT_TENANT_ID else tenant}


@router.get("/api/agents")
async def list_agents(services: ServicesDep) -> list[dict[str, Any]]:
    """The roster, Hans first."""
    return [agent_out(a) for a in services.roster]
