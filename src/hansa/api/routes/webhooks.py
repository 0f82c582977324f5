"""Completion webhooks: signed events when a run, a turn or a session ends."""

from __future__ import annotations

from fastapi import APIRouter, Query, Response
from pydantic import Field

from hansa.api.deps import ServicesDep, TenantDep
from hansa.api.models.base import answers
from hansa.api.models.hooks import DeliveryOut, WebhookCreated, WebhookOut
from hansa.api.schemas import Body
from hansa.domain.webhook import Delivery, Webhook
from hansa.engine.webhooks import service
from hansa.store import webhooks as rows

router = APIRouter(prefix="/api/webhooks", tags=["webhooks"])


class WebhookCreate(Body):
    """``POST /api/webhooks``."""

    url: str = Field(min_length=1, max_length=2000, examples=["https://example.com/hansa"])
    events: list[str] = Field(min_length=1, max_length=20, examples=[["run.completed"]])
    secret: str | None = Field(default=None, min_length=16, max_length=200)
    """The HMAC key; one is generated when left out. Shown once, in the answer."""


@router.post("", status_code=201)
async def create_webhook(
    body: WebhookCreate, services: ServicesDep, tenant: TenantDep
) -> WebhookCreated:
    """Store a webhook; its URL must pass the outbound guard (422), and its secret is shown
    in this answer only."""
    hook, secret = await service.create(services, tenant, body.url, body.events, body.secret)
    return WebhookCreated.model_validate({**dict(hook), "secret": secret})


@router.get("", response_model=list[WebhookOut])
async def list_webhooks(services: ServicesDep, tenant: TenantDep) -> list[Webhook]:
    """The tenant's webhooks, oldest first (no secrets)."""
    return await services.db.read(rows.list_all, tenant)


@router.delete("/{webhook_id}", status_code=204, responses=answers(None, 404))
async def delete_webhook(webhook_id: str, services: ServicesDep, tenant: TenantDep) -> Response:
    """Forget a webhook and its delivery log."""
    await service.delete(services, tenant, webhook_id)
    return Response(status_code=204)


@router.get(
    "/{webhook_id}/deliveries", response_model=list[DeliveryOut], responses=answers(None, 404)
)
async def list_webhook_deliveries(
    webhook_id: str,
    services: ServicesDep,
    tenant: TenantDep,
    limit: int = Query(default=50, ge=1, le=200),
) -> list[Delivery]:
    """The webhook's delivery attempts, newest first: each with its status, attempt, response
    code, error and duration."""
    return await services.db.read(rows.deliveries, tenant, webhook_id, limit)
