"""Store and forget webhooks: the URL checked by the outbound guard, the secret sealed."""

from __future__ import annotations

import dataclasses

from sqlalchemy import Connection

from hansa import errors
from hansa.domain.base import new_id
from hansa.domain.webhook import EVENT_TYPES, Webhook
from hansa.engine import runs
from hansa.engine.runtime.services import Services
from hansa.engine.webhooks import signing, targets
from hansa.store import secrets as sealing
from hansa.store import webhooks as rows
from hansa.tasks.connectors.outbound import OutboundPolicy


def policy(services: Services) -> OutboundPolicy:
    """The outbound guard's policy for deliveries (``HANSA_WEBHOOK_TIMEOUT_SECONDS`` each)."""
    timeout = services.settings.webhook_timeout_seconds
    return dataclasses.replace(runs.outbound_policy(services), timeout_seconds=timeout)


def box(services: Services) -> sealing.SecretBox:
    """The box sealing webhook secrets (``HANSA_SECRET_KEY``)."""
    return sealing.box(services.settings.secret_keys())


async def create(
    services: Services,
    tenant_id: str,
    url: str,
    events: list[str],
    secret: str | None,
    *,
    kinds: tuple[str, ...] = EVENT_TYPES,
    field: str = "url",
) -> tuple[Webhook, str]:
    """Store a webhook listening to some of ``kinds``; returns it and its secret (generated
    when none is given). A refused URL is 422 naming ``field``."""
    unknown = sorted(set(events) - set(kinds))
    if not events or unknown:
        raise errors.InvalidInput(
            f"events must name some of {', '.join(kinds)}"
            + (f" (not {', '.join(unknown)})" if unknown else ""),
            details={"field": "events"},
        )
    await targets.check(policy(services), url, field=field)
    clear = secret or signing.new_secret()
    now = services.clock()
    hook = Webhook(
        id=new_id(),
        tenant_id=tenant_id,
        url=url,
        events=list(dict.fromkeys(events)),
        created_at=now,
    )
    sealed = box(services).seal({"secret": clear})
    limit = services.settings.max_webhooks_per_tenant

    def store(conn: Connection) -> None:
        if rows.count(conn, tenant_id) >= limit:
            setting = "HANSA_MAX_WEBHOOKS_PER_TENANT"
            raise errors.InvalidInput.past_limit(limit, "webhooks", setting, "url")
        rows.create(conn, hook, sealed)

    await services.db.write(store)
    return hook, clear


async def delete(services: Services, tenant_id: str, webhook_id: str) -> None:
    """Forget a webhook and its log; its queued deliveries find it gone and end."""
    await services.db.write(lambda conn: rows.delete(conn, tenant_id, webhook_id))
