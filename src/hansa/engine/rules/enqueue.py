"""Queue a trigger job in the transaction of the change that fired it."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Connection

from hansa.domain import job
from hansa.domain.rules import Trigger
from hansa.store import queue
from hansa.store import rules as rule_rows


def enqueue_if_ruled(
    conn: Connection,
    tenant_id: str,
    trigger: Trigger,
    conversation_id: str,
    project_id: str | None,
    now: datetime,
    facts: dict[str, Any] | None = None,
) -> None:
    """Queue a trigger job in the caller's transaction when the tenant has rules for it."""
    if rule_rows.any_for_trigger(conn, tenant_id, trigger, project_id):
        work = job.TriggerJob(trigger=trigger, conversation_id=conversation_id, facts=facts or {})
        queue.enqueue(
            conn, tenant_id, job.JobKind.TRIGGER, job.payload(work), now, key=conversation_id
        )
