"""The database handle: SQLAlchemy Core on a sync engine; a transaction is one plain
function (``write`` or ``read``) run with a connection.

SQLite (the default) runs them on the event loop's own thread: a transaction there
is microseconds of C beside its own Python, which holds the GIL on any thread, and a
hand-off to a thread and back cost more than that (decision 0008). Writes queued in
one pass of the loop commit together (``store/writer.py``); a read runs on a
connection of its own, which WAL lets read beside the writer. Whatever would wait
(another process's write lock) waits on a thread, not on the loop, and so does a read
whose cost grows with the data: its repository function is marked ``@growing`` and
``read`` routes it to a reader thread by itself.
PostgreSQL, where every statement is a round trip, runs transactions on a pool of
threads.

A write that queued a job (``queue.enqueue`` marks its connection with ``enqueued``)
calls ``Database.on_enqueued`` once it has committed: the composition root points it at
this process's worker, which then looks at once instead of at its next poll (workers of
other processes hear ``NOTIFY``). So no caller wakes a worker by hand.
"""

from __future__ import annotations

import asyncio
import select
import sqlite3
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar, cast

import psycopg
import sqlalchemy as sa
from opentelemetry.context import Context
from sqlalchemy import Connection, Engine

from hansa import errors, tracing
from hansa.store import direct
from hansa.store.writer import GroupWriter

T = TypeVar("T")
P = ParamSpec("P")
F = TypeVar("F", bound=Callable[..., Any])

DEFAULT_TENANT_ID = "default"
"""The tenant everything belongs to until authentication comes."""

SQLITE_PRAGMAS = (
    "PRAGMA journal_mode=WAL",
    "PRAGMA synchronous=NORMAL",
    "PRAGMA foreign_keys=ON",
    "PRAGMA busy_timeout=10000",
)
"""Set on every SQLite connection (bench/storage_floor.py replays with the same)."""

_SQLITE_READERS = 2
_POSTGRES_THREADS = 8
_GROWING = "__hansa_growing__"
_ENQUEUED = "hansa.enqueued"
_TRACE = "hansa.trace"


def growing(fn: F) -> F:
    """Mark a repository function whose cost grows with the data (a whole timeline, every
    message, a tenant's lists): ``Database.read`` runs it on a reader thread, so that the
    loop goes on serving meanwhile (decision 0008)."""
    setattr(fn, _GROWING, True)
    return fn


def is_growing(fn: Callable[..., Any]) -> bool:
    """Whether ``fn`` is marked ``@growing``."""
    return bool(getattr(fn, _GROWING, False))


def caller_trace(conn: Connection) -> Context | None:
    """The trace context of the code that called ``write`` for the transaction on ``conn``
    (``store/queue.py`` puts it in the jobs it queues)."""
    found = conn.info.get(_TRACE)
    return found if isinstance(found, Context) else None


def enqueued(conn: Connection) -> None:
    """Note that the transaction on ``conn`` queued a job: once it commits, ``write``
    calls ``on_enqueued``."""
    conn.info[_ENQUEUED] = True


def _noting(fn: Callable[[Connection], T]) -> Callable[[Connection], tuple[T, bool]]:
    """``fn``, also answering whether it queued a job (a group's writes share a connection,
    one after another: the mark is cleared before and after each). ``fn`` sees its caller's
    trace context (:func:`caller_trace`; the writer thread has none of its own)."""
    caller = tracing.current()

    def noted(conn: Connection) -> tuple[T, bool]:
        conn.info.pop(_ENQUEUED, None)
        conn.info[_TRACE] = caller
        try:
            return fn(conn), bool(conn.info.get(_ENQUEUED))
        finally:
            conn.info.pop(_ENQUEUED, None)
            conn.info.pop(_TRACE, None)

    return noted


