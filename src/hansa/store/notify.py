"""Transactional notices for other processes (PostgreSQL NOTIFY; nothing on SQLite)."""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy import Connection

from hansa.domain import notice
from hansa.domain.event import EVENTS_CHANNEL, JOBS_CHANNEL
from hansa.store import direct

_NOTIFY = sa.text("SELECT pg_notify(:p_channel, :p_payload)")


def events_committed(conn: Connection, conversation_id: str, seq: int) -> None:
    """Tell listeners that ``conversation_id`` has events up to ``seq`` once this commits."""
    if conn.dialect.name == "postgresql":
        payload = f"{notice.sender_id()}:{conversation_id}:{seq}"
        direct.scalar(conn, _NOTIFY, {"p_channel": EVENTS_CHANNEL, "p_payload": payload})


def job_enqueued(conn: Connection, kind: str) -> None:
    """Wake workers of other processes once this commits."""
    if conn.dialect.name == "postgresql":
        payload = f"{notice.sender_id()}:{kind}"
        direct.scalar(conn, _NOTIFY, {"p_channel": JOBS_CHANNEL, "p_payload": payload})
