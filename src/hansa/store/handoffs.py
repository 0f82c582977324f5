"""Handoffs: stored with their snapshot; a queue by priority, then age."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection

from hansa import errors
from hansa.domain import handoff
from hansa.store import direct, tables
from hansa.store.db import growing

_h = tables.handoffs
_B = sa.bindparam

# Statements are built once and run through store.direct (decision 0007).
_INSERT = _h.insert()
_GET = sa.select(_h).where(
    _h.c.id == _B("p_id"), direct.only_checks(_h.c.tenant_id) == _B("p_tenant")
)
_OPEN_OF = sa.select(_h).where(
    _h.c.conversation_id == _B("p_conversation"),
    _h.c.tenant_id == _B("p_tenant"),
    sa.or_(*[_h.c.status == s.value for s in handoff.OPEN]),
)
_QUEUE = sa.select(_h).where(_h.c.tenant_id == _B("p_tenant"))
_ORDER = (_h.c.priority_rank.desc(), _h.c.created_at, _h.c.id)


def _row(h: handoff.Handoff) -> dict[str, Any]:
    data = h.model_dump(mode="json")
    return {
        "id": h.id,
        "tenant_id": h.tenant_id,
        "conversation_id": h.conversation_id,
        "status": h.status.value,
        "reason": h.reason,
        "priority": h.priority,
        "priority_rank": handoff.PRIORITY_RANK[h.priority],
        "metadata": h.metadata,
        "snapshot": h.snapshot,
        "requested_by": data["requested_by"],
        "assignee": h.assignee,
        "paused_runs": h.paused_runs,
        "created_at": h.created_at,
        "assigned_at": h.assigned_at,
        "resolved_at": h.resolved_at,
    }


def _handoff(row: Any) -> handoff.Handoff:
    return handoff.Handoff.model_validate(dict(row))


def create(conn: Connection, h: handoff.Handoff) -> None:
    """Insert a handoff (the caller checked that none is open for the conversation)."""
    direct.execute(conn, _INSERT, _row(h))


def get(conn: Connection, tenant_id: str, handoff_id: str) -> handoff.Handoff:
    """The handoff, or NotFound (also for another tenant's id)."""
    row = direct.first(conn, _GET, {"p_id": handoff_id, "p_tenant": tenant_id})
    if row is None:
        raise errors.NotFound(f"handoff {handoff_id} not found")
    return _handoff(row)


def open_of(conn: Connection, tenant_id: str, conversation_id: str) -> handoff.Handoff | None:
    """The conversation's pending or active handoff, if any."""
    row = direct.first(conn, _OPEN_OF, {"p_conversation": conversation_id, "p_tenant": tenant_id})
    return None if row is None else _handoff(row)


@growing
def queue(
    conn: Connection, tenant_id: str, status: str | None = None, priority: str | None = None
) -> list[handoff.Handoff]:
    """The tenant's handoffs, by priority (urgent first), then age (oldest first)."""
    query = _QUEUE
    if status is not None:
        query = query.where(_h.c.status == status)
    if priority is not None:
        query = query.where(_h.c.priority == priority)
    rows = conn.execute(query.order_by(*_ORDER), {"p_tenant": tenant_id}).mappings()
    return [_handoff(r) for r in rows]


def move(
    conn: Connection,
    h: handoff.Handoff,
    target: handoff.Status,
    now: datetime,
    **changes: Any,
) -> handoff.Handoff:
    """Move the handoff along its transition table (409 naming its status otherwise)."""
    if target not in handoff.TRANSITIONS[h.status]:
        raise errors.Conflict(
            f"handoff {h.id} is {h.status.value}; it cannot become {target.value}",
            details={"status": h.status.value},
        )
    moved = h.model_copy(update={"status": target, **changes})
    values = {k: v for k, v in _row(moved).items() if k not in ("id", "tenant_id", "created_at")}
    conn.execute(_h.update().where(_h.c.id == h.id, _h.c.status == h.status.value), values)
    return moved