def normalize_url(url: str) -> str:
    """Map async-driver and bare PostgreSQL URLs to the drivers Hansa uses."""
    url = url.replace("sqlite+aiosqlite://", "sqlite://")
    for prefix in ("postgresql+asyncpg://", "postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url.removeprefix(prefix)
    return url


class Database:
    """One per process; ``write(fn)`` and ``read(fn, *args)`` run ``fn(conn, …)`` in a
    transaction."""

    def __init__(
        self,
        url: str,
        *,
        echo: bool = False,
        lock_timeout_seconds: float = 5.0,
        idle_in_transaction_seconds: float = 5.0,
    ) -> None:
        self.url = normalize_url(url)
        self.dialect = sa.make_url(self.url).get_backend_name()
        if self.dialect == "sqlite":
            self._writer = _sqlite_engine(self.url, echo, pool_size=1)
            # reads run in autocommit: each statement sees the newest committed state
            # (the pool's threads' and the loop's own connection)
            self._reader = _sqlite_engine(self.url, echo, pool_size=_SQLITE_READERS + 1)
            # writers take the write lock up front; issued by us, not by an engine event,
            # because any connection event makes SQLAlchemy dispatch events per statement
            self._begin: str | None = "BEGIN IMMEDIATE"
            writers, readers = 1, _SQLITE_READERS
        elif self.dialect == "postgresql":
            engine = sa.create_engine(
                self.url,
                echo=echo,
                pool_size=_POSTGRES_THREADS * 2,
                max_overflow=0,
                # %s placeholders in a fixed order: store.direct runs the compiled text on
                # psycopg's connection (decision 0028)
                paramstyle="format",
                connect_args={
                    "options": _pg_options(
                        sa.make_url(self.url).query.get("options"),
                        lock_timeout_seconds,
                        idle_in_transaction_seconds,
                    )
                },
            )
            # after a database restart the first request gets a fresh connection
            sa.event.listen(engine, "checkout", _hung_up)  # a pool event: none per statement
            self._writer = engine
            # reads in autocommit: under READ COMMITTED each statement of a read transaction
            # took a snapshot of its own anyway, and a read of one statement (a key, the
            # local-mode check, "is a job due?") is one round trip instead of three (BEGIN,
            # the statement, COMMIT; decision 0028)
            self._reader = engine.execution_options(isolation_level="AUTOCOMMIT")
            self._begin = None
            writers = readers = _POSTGRES_THREADS
        else:
            raise errors.ConfigError(
                f"unsupported database {self.dialect!r}: use a SQLite file or PostgreSQL"
            )
        self._group: GroupWriter | None = None
        if self._begin is not None:  # SQLite: writes on the loop's thread, in groups
            self._group = GroupWriter(self._writer, self._begin)
        self._near = threading.Lock()
        self._near_conn: Connection | None = None
        self._write_pool = ThreadPoolExecutor(writers, thread_name_prefix="hansa-db-write")
        self.on_enqueued: Callable[[], None] | None = None
        """Called on the loop, after a ``write`` that queued a job has committed (wakes this
        process's worker; set by the composition root)."""
        self._read_pool = ThreadPoolExecutor(readers, thread_name_prefix="hansa-db-read")

    def engine_url(self) -> sa.URL:
        """The URL the engine connects with."""
        return self._writer.url

    async def write(self, fn: Callable[[Connection], T]) -> T:
        """Run ``fn`` in a read-write transaction: committed if it returns, rolled back if not.

        On SQLite ``fn`` may share its transaction with other writes (group commit), inside
        a savepoint of its own: its effects are all-or-nothing all the same. If it queued a
        job, ``on_enqueued`` is called after the commit.
        """
        noted = _noting(fn)
        if self._group is not None:
            result, queued = await self._group.submit(noted)
        else:
            result, queued = await asyncio.get_running_loop().run_in_executor(
                self._write_pool, self.write_now, noted
            )
        if queued and self.on_enqueued is not None:
            self.on_enqueued()
        return cast("T", result)

    async def read(
        self, fn: Callable[Concatenate[Connection, P], T], /, *args: P.args, **kwargs: P.kwargs
    ) -> T:
        """Run ``fn(conn, *args, **kwargs)`` for reading; on SQLite each statement sees the
        newest committed state.

        On SQLite a read of a bounded size (a key, a page, a run's tasks) runs on the loop's
        thread, which waits for it; a repository function marked ``@growing`` runs on a
        reader thread. ``read(lambda conn: …)`` is a bounded read.
        """

        reading: Callable[[Connection], T]
        if args or kwargs:

            def bound(conn: Connection) -> T:
                return fn(conn, *args, **kwargs)

            reading = bound
        else:  # ``read(lambda conn: …)``, the commonest: no wrapper on the way
            reading = cast("Callable[[Connection], T]", fn)
        if self._group is None or is_growing(fn):
            return await self._read_off(reading)
        if self._near.acquire(blocking=False):
            try:
                return self._read_near(reading)
            except sa.exc.OperationalError as exc:
                if not _locked(exc):
                    raise
                # rare with WAL (another process recovering the file, say): wait on a thread
            finally:
                self._near.release()
        return await self._read_off(reading)

    async def _read_off(self, fn: Callable[[Connection], T]) -> T:
        """``fn`` on a reader thread, while the loop goes on serving."""

        def reading() -> T:
            with self._reader.begin() as conn:
                return fn(conn)

        return await asyncio.get_running_loop().run_in_executor(self._read_pool, reading)

    def _read_near(self, fn: Callable[[Connection], T]) -> T:
        """``fn`` on the loop's thread, on a connection that never waits for a lock."""
        if self._near_conn is None:
            self._near_conn = self._reader.connect()
            direct.driver(self._near_conn).execute("PRAGMA busy_timeout=0")
        with self._near_conn.begin():
            return fn(self._near_conn)

    def write_now(self, fn: Callable[[Connection], T]) -> T:
        """``write`` for code that is not async (migrations, command-line tools)."""
        if self._group is not None:
            return self._group.run_now(fn)
        with self._writer.begin() as conn:
            return fn(conn)

    async def dispose(self) -> None:
        """Finish queued transactions, stop the threads, close every connection."""
        if self._group is not None:
            await self._group.drain()
        await asyncio.get_running_loop().run_in_executor(None, self.close)

    def close(self) -> None:
        """``dispose`` for code that is not async."""
        if self._group is not None:
            self._group.close()
        with self._near:
            if self._near_conn is not None:
                self._near_conn.close()
                self._near_conn = None
        for pool in (self._write_pool, self._read_pool):
            pool.shutdown()
        self._writer.dispose()
        self._reader.dispose()


def _hung_up(dbapi_connection: Any, _record: Any, _proxy: Any) -> None:
    """SQLAlchemy's pre-ping without its cost: a pooled PostgreSQL connection the server hung
    up on is replaced at checkout, so that the first request after a restart does not fail.

    ``pool_pre_ping`` sent ``SELECT 1`` in autocommit at every checkout: a round trip and a
    transaction of its own before each of ours, half of the commits PostgreSQL counted in a
    burst of runs (decision 0028). An idle connection receives nothing unless the server
    ends it (a shutdown sends its FATAL, then closes): its socket is then readable, which a
    zero-timeout ``select`` tells without a round trip. Every older connection is replaced
    too, as after a failed pre-ping: a restart ended them all.
    """
    try:
        readable, _, _ = select.select([dbapi_connection.pgconn.socket], [], [], 0)
    except (OSError, ValueError, psycopg.Error) as exc:
        raise sa.exc.DisconnectionError(f"the pooled connection is gone: {exc}") from exc
    if readable or dbapi_connection.closed:
        error = sa.exc.DisconnectionError("the server hung up on a pooled connection")
        error.invalidate_pool = True
        raise error


def _locked(exc: sa.exc.OperationalError) -> bool:
    code = getattr(exc.orig, "sqlite_errorcode", 0) & 0xFF
    return code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


def _pg_options(given: str | tuple[str, ...] | None, lock_timeout: float, idle: float) -> str:
    """Session settings: a writer waits for a row lock at most ``lock_timeout`` (then the
    caller gets 503 and may retry), and a session frozen inside a transaction (a stopped
    process, a partition) is ended after ``idle_in_transaction``, releasing its locks so that
    another worker can take its job over (review M1). Options the URL gives
    (``?options=-csearch_path%3D…``) are kept, after ours: they may set these two too."""
    ours = (
        f"-c lock_timeout={int(lock_timeout * 1000)} "
        f"-c idle_in_transaction_session_timeout={int(idle * 1000)}"
    )
    if not given:
        return ours
    return " ".join([ours, *([given] if isinstance(given, str) else given)])


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
        # autocommit at the driver: the group writer issues BEGIN IMMEDIATE itself
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        for pragma in SQLITE_PRAGMAS:
            cursor.execute(pragma)
        cursor.close()

    sa.event.listen(engine, "connect", on_connect)  # a pool event: no per-statement cost
    return engine
