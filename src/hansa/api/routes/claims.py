"""Claim/defer turn-taking: external assistants claim a message within the window.

An external agent claims with its own token, as itself; an admin key (or local mode) may
claim on a named participant's behalf, as an operator; a member key may not claim.
"""

from __future__ import annotations

from fastapi import APIRouter

from hansa.api.deps import PrincipalDep, ServicesDep
from hansa.api.models.base import answers
from hansa.api.models.conversations import Claim
from hansa.domain.principal import Forbidden, Kind, Principal, Role
from hansa.engine.triggers import claims

router = APIRouter(prefix="/api/conversations", tags=["claims"])


@router.post(
    "/{conversation_id}/claims",
    status_code=202,
    operation_id="claimTurn",
    responses=answers(None, 409),
)
async def claim(
    conversation_id: str,
    body: claims.OutsideClaim,
    services: ServicesDep,
    principal: PrincipalDep,
) -> Claim:
    """Claim the turn's message for an external participant while its window is open;
    409 ``claim_window_closed`` after it. The claim is resolved when the window closes."""
    if principal.kind is Kind.AGENT:
        asked = body.model_copy(update={"assistant_key": _as_itself(principal, body)})
        operator = None
    else:
        _may_operate(principal)
        asked, operator = body, f"{principal.kind.value} {principal.id}"
    made = await claims.claim_from_outside(
        services, principal.tenant_id, conversation_id, asked, operator=operator
    )
    return made


def _as_itself(principal: Principal, body: claims.OutsideClaim) -> str:
    if body.assistant_key not in (None, principal.id):
        raise Forbidden(
            f"this token claims only as {principal.id!r}", details={"field": "assistantKey"}
        )
    return principal.id


def _may_operate(principal: Principal) -> None:
    if principal.role is not Role.ADMIN:
        raise Forbidden(
            f"the {principal.role.value} role may not claim: an external agent claims with "
            "its own token (role agent), or an admin key claims on its behalf",
            details={"role": principal.role.value},
        )
