"""Request dependencies: the services, the principal and its tenant."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from starlette.requests import HTTPConnection

from hansa.domain.principal import Principal, Unauthenticated
from hansa.engine.runtime.services import Services


async def get_services(request: Request) -> Services:
    """The services built by ``create_app`` (async: a plain ``def`` would cost a thread hop)."""
    services: Services = request.app.state.services
    return services


def current_principal(conn: HTTPConnection) -> Principal:
    """The caller, as ``api/guard.py`` authenticated it (HTTP and WebSocket alike)."""
    principal: Principal | None = conn.scope.get("state", {}).get("principal")
    if principal is None:
        raise Unauthenticated("this route needs an API key")
    return principal


def current_tenant(conn: HTTPConnection) -> str:
    """The caller's tenant: its key's, never a request's."""
    return current_principal(conn).tenant_id


async def get_principal(conn: HTTPConnection) -> Principal:
    """``current_principal`` as a dependency (async: a plain ``def`` would cost a thread hop)."""
    return current_principal(conn)


async def get_tenant(conn: HTTPConnection) -> str:
    """``current_tenant`` as a dependency (async: a plain ``def`` would cost a thread hop)."""
    return current_tenant(conn)


ServicesDep = Annotated[Services, Depends(get_services)]
PrincipalDep = Annotated[Principal, Depends(get_principal)]
TenantDep = Annotated[str, Depends(get_tenant)]
