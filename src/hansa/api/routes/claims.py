"""Claim/defer turn-taking: external assistants claim a message within the window."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from hansa.api.deps import ServicesDep, TenantDep
from hansa.engine.triggers import claims

router = APIRouter(prefix="/api/conversations", tags=["claims"])


@router.post("/{conversation_id}/claims", status_code=202)
async def claim(
    conversation_id: str, body: claims.OutsideClaim, services: ServicesDep, tenant: TenantDep
) -> dict[str, Any]:
    """Claim the turn's message for an external participant while its window is open;
    409 ``claim_window_closed`` after it. The claim is resolved when the window closes."""
    made = await claims.claim_from_outside(services, tenant, conversation_id, body)
    out: dict[str, Any] = made.model_dump(mode="json", by_alias=True)
    return out
