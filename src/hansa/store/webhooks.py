"""Completion webhooks of a tenant, the deliveries their events queue, and the delivery log.

``queue_completions`` runs in every transaction that appends events (``Recorder``): for each
event that ends a turn, a run or a session (``domain/webhook.completion``) and each webhook of
the tenant that listens to it, a delivery job is queued in that same transaction, so an end
that committed is delivered and one that rolled back never is.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection

from hansa import errors
from hansa.domain import event, job
from hansa.domain.base import new_id
from hansa.domain.webhook import Delivery, DeliveryStatus, Webhook, completion
from hansa.store import direct, queue, tables

_hooks = tables.webhooks
_log = tables.webhook_deliveries
_B = sa.bindparam
_LISTENING = sa.select(_hooks.c.id, _hooks.c.events).where(_hooks.c.tenant_id == _B("p_tenant"))
_COLUMNS = (_hooks.c.id, _hooks.c.tenant_id, _hooks.c.url, _hooks.c.events, _hooks.c.created_at)

MAX_ATTEMPTS_OF_A_JOB = 1
"""A delivery job is one attempt: a failed attempt queues the next one itself (with its
backoff); one that crashes is given up by the worker and logged nowhere else."""


def create(conn: Connection, hook: Webhook, sealed_secret: dict[str, str]) -> None:
    """Store a webhook with its sealed secret."""
    row = hook.model_dump(mode="python")
    conn.execute(_hooks.insert().values(**row, secret=sealed_secret))


def count(conn: Connection, tenant_id: str) -> int:
    """How many webhooks the tenant has."""
    query = sa.select(sa.func.count()).where(_hooks.c.tenant_id == tenant_id)
    return int(conn.execute(query).scalar_one())


def _mine(tenant_id: str, webhook_id: str) -> tuple[sa.ColumnElement[bool], ...]:
    return (_hooks.c.id == webhook_id, _hooks.c.tenant_id == tenant_id)


def get(conn: Connection, tenant_id: str, webhook_id: str) -> Webhook:
    """One webhook of the tenant; NotFound."""
    row = conn.execute(sa.select(*_COLUMNS).where(*_mine(tenant_id, webhook_id))).mappings().first()
    if row is None:
        raise errors.NotFound(f"webhook {webhook_id} not found")
    return Webhook.model_validate(dict(row))


def sealed_secret(conn: Connection, tenant_id: str, webhook_id: str) -> dict[str, str]:
    """The webhook's secret as stored (``{"secret": …}``, sealed when sealing is on)."""
    query = sa.select(_hooks.c.secret).where(*_mine(tenant_id, webhook_id))
    found = conn.execute(query).scalar_one_or_none()
    if found is None:
        raise errors.NotFound(f"webhook {webhook_id} not found")
    return dict(found)


def list_all(conn: Connection, tenant_id: str) -> list[Webhook]:
    """The tenant's webhooks, oldest first."""
    query = (
        sa.select(*_COLUMNS)
        .where(_hooks.c.tenant_id == tenant_id)
        .order_by(_hooks.c.created_at, _hooks.c.id)
    )
    return [Webhook.model_validate(dict(r)) for r in conn.execute(query).mappings()]


def delete(conn: Connection, tenant_id: str, webhook_id: str) -> None:
    """Forget a webhook and its delivery log; NotFound."""
    if conn.execute(sa.delete(_hooks).where(*_mine(tenant_id, webhook_id))).rowcount == 0:
        raise errors.NotFound(f"webhook {webhook_id} not found")
    conn.execute(sa.delete(_log).where(_log.c.webhook_id == webhook_id))


def queue_completions(
    conn: Connection, tenant_id: str, stored: Sequence[event.Event], now: datetime
) -> int:
    """Queue a delivery for each ending event in ``stored`` and each webhook listening to it
    (nothing is read unless an event ends something); returns how many were queued."""
    ends = [found for found in (completion(ev) for ev in stored) if found is not None]
    if not ends:
        return 0
    hooks = direct.rows(conn, _LISTENING, {"p_tenant": tenant_id})
    queued = 0
    for kind, data in ends:
        for hook in hooks:
            if kind not in hook["events"]:
                continue
            delivery_id = new_id()
            body = {"id": delivery_id, "type": kind, "createdAt": now.isoformat(), "data": data}
            work = job.WebhookDeliveryJob(
                webhook_id=hook["id"], delivery_id=delivery_id, event=kind, body=body
            )
            queue_attempt(conn, tenant_id, work, now, now)
            queued += 1
    return queued


def queue_attempt(
    conn: Connection, tenant_id: str, work: job.WebhookDeliveryJob, now: datetime, due: datetime
) -> None:
    """Queue one delivery attempt, due at ``due``."""
    queue.enqueue(
        conn,
        tenant_id,
        job.JobKind.WEBHOOK_DELIVERY,
        job.payload(work),
        now,
        max_attempts=MAX_ATTEMPTS_OF_A_JOB,
        run_at=due,
    )


def record(
    conn: Connection,
    tenant_id: str,
    work: job.WebhookDeliveryJob,
    now: datetime,
    *,
    status: DeliveryStatus,
    response_code: int | None,
    error: str | None,
    duration_ms: float,
    next_attempt_at: datetime | None,
) -> None:
    """Add an attempt to the delivery log."""
    row: dict[str, Any] = {
        "tenant_id": tenant_id,
        "webhook_id": work.webhook_id,
        "delivery_id": work.delivery_id,
        "event": work.event,
        "attempt": work.attempt,
        "status": status.value,
        "response_code": response_code,
        "error": error,
        "duration_ms": duration_ms,
        "next_attempt_at": next_attempt_at,
        "created_at": now,
    }
    conn.execute(_log.insert().values(**row))


def deliveries(conn: Connection, tenant_id: str, webhook_id: str, limit: int) -> list[Delivery]:
    """The webhook's last ``limit`` attempts, newest first; NotFound for an unknown webhook."""
    get(conn, tenant_id, webhook_id)
    query = (
        sa.select(_log)
        .where(_log.c.webhook_id == webhook_id, _log.c.tenant_id == tenant_id)
        .order_by(_log.c.id.desc())
        .limit(limit)
    )
    return [Delivery.model_validate(dict(r)) for r in conn.execute(query).mappings()]
