"""The database handle: an async engine set up for SQLite (WAL) or PostgreSQL."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

from hansa import errors

DEFAULT_TENANT_ID = "default"
"""The tenant everything belongs to until authentication comes."""

_SQLITE_PRAGMAS = (
    "PRAGMA journal_mode=WAL",
    "PRAGMA synchronous=NORMAL",
    "PRAGMA foreign_keys=ON",
    "PRAGMA busy_timeout=10000",
)


def normalize_url(url: str) -> str:
    """Map plain ``sqlite:///`` and ``postgresql://`` URLs to their async drivers."""
    if url.startswith("sqlite:///"):
        return "sqlite+aiosqlite:///" + url.removeprefix("sqlite:///")
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+asyncpg://" + url.removeprefix(prefix)
    return url


class Database:
    """One engine for the whole process; transactions are short and explicit."""

    def __init__(self, url: str, *, echo: bool = False) -> None:
        self.url = normalize_url(url)
        self.dialect = sa.make_url(self.url).get_backend_name()
        if self.dialect not in ("sqlite", "postgresql"):
            raise errors.ConfigError(
                f"unsupported database {self.dialect!r}: use SQLite or PostgreSQL"
            )
        self.engine: AsyncEngine = self._create_engine(echo)

    def _create_engine(self, echo: bool) -> AsyncEngine:
        if self.dialect == "postgresql":
            return create_async_engine(self.url, echo=echo, pool_size=10, max_overflow=10)
        database = sa.make_url(self.url).database
        if database and database != ":memory:":
            Path(database).expanduser().parent.mkdir(parents=True, exist_ok=True)
        # One connection: SQLite has one writer anyway, and a single connection
        # never waits on the file lock inside this process.
        engine = create_async_engine(self.url, echo=echo, pool_size=1, max_overflow=0)
        sa.event.listen(engine.sync_engine, "connect", _sqlite_connect)
        sa.event.listen(engine.sync_engine, "begin", _sqlite_begin)
        return engine

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[AsyncConnection]:
        """A read-write transaction, committed when the block ends without error."""
        async with self.engine.begin() as conn:
            yield conn

    @asynccontextmanager
    async def read(self) -> AsyncIterator[AsyncConnection]:
        """A connection for reads (a transaction too, so reads are consistent)."""
        async with self.engine.connect() as conn:
            yield conn

    async def dispose(self) -> None:
        """Close every pooled connection."""
        await self.engine.dispose()


def _sqlite_connect(dbapi_connection: Any, _record: Any) -> None:
    # Let SQLAlchemy, not the driver, issue BEGIN so that writes take the lock up front.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    for pragma in _SQLITE_PRAGMAS:
        cursor.execute(pragma)
    cursor.close()


def _sqlite_begin(conn: sa.Connection) -> None:
    conn.exec_driver_sql("BEGIN IMMEDIATE")
