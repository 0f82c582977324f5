"""What PostgreSQL itself spends on a benchmark: commits, rows, server CPU.

``pg_stat_database`` counts commits and rows per database: a benchmark measured with
:func:`fresh_database` has one of its own, so tests of other engineers running meanwhile on
the shared ``test`` database are not counted (before 2026-11-27 they were: ~10–15 commits
per run of noise). The server's CPU is read from ``/proc`` (every ``postgres`` process of
this machine, the server running here: that one is not per database). Statement counts
would need ``pg_stat_statements``, which the server does not load. Stats reach
``pg_stat_database`` when the session that ran them flushes its counters: at most once a
second while busy, and a session that then goes idle (a pooled connection after a burst)
only 10 s later (PostgreSQL 15's ``PGSTAT_IDLE_INTERVAL``), hence the pause of 11 s; with
1.2 s the counts after a burst varied by a third from one run to the next.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import psycopg

from _fleet import BASE

_TICKS = os.sysconf("SC_CLK_TCK")
SETTLE_SECONDS = 11.0
"""How long a snapshot waits for idle sessions to flush their counters."""
_COUNTERS = (
    "SELECT xact_commit, tup_inserted + tup_updated + tup_deleted, tup_fetched "
    "FROM pg_stat_database WHERE datname = current_database()"
)


@contextmanager
def fresh_database() -> Iterator[str]:
    """The URL of a new, empty database on the benchmark server; dropped afterwards."""
    name = f"hansa_bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(BASE, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield BASE.rsplit("/", 1)[0] + f"/{name}"
    finally:
        with psycopg.connect(BASE, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


@dataclass(frozen=True)
class Spent:
    """Counters at one moment, or what was spent between two."""

    commits: float
    rows_written: float
    rows_fetched: float
    cpu_seconds: float

    def __sub__(self, other: Spent) -> Spent:
        return Spent(*(a - b for a, b in zip(self._values(), other._values(), strict=True)))

    def per(self, count: int) -> Spent:
        """Each counter divided by ``count`` (runs, steps)."""
        return Spent(*(a / count for a in self._values()))

    def _values(self) -> tuple[float, float, float, float]:
        return (self.commits, self.rows_written, self.rows_fetched, self.cpu_seconds)


def _server_cpu() -> float:
    total = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)
            if not fields[0].endswith("(postgres"):
                continue
            values = fields[1].split()
            total += int(values[11]) + int(values[12])  # utime, stime
        except (OSError, IndexError, ValueError):
            continue  # the process ended meanwhile
    return total / _TICKS


def snapshot(url: str = BASE) -> Spent:
    """The counters of ``url``'s database now, once idle sessions have flushed theirs; for
    the start of a measurement."""
    time.sleep(SETTLE_SECONDS)
    return _counters(url, _server_cpu())


def snapshot_after(url: str = BASE) -> Spent:
    """The counters at the end of a measurement: the server's CPU now, the database's
    counters once the sessions that ran it have flushed theirs."""
    cpu = _server_cpu()
    time.sleep(SETTLE_SECONDS)
    return _counters(url, cpu)


def _counters(url: str, cpu: float) -> Spent:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(_COUNTERS).fetchone()
    assert row is not None
    return Spent(float(row[0]), float(row[1]), float(row[2]), cpu)
