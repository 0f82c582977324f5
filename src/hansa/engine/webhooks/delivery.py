"""One delivery attempt: POST the signed body through the outbound guard, log the attempt.

The body (``{id, type, createdAt, data}``) is signed with the webhook's secret, the Standard
Webhooks way and Hansa's (``signing.headers``: ``webhook-id`` is the delivery's id, the
same for every attempt of one event, as ``X-Hansa-Delivery`` and ``Idempotency-Key`` are),
and sent with ``X-Hansa-Event``. A 2xx answer ends the delivery. Another
answer or a network error queues the next attempt after a backoff that doubles each time
(``HANSA_WEBHOOK_BACKOFF_SECONDS``), up to ``HANSA_WEBHOOK_MAX_ATTEMPTS``; a target the guard
refuses is not tried again. The attempt's log row, the job's end and the next attempt's job
commit together, under the job's lease.
"""

from __future__ import annotations

import time
from datetime import datetime, timedelta

from sqlalchemy import Connection

from hansa import errors
from hansa.domain import job
from hansa.domain.webhook import DeliveryStatus
from hansa.engine.runtime.services import Services
from hansa.engine.webhooks import service, signing
from hansa.store import queue
from hansa.store import secrets as sealing
from hansa.store import webhooks as rows
from hansa.tasks.base import TaskFailed
from hansa.tasks.connectors import outbound

NOT_RETRIED = frozenset({"outbound_denied", "bad_url", "request_too_large"})
"""Failures another attempt cannot mend."""
ERROR_CHARS = 500
"""The longest error kept in the log."""


def backoff(services: Services, attempt: int) -> timedelta:
    """The wait after failed attempt ``attempt`` (1, 2, …): the base, doubled each time."""
    return timedelta(seconds=services.settings.webhook_backoff_seconds * 2 ** (attempt - 1))


async def run_delivery_job(services: Services, claimed: job.Job) -> None:
    """Make one attempt and record it; queue the next one if it failed and may be retried."""
    work = job.WebhookDeliveryJob.model_validate(claimed.payload)
    tenant_id = claimed.tenant_id

    def read(conn: Connection) -> tuple[str, dict[str, str]] | None:
        try:
            hook = rows.get(conn, tenant_id, work.webhook_id)
        except errors.NotFound:
            return None
        return hook.url, rows.sealed_secret(conn, tenant_id, work.webhook_id)

    found = await services.db.read(read)
    if found is None:  # the webhook was deleted meanwhile
        await services.db.write(lambda conn: queue.finish(conn, claimed, services.clock()))
        return
    url, sealed = found
    code: int | None = None
    error: str | None = None
    retry = True
    started = time.perf_counter()
    try:
        secret = str(service.box(services).open(sealed)["secret"])
        raw = signing.raw_body(work.body)
        headers = {
            "Content-Type": "application/json",
            "User-Agent": "Hansa-Webhooks",
            **signing.headers(secret, work.delivery_id, raw, services.clock()),
            "X-Hansa-Delivery": work.delivery_id,
            "X-Hansa-Event": work.event,
        }
        answer = await outbound.call(
            service.policy(services),
            url=url,
            method="POST",
            headers=headers,
            body=raw.decode(),
            idempotency_key=work.delivery_id,
        )
        code = int(answer["statusCode"])
        if not 200 <= code < 300:
            error = f"the target answered {code}"
    except TaskFailed as exc:
        error, retry = f"{exc.code}: {exc}", exc.code not in NOT_RETRIED
    except sealing.SecretUnreadable as exc:
        error, retry = f"{exc.code}: {exc}", False
    ms = round((time.perf_counter() - started) * 1000, 1)
    await _record(services, claimed, work, code, error[:ERROR_CHARS] if error else None, ms, retry)


async def _record(
    services: Services,
    claimed: job.Job,
    work: job.WebhookDeliveryJob,
    code: int | None,
    error: str | None,
    ms: float,
    retry: bool,
) -> None:
    now = services.clock()
    again = error is not None and retry and work.attempt < services.settings.webhook_max_attempts
    due: datetime | None = now + backoff(services, work.attempt) if again else None
    if error is None:
        status = DeliveryStatus.SUCCEEDED
    else:
        status = DeliveryStatus.RETRYING if again else DeliveryStatus.FAILED

    def write(conn: Connection) -> None:
        queue.guard(conn, claimed)
        rows.record(
            conn,
            claimed.tenant_id,
            work,
            now,
            status=status,
            response_code=code,
            error=error,
            duration_ms=ms,
            next_attempt_at=due,
        )
        queue.finish(conn, claimed, now)
        if due is not None:
            following = work.model_copy(update={"attempt": work.attempt + 1})
            rows.queue_attempt(conn, claimed.tenant_id, following, now, due)

    await services.db.write(write)
