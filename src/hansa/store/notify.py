"""Transactional notices for other processes (PostgreSQL NOTIFY; nothing on SQLite)."""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy import Connection

from hansa.domain import notice
from hansa.domain.event import EVENTS_CHANNEL, JOBS_CHANNEL

_NOTIFY = sa.text("SELECT pg_notify(:channel, :payload)")


def events_committed(conn: Connection, conversation_id: str, seq: int) -> None:
    """Tell listeners that ``conversation_id`` has events up to ``seq`` once this commits."""
    if conn.dialect.name == "postgresql":
        payload = f"{notice.sender_id()}:{conversation_id}:{seq}"
        conn.execute(_NOTIFY, {"channel": EVENTS_CHANNEL, "payload": payload})


def job_enqueued(conn: Connection, kind: str) -> None:
    """Wake workers of other processes once this commits."""
    if conn.dialect.name == "postgresql":
        conn.execute(_NOTIFY, {"channel": JOBS_CHANNEL, "payload": f"{notice.sender_id()}:{kind}"})
