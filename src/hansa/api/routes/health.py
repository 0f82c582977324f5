"""Health and the caller's tenant."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from hansa.api import errors as api_errors
from hansa.api.deps import ServicesDep, TenantDep
from hansa.api.models import identity as models
from hansa.store import outage, tenants
from hansa.store.db import DEFAULT_TENANT_ID

router = APIRouter()


@router.get("/healthz", tags=["health"])
async def healthz() -> models.Alive:
    """The server answers."""
    return models.Alive(status="ok")


@router.get("/readyz", tags=["health"], response_model=models.Ready)
async def readyz(services: ServicesDep, request: Request) -> models.Ready | JSONResponse:
    """The server can take work: its database commits a write, and no write met an outage
    in the last ``READY_AFTER_SECONDS``. A full, read-only, locked or unreachable database
    answers 503 ``database_unavailable`` with ``Retry-After``."""
    await services.db.write(tenants.probe_write)
    recent = api_errors.outages(request.app).within(outage.READY_AFTER_SECONDS)
    if recent is not None:
        return api_errors.outage_answer(recent)
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
