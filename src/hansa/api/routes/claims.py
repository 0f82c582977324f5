"""Claim/defer turn-taking: external assistants claim a message within the window."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from hansa.api.deps import PrincipalDep, ServicesDep
from hansa.domain.principal import Forbidden
from hansa.engine.triggers import claims

router = APIRouter(prefix="/api/conversations", tags=["claims"])


@router.post("/{conversation_id}/claims", status_code=202)
async def claim(
    conversation_id: str,
    body: claims.OutsideClaim,
    services: ServicesDep,
    principal: PrincipalDep,
) -> dict[str, Any]:
    """Claim the turn's message for an external participant while its window is open;
    409 ``claim_window_closed`` after it. The claim is resolved when the window closes."""
    if not principal.may_act_as(body.assistant_key):
        raise Forbidden(
            f"this token acts only as {principal.id!r}", details={"field": "assistantKey"}
        )
    made = await claims.claim_from_outside(services, principal.tenant_id, conversation_id, body)
    out: dict[str, Any] = made.model_dump(mode="json", by_alias=True)
    return out
