"""A worker's presence: a sign of life that ends with its process (issue 34 item 1).

A worker that dies (``kill -9``, an OOM kill, a deploy) leaves its jobs running with a
lease that runs for up to ``lease_seconds`` (10 s): a person watching one of its runs saw
it freeze that long. A present worker holds something the operating system or PostgreSQL
lets go the moment its process ends, so another worker notices the death instead of
waiting it out:

- PostgreSQL: a session-level advisory lock keyed by the owner's name, on a connection of
  its own. ``kill -9`` closes the socket; the server ends the session and drops the lock
  within milliseconds. A claim's look for takeovers (once per poll) counts a running job
  whose owner's lock is not held (``pg_locks``) as abandoned, like one whose lease ran out.
- SQLite (one host): an exclusive ``flock`` on a file of the owner's own beside the
  database (``.<database's file name>-presence/``). The kernel releases it when the process ends; a
  worker that can take another owner's lock knows that owner is dead, and ends its leases.

Only the owner's presence is new: a takeover is still a claim that bumps the job's epoch,
and every write made for a job is still fenced at its row (decision 0017), so a worker that
lost its lock connection but still runs has its late writes refused. A frozen worker (its
process stopped) keeps its lock: there the lease stays the backstop. Owners that hold a
presence say so at the end of their name (:data:`MARK`): the jobs of an older worker,
which holds none, are still left to their lease.
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import select
import threading
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import sqlalchemy as sa
from sqlalchemy import Connection
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.expression import ColumnElement

from hansa.domain import job
from hansa.store import direct, tables

log = logging.getLogger(__name__)

MARK = "+present"
"""The end of the name of an owner that holds a presence."""
LOCK_SPACE = 0x48414E53
"""The first key of every presence lock (``'HANS'``); the second is ``hashtext(owner)``.
Two owners whose names hash alike share a lock: the dead one's jobs then wait for their
lease, as before; nothing is ever taken from a live one."""
RESTART_GRACE_SECONDS = 15.0
"""For this long after PostgreSQL (re)started, a missing lock may only mean that its owner
has not reconnected yet: only leases count then."""


_jobs = tables.jobs
_RUNNING = job.JobStatus.RUNNING.value
_OWNERS = sa.select(_jobs.c.lease_owner).where(_jobs.c.status == _RUNNING).distinct()
_END_LEASES = (
    sa.update(_jobs)
    .where(_jobs.c.status == _RUNNING, _jobs.c.lease_owner == sa.bindparam("p_owner"))
    .values(lease_until=sa.bindparam("p_ended"))
)


def owner_name(base: str) -> str:
    """The lease owner name of a worker that holds a presence."""
    return base + MARK


class Abandoned(ColumnElement[bool]):
    """True for a job whose owner held a presence and holds it no more (PostgreSQL; on
    SQLite always false: :class:`FilePresence` ends such leases before the claim)."""

    inherit_cache = True
    type = sa.Boolean()


@compiles(Abandoned)
def _never(element: Abandoned, compiler: Any, **kw: Any) -> str:
    return "1 = 0"


@compiles(Abandoned, "postgresql")
def _lock_gone(element: Abandoned, compiler: Any, **kw: Any) -> str:
    # A hashed subplan: pg_locks is read once per statement, not once per running job.
    return (
        f"(right(jobs.lease_owner, {len(MARK)}) = '{MARK}'"
        f" AND pg_postmaster_start_time() < now() - interval '{RESTART_GRACE_SECONDS} seconds'"
        " AND hashtext(jobs.lease_owner)::oid NOT IN (SELECT objid FROM pg_locks"
        f" WHERE locktype = 'advisory' AND classid = {LOCK_SPACE} AND objsubid = 2 AND granted"
        " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())))"
    )


class Presence:
    """No presence: an in-memory database, which no other process shares."""

    checks_owners = False
    """Whether :meth:`abandoned` finds dead owners (else the claim itself does)."""

    def hold(self) -> bool:
        """Take the presence, or take it again if it was lost; whether it is held now.
        May block (a connection): call it off the event loop."""
        return True

    def lost(self) -> bool:
        """Whether a presence held before is gone (its connection ended); no round trip."""
        return False

    def abandoned(self, owners: set[str]) -> list[str]:
        """The ``owners`` known dead (SQLite; PostgreSQL finds them in the claim itself)."""
        return []

    def close(self) -> None:
        """Let the presence go (a worker that stops)."""


class PostgresPresence(Presence):
    """A session-level advisory lock on a connection of its own."""

    def __init__(self, dsn: str, owner: str) -> None:
        self._dsn = dsn
        self._owner = owner
        self._conn: psycopg.Connection[Any] | None = None
        self._lock = threading.Lock()

    def hold(self) -> bool:
        with self._lock:
            if self._conn is not None and not self._gone(self._conn):
                return True
            self._drop()
            try:
                conn = psycopg.connect(self._dsn, autocommit=True, connect_timeout=5)
                row = conn.execute(
                    "SELECT pg_try_advisory_lock(%s, hashtext(%s))", (LOCK_SPACE, self._owner)
                ).fetchone()
            except psycopg.Error as exc:
                log.warning("worker presence not held (%s); retrying", exc)
                return False
            if not (row and row[0]):  # another live owner's name hashes alike: leases only
                log.warning("presence lock of %s is held by another owner", self._owner)
            self._conn = conn
            return True

    def lost(self) -> bool:
        conn = self._conn
        return conn is None or self._gone(conn)

    def close(self) -> None:
        with self._lock:
            self._drop()

    def _drop(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            except psycopg.Error:
                pass
            self._conn = None

    @staticmethod
    def _gone(conn: psycopg.Connection[Any]) -> bool:
        # An idle session receives nothing unless the server ends it: readable means gone
        # (as store/db.py's _hung_up).
        if conn.closed:
            return True
        try:
            readable, _, _ = select.select([conn.pgconn.socket], [], [], 0)
        except (OSError, ValueError, psycopg.Error):
            return True
        return bool(readable)


class FilePresence(Presence):
    """An exclusive ``flock`` on a file of the owner's own, in ``folder``."""

    checks_owners = True

    def __init__(self, folder: Path, owner: str) -> None:
        self._folder = folder
        self._owner = owner
        self._fd: int | None = None
        self._tried = False

    def hold(self) -> bool:
        if self._tried:
            return True
        self._tried = True
        try:
            self._folder.mkdir(parents=True, exist_ok=True)
            fd = os.open(self._path(self._owner), os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:  # a read-only folder, say: this worker's jobs wait for leases
            log.warning("worker presence not held (%s): a restart waits for leases", exc)
            return True
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # a live owner's name hashes alike: leases only
            os.close(fd)
            log.warning("presence file of %s is held by another owner", self._owner)
            return True
        os.ftruncate(fd, 0)
        os.write(fd, self._owner.encode())
        self._fd = fd
        return True

    def lost(self) -> bool:
        return not self._tried  # a lock the kernel holds for this process is never lost

    def abandoned(self, owners: set[str]) -> list[str]:
        dead = []
        for owner in owners:
            if owner == self._owner or not owner.endswith(MARK):
                continue
            path = self._path(owner)
            try:
                fd = os.open(path, os.O_RDWR)
            except OSError:  # never present here, found dead already, or out of reach
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # alive: it holds its lock
            else:
                dead.append(owner)
                path.unlink(missing_ok=True)
            finally:
                os.close(fd)
        return dead

    def close(self) -> None:
        if self._fd is not None:
            self._path(self._owner).unlink(missing_ok=True)
            os.close(self._fd)
            self._fd = None

    def _path(self, owner: str) -> Path:
        return self._folder / (hashlib.sha256(owner.encode()).hexdigest()[:24] + ".lock")


def running_owners(conn: Connection) -> set[str]:
    """The owners of running jobs (SQLite: whose presence :class:`FilePresence` checks)."""
    return {row["lease_owner"] for row in direct.rows(conn, _OWNERS, {})} - {None}


def end_leases(conn: Connection, owners: list[str], now: datetime) -> None:
    """End the leases of dead ``owners``' running jobs (SQLite's clock is the caller's): the
    next look for takeovers claims them."""
    ended = now - timedelta(seconds=1)
    for owner in owners:
        direct.execute(conn, _END_LEASES, {"p_owner": owner, "p_ended": ended})


def of(url: sa.URL, owner: str) -> Presence:
    """The presence ``owner`` holds on the database at ``url``."""
    if url.get_backend_name() == "postgresql":
        dsn = url.render_as_string(hide_password=False)
        return PostgresPresence(dsn.replace("postgresql+psycopg://", "postgresql://", 1), owner)
    database = url.database
    if not database or database == ":memory:":
        return Presence()
    path = Path(database)
    return FilePresence(path.with_name(f".{path.name}-presence"), owner)
