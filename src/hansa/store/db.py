"""The database handle: SQLAlchemy Core on a sync engine, driven from worker threads.

A transaction runs as one plain function on a thread (``write`` or ``read``), so
the event loop pays one hand-off per transaction rather than one per statement,
and never blocks. SQLite (the default) gets one writer thread and connection —
SQLite has one writer anyway, and in-process writers never wait on its file lock
— plus reader threads that WAL lets run beside it. PostgreSQL gets a pool.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import sqlalchemy as sa
from sqlalchemy import Connection, Engine

from hansa import errors
from hansa.store.writer import GroupWriter

T = TypeVar("T")

DEFAULT_TENANT_ID = "default"
"""The tenant everything belongs to until authentication comes."""

_SQLITE_PRAGMAS = (
    "PRAGMA journal_mode=WAL",
    "PRAGMA synchronous=NORMAL",
    "PRAGMA foreign_keys=ON",
    "PRAGMA busy_timeout=10000",
)
_SQLITE_READERS = 2
_POSTGRES_THREADS = 8


def normalize_url(url: str) -> str:
    """Map async-driver and bare PostgreSQL URLs to the drivers Hansa uses."""
    url = url.replace("sqlite+aiosqlite://", "sqlite://")
    for prefix in ("postgresql+asyncpg://", "postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url.removeprefix(prefix)
    return url


class Database:
    """One per process; ``write(fn)`` and ``read(fn)`` run ``fn(conn)`` in a transaction."""

    def __init__(self, url: str, *, echo: bool = False) -> None:
        self.url = normalize_url(url)
        self.dialect = sa.make_url(self.url).get_backend_name()
        if self.dialect == "sqlite":
            self._writer = _sqlite_engine(self.url, echo, pool_size=1)
            # reads run in autocommit: each statement sees the newest committed state
            self._reader = _sqlite_engine(self.url, echo, pool_size=_SQLITE_READERS)
            # writers take the write lock up front; issued by us, not by an engine event,
            # because any connection event makes SQLAlchemy dispatch events per statement
            self._begin = "BEGIN IMMEDIATE"
            writers, readers = 1, _SQLITE_READERS
        elif self.dialect == "postgresql":
            # pre-ping: after a database restart the first request gets a fresh connection
            engine = sa.create_engine(
                self.url,
                echo=echo,
                pool_size=_POSTGRES_THREADS * 2,
                max_overflow=0,
                pool_pre_ping=True,
            )
            self._writer = self._reader = engine
            self._begin = None
            writers = readers = _POSTGRES_THREADS
        else:
            raise errors.ConfigError(
                f"unsupported database {self.dialect!r}: use a SQLite file or PostgreSQL"
            )
        self._group: GroupWriter | None = None
        if self._begin is not None:  # SQLite: one writer thread, committing in groups
            self._group = GroupWriter(self._writer, self._begin)
        self._write_pool = ThreadPoolExecutor(writers, thread_name_prefix="hansa-db-write")
        self._read_pool = ThreadPoolExecutor(readers, thread_name_prefix="hansa-db-read")

    def engine_url(self) -> sa.URL:
        """The URL the engine connects with."""
        return self._writer.url

    async def write(self, fn: Callable[[Connection], T]) -> T:
        """Run ``fn`` in a read-write transaction: committed if it returns, rolled back if not.

        On SQLite ``fn`` may share its transaction with other writes (group commit), inside
        a savepoint of its own: its effects are all-or-nothing all the same.
        """
        if self._group is not None:
            result: T = await self._group.submit(fn)
            return result
        return await asyncio.get_running_loop().run_in_executor(
            self._write_pool, self.write_now, fn
        )

    async def read(self, fn: Callable[[Connection], T]) -> T:
        """Run ``fn`` for reading; on SQLite each statement sees the newest committed state."""

        def reading() -> T:
            with self._reader.begin() as conn:
                return fn(conn)

        return await asyncio.get_running_loop().run_in_executor(self._read_pool, reading)

    def write_now(self, fn: Callable[[Connection], T]) -> T:
        """``write`` for code that is not async (migrations, command-line tools)."""
        if self._begin is None:
            with self._writer.begin() as conn:
                return fn(conn)
        with self._writer.connect() as conn:
            conn.exec_driver_sql(self._begin)
            try:
                result = fn(conn)
            except BaseException:
                conn.rollback()
                raise
            conn.commit()
            return result

    async def dispose(self) -> None:
        """Finish queued transactions, stop the threads, close every connection."""
        await asyncio.get_running_loop().run_in_executor(None, self.close)

    def close(self) -> None:
        """``dispose`` for code that is not async."""
        if self._group is not None:
            self._group.close()
        for pool in (self._write_pool, self._read_pool):
            pool.shutdown()
        self._writer.dispose()
        self._reader.dispose()


def _sqlite_engine(url: str, echo: bool, *, pool_size: int) -> Engine:
    database = sa.make_url(url).database
    if database and database != ":memory:":
        Path(database).expanduser().parent.mkdir(parents=True, exist_ok=True)
    engine = sa.create_engine(
        url,
        echo=echo,
        poolclass=sa.pool.QueuePool,
        pool_size=pool_size,
        max_overflow=0,
        connect_args={"check_same_thread": False},
    )

    def on_connect(dbapi_connection: Any, _record: Any) -> None:
        # autocommit at the driver: Database.write_now issues BEGIN IMMEDIATE itself
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        for pragma in _SQLITE_PRAGMAS:
            cursor.execute(pragma)
        cursor.close()

    sa.event.listen(engine, "connect", on_connect)  # a pool event: no per-statement cost
    return engine
