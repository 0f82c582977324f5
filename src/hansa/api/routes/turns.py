"""Turns: cancel one in flight."""

from __future__ import annotations

from fastapi import APIRouter

from hansa.api.deps import ServicesDep, TenantDep
from hansa.api.models.base import answers
from hansa.api.models.conversations import TurnCancelled
from hansa.engine.turns import cancel

router = APIRouter(prefix="/api", tags=["turns"])


@router.post("/turns/{turn_id}/cancel", responses=answers(None, 409))
async def cancel_turn(turn_id: str, services: ServicesDep, tenant: TenantDep) -> TurnCancelled:
    """End a queued or running turn with ``done`` ``cancelled``; its unanswered tool calls
    are sealed (``tool_result``, ``ok`` false, ``cancelled``). A cancelled turn answers the
    same again; a completed or failed one 409."""
    ended = await cancel.cancel_turn(services, tenant, turn_id)
    return TurnCancelled(
        turn_id=ended.id, conversation_id=ended.conversation_id, status=ended.status
    )
