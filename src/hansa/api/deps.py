"""Request dependencies: the services and the tenant."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from hansa.engine.runtime.services import Services
from hansa.store.db import DEFAULT_TENANT_ID


async def get_services(request: Request) -> Services:
    """The services built by ``create_app`` (async: a plain ``def`` would cost a thread hop)."""
    services: Services = request.app.state.services
    return services


def current_tenant() -> str:
    """The caller's tenant (the default tenant until authentication comes)."""
    return DEFAULT_TENANT_ID


async def get_tenant() -> str:
    """``current_tenant`` as a dependency (async: a plain ``def`` would cost a thread hop)."""
    return current_tenant()


ServicesDep = Annotated[Services, Depends(get_services)]
TenantDep = Annotated[str, Depends(get_tenant)]
