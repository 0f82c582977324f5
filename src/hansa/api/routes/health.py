"""Health and the caller's tenant."""

from __future__ import annotations

from fastapi import APIRouter

from hansa.api.deps import TenantDep
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
