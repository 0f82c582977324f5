"""A tenant's named outbound services: what ``service.call`` names from graphs and rules.

``POST`` stores one (its base URL checked by the outbound guard, its headers sealed),
``GET`` lists or shows them (credentials masked), ``PATCH`` changes one, ``DELETE`` forgets
it. Every refusal is 422 naming its field; a name taken is 409; an unknown name 404.
"""

from __future__ import annotations

from fastapi import APIRouter, Response

from hansa.api.deps import ServicesDep, TenantDep
from hansa.api.models.base import answers
from hansa.api.models.services import ServiceCreate, ServiceOut, ServicePatch
from hansa.domain.service import Service
from hansa.engine.webhooks import named_services
from hansa.store import services as rows

router = APIRouter(prefix="/api/services", tags=["services"])


@router.post("", status_code=201, response_model=ServiceOut, responses=answers(None, 409))
async def create_service(body: ServiceCreate, services: ServicesDep, tenant: TenantDep) -> Service:
    """Store a named service; its base URL must pass the outbound guard (422)."""
    made = await named_services.create(
        services, tenant, body.name, body.base_url, body.headers, body.unattended_methods
    )
    return named_services.shown(made)


@router.get("", response_model=list[ServiceOut])
async def list_services(services: ServicesDep, tenant: TenantDep) -> list[Service]:
    """The tenant's services by name, credentials masked."""
    found = await services.db.read(rows.list_all, tenant)
    return [named_services.shown(s) for s in found]


@router.get("/{name}", response_model=ServiceOut, responses=answers(None, 404))
async def get_service(name: str, services: ServicesDep, tenant: TenantDep) -> Service:
    """One service, credentials masked."""
    found = await services.db.read(rows.get, tenant, name)
    return named_services.shown(found)


@router.patch("/{name}", response_model=ServiceOut, responses=answers(None, 404))
async def patch_service(
    name: str, body: ServicePatch, services: ServicesDep, tenant: TenantDep
) -> Service:
    """Change a service's ``baseUrl``, ``headers`` or ``unattendedMethods``."""
    given = body.model_dump(exclude_unset=True)
    changed = await named_services.change(services, tenant, name, given)
    return named_services.shown(changed)


@router.delete("/{name}", status_code=204, responses=answers(None, 404))
async def delete_service(name: str, services: ServicesDep, tenant: TenantDep) -> Response:
    """Forget a service: graphs and rules naming it fail ``unknown_service`` from now on."""
    await named_services.delete(services, tenant, name)
    return Response(status_code=204)
