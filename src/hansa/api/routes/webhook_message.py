"""The seed's messaging webhook: ``POST /api/webhook/message`` (seed 001, "For Messaging
Service"). A messaging service authenticates with an API key of the tenant (``orgId`` must
be that tenant); the message gets a turn for the assistant it is addressed to."""

from __future__ import annotations

from fastapi import APIRouter

from hansa.api.deps import ServicesDep, TenantDep
from hansa.api.models.base import Out, answers
from hansa.engine.turns import inbound

router = APIRouter(prefix="/api/webhook", tags=["webhooks"])


class MessageAccepted(Out):
    """The message stored and its turn queued; the same answer for every delivery of it."""

    id: str
    """The messaging service's id of the message."""
    message_id: str
    turn_id: str
    conversation_id: str
    """Hansa's conversation (``GET /api/conversations/{id}/events`` follows the turn)."""
    duplicate: bool
    """An earlier delivery of this message was stored: nothing new was."""


@router.post(
    "/message",
    status_code=202,
    operation_id="receiveWebhookMessage",
    responses=answers(None, 409),
)
async def receive_message(
    body: inbound.InboundMessage, services: ServicesDep, tenant: TenantDep
) -> MessageAccepted:
    """Store a message of the messaging service and start the addressed assistant's turn
    (idempotent by the message's ``id``; the conversation is opened if it is new)."""
    return MessageAccepted.of(await inbound.receive(services, tenant, body))
