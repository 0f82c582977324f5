"""The caller (``GET /api/me``) and the panel's session: a key kept in a cookie."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from pydantic import ConfigDict, Field

from hansa.api import auth
from hansa.api.deps import PrincipalDep, ServicesDep
from hansa.api.models import identity as models
from hansa.api.models.base import answers
from hansa.domain.base import Wire
from hansa.domain.principal import Principal, Unauthenticated

router = APIRouter(prefix="/api", tags=["identity"])


class SessionOpen(Wire):
    """``POST /api/session``: the key the panel was given."""

    model_config = ConfigDict(extra="forbid")

    key: str = Field(min_length=1, max_length=200)


def me_out(principal: Principal) -> models.Me:
    """``{tenantId, principal: {kind, id, role}}``."""
    shown = models.PrincipalOut(kind=principal.kind.value, id=principal.id, role=principal.role)
    return models.Me(tenant_id=principal.tenant_id, principal=shown)


@router.get("/me", operation_id="getMe")
async def me(principal: PrincipalDep) -> models.Me:
    """Who the server takes the caller for."""
    return me_out(principal)


@router.post("/session", responses=answers(None, 401))
async def open_session(
    body: SessionOpen, request: Request, response: Response, services: ServicesDep
) -> models.Me:
    """Keep a valid key in an HttpOnly, SameSite=Strict cookie for the panel (401 if not)."""
    principal = await auth.principal_for(services, body.key.strip())
    if principal is None:
        raise Unauthenticated("the API key is not valid (unknown or revoked)")
    response.set_cookie(
        auth.SESSION_COOKIE,
        body.key.strip(),
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
        path="/",
    )
    return me_out(principal)


@router.delete("/session", status_code=204)
async def close_session() -> Response:
    """Forget the panel's key."""
    response = Response(status_code=204)
    response.delete_cookie(auth.SESSION_COOKIE, path="/", httponly=True, samesite="strict")
    return response
