"""Health and the caller's tenant."""

from __future__ import annotations

from fastapi import APIRouter

from hansa.api.deps import ServicesDep, TenantDep
from hansa.api.models import identity as models
from hansa.api.models.base import answers
from hansa.store import tenants
from hansa.store.db import DEFAULT_TENANT_ID

router = APIRouter()


@router.get("/healthz", tags=["health"], response_model=None, responses=answers(models.Alive))
async def healthz() -> dict[str, str]:
    """The server answers."""
    return {"status": "ok"}


@router.get("/readyz", tags=["health"], response_model=None, responses=answers(models.Ready))
async def readyz(services: ServicesDep) -> dict[str, str]:
    """The server can take work: its database accepts a write (rolled back). A full, locked
    or unreachable database answers 503 ``database_unavailable`` with ``Retry-After``."""
    await services.db.write(tenants.probe_write)
    return {"status": "ready"}


@router.get(
    "/api/tenant",
    tags=["identity"],
    operation_id="getTenant",
    response_model=None,
    responses=answers(models.TenantOut),
)
async def tenant(tenant: TenantDep) -> dict[str, str]:
    """The caller's tenant."""
    return {"id": tenant, "name": "Default tenant" if tenant == DEFAULT_TENANT_ID else tenant}
