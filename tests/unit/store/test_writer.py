"""SQLite on the loop's thread: writes queued together share a transaction, each
all-or-nothing; a lock held by another process, and a read that grows with the data, are
waited for on a thread."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy import Connection

from hansa.store.db import Database, growing


@pytest.fixture
def sqlite(tmp_path: Path) -> Iterator[Database]:
    database = Database(f"sqlite:///{tmp_path}/writer.db")
    database.write_now(lambda conn: conn.exec_driver_sql("CREATE TABLE t (n INTEGER UNIQUE)"))
    yield database
    database.close()


def _insert(n: int, *, then_fail: bool = False, seen: list[int] | None = None) -> object:
    def fn(conn: Connection) -> int:
        conn.execute(sa.text("INSERT INTO t (n) VALUES (:n)"), {"n": n})
        if seen is not None:  # what this transaction sees: the writes of its group before it
            seen.extend(r[0] for r in conn.exec_driver_sql("SELECT n FROM t ORDER BY n"))
        if then_fail:
            raise ValueError(f"write {n} changed its mind")
        return n

    return fn


def _rows(db: Database) -> list[int]:
    return db.write_now(lambda conn: [r[0] for r in conn.exec_driver_sql("SELECT n FROM t")])


def test_a_failing_write_in_a_group_is_rolled_back_alone(sqlite: Database) -> None:
    async def scenario() -> tuple[list[object], list[int]]:
        seen: list[int] = []
        writes = [  # queued in one pass of the loop: one group, one transaction
            sqlite.write(_insert(1)),
            sqlite.write(_insert(2)),
            sqlite.write(_insert(3, then_fail=True)),
            sqlite.write(_insert(2)),  # unique: fails in the database
            sqlite.write(_insert(4, seen=seen)),
        ]
        return await asyncio.gather(*writes, return_exceptions=True), seen

    results, seen = asyncio.run(scenario())
    assert results[0] == 1 and results[1] == 2 and results[4] == 4
    assert isinstance(results[2], ValueError)
    assert isinstance(results[3], sa.exc.IntegrityError)
    assert seen == [1, 2, 4], "one transaction: write 4 saw 1 and 2, not the rolled-back 3"
    assert sorted(_rows(sqlite)) == [1, 2, 4], "the failed writes left nothing behind"


def test_results_arrive_only_after_the_commit(sqlite: Database) -> None:
    async def scenario() -> list[int]:
        seen: list[int] = []

        async def write_then_read(n: int) -> None:
            await sqlite.write(_insert(n))
            # another connection sees the row as soon as the caller hears of it
            rows = await sqlite.read(
                lambda conn: conn.exec_driver_sql("SELECT n FROM t WHERE n = ?", (n,)).all()
            )
            seen.extend(r[0] for r in rows)

        await asyncio.gather(*(write_then_read(n) for n in range(20)))
        return seen

    assert sorted(asyncio.run(scenario())) == list(range(20))


def test_a_caller_that_gave_up_does_not_stop_the_others(sqlite: Database) -> None:
    async def scenario() -> int:
        abandoned = asyncio.ensure_future(sqlite.write(_insert(2)))
        kept = asyncio.ensure_future(sqlite.write(_insert(3)))
        await asyncio.sleep(0)  # both are queued; their group has not run yet
        abandoned.cancel()
        return await kept

    assert asyncio.run(scenario()) == 3
    assert sorted(_rows(sqlite)) == [2, 3], "a write handed over completes regardless"


def test_a_lock_held_by_another_process_is_waited_for_off_the_loop(
    sqlite: Database, tmp_path: Path
) -> None:
    other = sqlite3.connect(tmp_path / "writer.db", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # as another process's writer would
    other.execute("INSERT INTO t (n) VALUES (100)")

    async def scenario() -> tuple[int, int]:
        write = asyncio.ensure_future(sqlite.write(_insert(1)))
        ticks = 0
        started = time.monotonic()
        while time.monotonic() - started < 0.3:  # the loop keeps running meanwhile
            await asyncio.sleep(0.01)
            ticks += 1
        assert not write.done(), "the write waits for the other writer"
        other.commit()
        return await write, ticks

    result, ticks = asyncio.run(scenario())
    other.close()
    assert result == 1
    assert ticks >= 10, f"the loop was blocked: {ticks} ticks in 0.3 s"
    assert sorted(_rows(sqlite)) == [1, 100]


def test_a_closed_database_refuses_writes(tmp_path: Path) -> None:
    database = Database(f"sqlite:///{tmp_path}/closed.db")
    database.close()

    async def scenario() -> None:
        await database.write(lambda conn: conn.exec_driver_sql("SELECT 1"))

    with pytest.raises(RuntimeError, match="closed"):
        asyncio.run(scenario())


def test_a_growing_read_runs_off_the_loop_and_a_bounded_read_on_it(sqlite: Database) -> None:
    @growing
    def slow(conn: Connection, seconds: float, *, then: str) -> str:
        time.sleep(seconds)  # a read that grows with the data, standing in for a long one
        return f"{then} on {threading.current_thread().name}"

    async def scenario() -> tuple[str, str, int]:
        scan = asyncio.ensure_future(sqlite.read(slow, 0.3, then="scanned"))
        ticks = 0
        while not scan.done():  # the loop keeps running meanwhile
            await asyncio.sleep(0.01)
            ticks += 1
        read = await sqlite.read(lambda conn: threading.current_thread().name)
        return await scan, read, ticks

    scanned_on, read_on, ticks = asyncio.run(scenario())
    assert scanned_on.startswith("scanned on hansa-db-read")
    assert read_on == threading.main_thread().name
    assert ticks >= 10, f"the loop was blocked: {ticks} ticks in 0.3 s"
