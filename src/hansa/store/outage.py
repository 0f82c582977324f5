"""Database failures that mean "not now" rather than "this request is wrong" (review M8).

A full disk, a lock held too long, a database restarting or unreachable: the API answers
503 with ``Retry-After``, workers say so in one line now and then (not a traceback at every
poll, which would fill what is left of a full disk) and try again.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable
from typing import Literal

import psycopg
import sqlalchemy as sa

Reason = Literal["full", "busy", "read_only", "io_error", "unreachable"]

RETRY_AFTER_SECONDS = 5
"""What a 503 for an outage tells the client to wait."""

READY_AFTER_SECONDS = 10.0
"""How long ``/readyz`` stays 503 after a write met an outage (each failure renews it)."""

_LINGERING: frozenset[Reason] = frozenset({"full", "read_only", "io_error"})
"""Outages a small probe write can pass while real writes fail."""

LOG_EVERY_SECONDS = 30.0
"""A repeated outage is logged once per this long, per place."""

_SQLITE: tuple[tuple[str, Reason], ...] = (
    ("database or disk is full", "full"),
    ("disk i/o error", "io_error"),  # ENOSPC is SQLITE_FULL: this is a read-only or bad file
    ("database is locked", "busy"),
    ("database table is locked", "busy"),
    ("readonly database", "read_only"),
    ("unable to open database file", "unreachable"),
)
_POSTGRES: dict[str, Reason] = {
    "53100": "full",  # disk_full
    "53200": "full",  # out_of_memory
    "53300": "busy",  # too_many_connections
    "55P03": "busy",  # lock_not_available (lock_timeout)
    "57014": "busy",  # query_canceled (statement_timeout)
    "40P01": "busy",  # deadlock_detected
    "25006": "read_only",  # read_only_sql_transaction
    "25P03": "unreachable",  # idle_in_transaction_session_timeout ended the session
    "57P01": "unreachable",  # admin_shutdown
    "57P02": "unreachable",  # crash_shutdown
    "57P03": "unreachable",  # cannot_connect_now
}


def outage(exc: BaseException) -> Reason | None:
    """Why the database cannot take work now, or None when ``exc`` is something else."""
    if isinstance(exc, sa.exc.TimeoutError):  # every pooled connection is busy
        return "busy"
    if isinstance(exc, sa.exc.DBAPIError):
        if exc.connection_invalidated:
            return "unreachable"
        exc = exc.orig if exc.orig is not None else exc
    if isinstance(exc, sqlite3.OperationalError):
        text = str(exc).lower()
        return next((reason for needle, reason in _SQLITE if needle in text), None)
    if isinstance(exc, psycopg.Error):
        state = exc.sqlstate
        if state is None:
            return "unreachable" if isinstance(exc, psycopg.OperationalError) else None
        if state.startswith("08"):  # connection_exception
            return "unreachable"
        return _POSTGRES.get(state)
    return None


def describe(reason: Reason) -> str:
    """The reason in words, for a client or a log line."""
    return {
        "full": "the database is full",
        "busy": "the database is busy (a lock or every connection is taken)",
        "read_only": "the database accepts no writes",
        "io_error": "the database's files cannot be written (read-only, or a disk error)",
        "unreachable": "the database cannot be reached",
    }[reason]


class Throttle:
    """Says yes once per ``seconds`` for each key: one log line, not one per retry."""

    def __init__(self, seconds: float = LOG_EVERY_SECONDS) -> None:
        self._seconds = seconds
        self._last: dict[str, float] = {}
        self._lock = threading.Lock()

    def __call__(self, key: str) -> bool:
        now = time.monotonic()
        with self._lock:
            last = self._last.get(key)
            if last is not None and now - last < self._seconds:
                return False
            self._last[key] = now
            return True


class Recent:
    """The last outage a write met in this process: ``/readyz`` answers 503 for a while
    after one, since a probe can pass while real writes fail (a write that fits in pages
    SQLite already holds, say)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._last: tuple[float, Reason] | None = None

    def note(self, reason: Reason) -> None:
        """A write failed for ``reason`` now. Only a disk's state lingers: a lock held too
        long or a database out of reach is met by the probe's own write, and readiness
        comes back the moment it commits."""
        if reason in _LINGERING:
            self._last = (self._clock(), reason)

    def within(self, seconds: float) -> Reason | None:
        """The reason of an outage met in the last ``seconds``, or None."""
        if self._last is None or self._clock() - self._last[0] > seconds:
            return None
        return self._last[1]
