"""SQLite's one writer: a thread that commits the write functions queued meanwhile together.

SQLite has one writer at a time anyway; what a transaction costs beyond its
statements (``BEGIN IMMEDIATE``, the commit's WAL write, waking a thread, waking the
event loop) is paid once per *group* here. While one group commits, the next
collects. Each function of a group runs inside its own savepoint: one that raises
is rolled back alone and its caller gets the exception, as with a transaction of
its own; the others commit. Callers hear of their result only after the commit.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Engine

log = logging.getLogger(__name__)

GROUP_LIMIT = 64
"""Write functions committed together at most."""


@dataclass(slots=True)
class _Write:
    fn: Callable[[Connection], Any]
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[Any]
    result: Any = None
    error: BaseException | None = None


class GroupWriter:
    """Runs write functions on one thread, many per transaction."""

    def __init__(self, engine: Engine, begin: str) -> None:
        self._engine = engine
        self._begin = begin
        self._pending: queue.SimpleQueue[_Write | None] = queue.SimpleQueue()
        self._closed = False
        self._thread = threading.Thread(target=self._serve, name="hansa-db-write", daemon=True)
        self._thread.start()

    def submit(self, fn: Callable[[Connection], Any]) -> asyncio.Future[Any]:
        """Queue ``fn``; the future settles after the commit of its group."""
        if self._closed:
            raise RuntimeError("the database is closed: no more writes")
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        self._pending.put(_Write(fn, loop, future))
        return future

    def close(self) -> None:
        """Commit what is queued, then stop the thread."""
        if self._closed:
            return
        self._closed = True
        self._pending.put(None)
        self._thread.join()

    def _serve(self) -> None:
        while True:
            first = self._pending.get()
            if first is None:
                return
            group = [first]
            stop = False
            while len(group) < GROUP_LIMIT:
                try:
                    more = self._pending.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    stop = True
                    break
                group.append(more)
            self._commit(group)
            if stop:
                return

    def _commit(self, group: list[_Write]) -> None:
        try:
            with self._engine.connect() as conn:
                # the transaction is the driver's: statements run through store.direct or
                # Connection.execute alike, and SQLAlchemy's own bookkeeping is not paid twice
                driver = conn.connection.driver_connection
                driver.execute(self._begin)
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
        except BaseException as exc:  # the whole group failed: every caller hears it
            for write in group:
                write.error = write.error or exc
                write.result = None
        by_loop: dict[asyncio.AbstractEventLoop, list[_Write]] = {}
        for write in group:
            by_loop.setdefault(write.loop, []).append(write)
        for loop, writes in by_loop.items():
            try:
                loop.call_soon_threadsafe(_settle, writes)
            except RuntimeError:  # that loop is closed: nobody waits any more
                log.debug("dropping the results of %d writes for a closed loop", len(writes))


def _run_in_savepoint(driver: Any, conn: Connection, write: _Write) -> None:
    driver.execute("SAVEPOINT hansa_write")
    try:
        write.result = write.fn(conn)
    except Exception as exc:
        write.error = exc
        driver.execute("ROLLBACK TO hansa_write")
    driver.execute("RELEASE hansa_write")


def _settle(writes: list[_Write]) -> None:
    for write in writes:
        if write.future.cancelled():
            continue
        if write.error is not None:
            write.future.set_exception(write.error)
        else:
            write.future.set_result(write.result)
