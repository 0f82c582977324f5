"""SQLite's one writer: the write functions queued in one pass of the event loop commit
together, on the loop's own thread.

SQLite has one writer anyway, and with the WAL and ``synchronous=NORMAL`` a commit
appends to the WAL without waiting for the disk: a transaction is some microseconds
of C plus the write functions' own Python, which holds the GIL on any thread.
Handing each transaction to a thread and back cost ~350 µs of CPU here, more than
most transactions (decision 0008), so writes run on the thread of the loop that
asked for them. What is queued while the loop runs its other callbacks commits as
one *group* (``GROUP_LIMIT`` at most; one group per pass of the loop, so requests and
streams are served between groups), each write inside its own savepoint: one that
raises is rolled back alone and its caller gets the exception, as with a transaction
of its own; the others commit. Callers hear of their result only after the commit.

The loop never waits on another process: the connection's busy timeout is zero
there, and a group that finds the database locked by another process (or the
connection in use by another thread) is handed to a thread that waits up to
``BUSY_TIMEOUT_MS``. SQLite's own checkpoint (every ~1,000 WAL pages, inside a
commit, with two fsyncs) does stall the loop: a few ms, 8.7 ms at most in 20,000
commits measured here. Run from another thread instead, a checkpoint never let a
busy writer restart the WAL, which then grew without end.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine

from hansa.store import direct

log = logging.getLogger(__name__)

T = TypeVar("T")

GROUP_LIMIT = 16
"""Write functions committed together at most. A group holds the loop while it runs: in a burst
of runs, 16 run steps took ~22 ms here (64: ~70 ms, up to 342 ms) for the same throughput."""

BUSY_TIMEOUT_MS = 10_000
"""How long a write waits for another process's write lock (on a thread, never the loop)."""


@dataclass(slots=True)
class _Write:
    fn: Callable[[Connection], Any]
    future: asyncio.Future[Any] | None
    result: Any = None
    error: BaseException | None = None


class _Locked(Exception):
    """Another process holds the database's write lock."""


class GroupWriter:
    """Runs write functions on the asking loop's thread, many per transaction."""

    def __init__(self, engine: Engine, begin: str) -> None:
        self._engine = engine
        self._begin = begin
        self._conn: Connection | None = None
        self._guard = threading.Lock()  # one connection: another thread waits its turn
        self._pending: dict[asyncio.AbstractEventLoop, list[_Write]] = {}
        self._waiting = ThreadPoolExecutor(1, thread_name_prefix="hansa-db-write")
        self._handed = 0
        """Groups handed to the waiting thread, not committed yet."""
        self._closed = False

    def submit(self, fn: Callable[[Connection], Any]) -> asyncio.Future[Any]:
        """Queue ``fn``; the future settles after the commit of its group."""
        if self._closed:
            raise RuntimeError("the database is closed: no more writes")
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        queued = self._pending.get(loop)
        if queued is None:
            queued = self._pending[loop] = []
            loop.call_soon(self._flush, loop)
        queued.append(_Write(fn, future))
        return future

    def run_now(self, fn: Callable[[Connection], T]) -> T:
        """Run ``fn`` in a transaction of its own, waiting for the lock (code that is not async)."""
        write = _Write(fn, None)
        self._commit_waiting([write])
        if write.error is not None:
            raise write.error
        result: T = write.result
        return result

    async def drain(self) -> None:
        """Wait until this loop's queued and handed-over writes have committed."""
        await self.submit(lambda conn: None)  # commits with (or after) what is queued here
        await asyncio.wrap_future(self._waiting.submit(lambda: None))  # one thread, in order

    def close(self) -> None:
        """Refuse new writes, wait for the threads, close the connection."""
        if self._closed:
            return
        self._closed = True
        self._waiting.shutdown()
        with self._guard:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def _flush(self, loop: asyncio.AbstractEventLoop) -> None:
        # one group per pass of the loop: what is ready to send or receive goes in between
        queued = self._pending.pop(loop, [])
        group, rest = queued[:GROUP_LIMIT], queued[GROUP_LIMIT:]
        if rest:
            self._pending[loop] = rest
            loop.call_soon(self._flush, loop)
        # while a group waits on the thread, later ones queue behind it: first come, first
        # committed
        if not self._handed and self._guard.acquire(blocking=False):
            try:
                self._commit(group, wait=False)
            except _Locked:
                pass
            else:
                _settle(group)
                return
            finally:
                self._guard.release()
        self._handed += 1
        waiting = loop.run_in_executor(self._waiting, self._commit_waiting, group)
        waiting.add_done_callback(lambda _: self._settle_handed(group))

    def _settle_handed(self, group: list[_Write]) -> None:
        self._handed -= 1
        _settle(group)

    def _commit_waiting(self, group: list[_Write]) -> None:
        with self._guard:
            self._commit(group, wait=True)

    def _commit(self, group: list[_Write], *, wait: bool) -> None:
        """Run ``group`` in one transaction; the caller holds the guard. Unless ``wait``,
        raises ``_Locked`` before running anything if another process holds the lock."""
        try:
            conn = self._connection()
            # the transaction is the driver's: statements run through store.direct or
            # Connection.execute alike, and SQLAlchemy's own bookkeeping is not paid twice
            driver = direct.driver(conn)
            _begin(driver, self._begin, wait=wait)
            try:
                if len(group) == 1:
                    group[0].result = group[0].fn(conn)
                else:
                    for write in group:
                        _run_in_savepoint(driver, conn, write)
            except BaseException:
                driver.rollback()
                raise
            driver.commit()
        except _Locked:
            raise
        except BaseException as exc:  # the whole group failed: every caller hears it
            for write in group:
                write.error = write.error or exc
                write.result = None
            if not isinstance(exc, Exception):  # KeyboardInterrupt, SystemExit: stop the loop
                raise
        finally:
            if self._conn is not None and self._conn.in_transaction():
                self._conn.rollback()  # only SQLAlchemy's bookkeeping: the driver's has ended

    def _connection(self) -> Connection:
        if self._conn is None:
            self._conn = self._engine.connect()
            direct.driver(self._conn).execute("PRAGMA busy_timeout=0")
        return self._conn


def _begin(driver: sqlite3.Connection, begin: str, *, wait: bool) -> None:
    if not wait:
        try:
            driver.execute(begin)
        except sqlite3.OperationalError as exc:
            if exc.sqlite_errorcode & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
                raise _Locked from exc
            raise
        return
    driver.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    try:
        driver.execute(begin)
    finally:
        driver.execute("PRAGMA busy_timeout=0")


def _run_in_savepoint(driver: sqlite3.Connection, conn: Connection, write: _Write) -> None:
    driver.execute("SAVEPOINT hansa_write")
    try:
        write.result = write.fn(conn)
    except Exception as exc:
        write.error = exc
        driver.execute("ROLLBACK TO hansa_write")
    driver.execute("RELEASE hansa_write")


def _settle(writes: list[_Write]) -> None:
    for write in writes:
        if write.future is None or write.future.cancelled():
            continue
        if write.error is not None:
            write.future.set_exception(write.error)
        else:
            write.future.set_result(write.result)
