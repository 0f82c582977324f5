"""Messages addressed to an external assistant, POSTed to its ``webhooks.message`` (seed 001).

An agent registered with ``webhooks: {message: url}`` (``POST /api/agents``) is given a
webhook of its own (:func:`attach`): the URL checked by the outbound guard, a secret sealed
and shown once, kind ``agent.message``. When a turn's message is addressed to that agent
(routed to it, ``POST /api/webhook/message``'s ``to``, or won by its claim), :func:`forward`
queues its delivery in the turn's own transaction: the existing delivery job
(``delivery.py``) POSTs it through the outbound guard, signed (``signing.headers``), with
its retries and its log (``GET /api/webhooks/{id}/deliveries``). The body is the seed's
messaging shape: ``{id, type: "agent.message", createdAt, data: {id, conversationId, orgId,
from, to, content, contentType, sequence, priority, createdAt, turnId}}``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from hansa import errors
from hansa.domain import job
from hansa.domain.agent import AgentDefinition
from hansa.domain.base import new_id
from hansa.domain.webhook import AGENT_MESSAGE
from hansa.engine.runtime.recorder import Batch
from hansa.engine.runtime.services import Services
from hansa.engine.webhooks import service
from hansa.store import webhooks as rows

FIELD = "webhooks.message"
"""How the registration names the URL (in a refusal's ``details.field``)."""


async def attach(
    services: Services, tenant_id: str, agent: AgentDefinition, url: str, secret: str | None
) -> tuple[AgentDefinition, str]:
    """A webhook for ``agent``'s messages (422 naming ``webhooks.message`` for a URL the
    outbound guard refuses); the agent that names it, and its secret (shown once)."""
    hook, clear = await service.create(
        services, tenant_id, url, [AGENT_MESSAGE], secret, kinds=(AGENT_MESSAGE,), field=FIELD
    )
    update = {"webhooks": {"message": url}, "message_webhook_id": hook.id}
    return agent.model_copy(update=update), clear


async def detach(services: Services, tenant_id: str, agent: AgentDefinition) -> None:
    """Forget ``agent``'s message webhook, if it has one (its queued deliveries end)."""
    if agent.message_webhook_id is None:
        return
    try:
        await service.delete(services, tenant_id, agent.message_webhook_id)
    except errors.NotFound:  # deleted by hand before
        pass


def forward(
    batch: Batch,
    services: Services,
    tenant_id: str,
    agent: AgentDefinition,
    said: dict[str, Any],
) -> bool:
    """Queue, in ``batch``'s transaction, the delivery of the message ``said`` (the seed's
    messaging shape: :func:`addressed`) to ``agent``'s webhook; False when it has none."""
    webhook_id = agent.message_webhook_id
    if webhook_id is None:
        return False
    now = services.clock()
    delivery_id = new_id()
    body = {"id": delivery_id, "type": AGENT_MESSAGE, "createdAt": now.isoformat(), "data": said}
    work = job.WebhookDeliveryJob(
        webhook_id=webhook_id, delivery_id=delivery_id, event=AGENT_MESSAGE, body=body
    )
    batch.then(lambda conn: rows.queue_attempt(conn, tenant_id, work, now, now))
    return True


def addressed(
    *,
    message_id: str,
    conversation_id: str,
    tenant_id: str,
    turn_id: str,
    agent_id: str,
    content: str,
    sender: str,
    at: datetime,
    received: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A message to an external assistant in the seed's messaging shape; what
    ``POST /api/webhook/message`` received with it (``received``: its own id, sequence,
    priority…) is kept as it came."""
    got = received or {}
    return {
        "id": got.get("id", message_id),
        "messageId": message_id,
        "conversationId": conversation_id,
        "orgId": tenant_id,
        "from": got.get("from") or {"principalId": sender, "principalType": "user"},
        "to": {"principalId": agent_id, "principalType": "assistant"},
        "content": content,
        "contentType": got.get("contentType", "text/plain"),
        "sequence": got.get("sequence"),
        "priority": got.get("priority", "normal"),
        "createdAt": got.get("createdAt", at.isoformat()),
        "turnId": turn_id,
    }
