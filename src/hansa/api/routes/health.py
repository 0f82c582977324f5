"""Health and the caller's tenant."""

from __future__ import annotations

from fastapi import APIRouter

from hansa.api.deps import ServicesDep, TenantDep
from hansa.api.models import identity as models
from hansa.store import tenants
from hansa.store.db import DEFAULT_TENANT_ID

router = APIRouter()


@router.get("/healthz", tags=["health"])
async def healthz() -> models.Alive:
    """The server answers."""
    return models.Alive(status="ok")


@router.get("/readyz", tags=["health"])
async def readyz(services: ServicesDep) -> models.Ready:
    """The server can take work: its database accepts a write (rolled back). A full, locked
    or unreachable database answers 503 ``database_unavailable`` with ``Retry-After``."""
    await services.db.write(tenants.probe_write)
    return models.Ready(status="ready")


@router.get(
    "/api/tenant",
    tags=["identity"],
    operation_id="getTenant",
)
async def tenant(tenant: TenantDep) -> models.TenantOut:
    """The caller's tenant."""
    name = "Default tenant" if tenant == DEFAULT_TENANT_ID else tenant
    return models.TenantOut(id=tenant, name=name)
