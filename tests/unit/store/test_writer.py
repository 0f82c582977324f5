"""SQLite group commit: writes queued together share a transaction, each all-or-nothing."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy import Connection

from hansa.store.db import Database


@pytest.fixture
def sqlite(tmp_path: Path) -> Iterator[Database]:
    database = Database(f"sqlite:///{tmp_path}/writer.db")
    database.write_now(lambda conn: conn.exec_driver_sql("CREATE TABLE t (n INTEGER UNIQUE)"))
    yield database
    database.close()


def _insert(n: int, *, then_fail: bool = False, hold: threading.Event | None = None) -> object:
    def fn(conn: Connection) -> int:
        if hold is not None:
            hold.wait(5)  # keeps the writer busy while the next writes queue up
        conn.execute(sa.text("INSERT INTO t (n) VALUES (:n)"), {"n": n})
        if then_fail:
            raise ValueError(f"write {n} changed its mind")
        return n

    return fn


def _rows(db: Database) -> list[int]:
    return db.write_now(lambda conn: [r[0] for r in conn.exec_driver_sql("SELECT n FROM t")])


def test_a_failing_write_in_a_group_is_rolled_back_alone(sqlite: Database) -> None:
    async def scenario() -> list[object]:
        hold = threading.Event()
        first = asyncio.ensure_future(sqlite.write(_insert(1, hold=hold)))
        await asyncio.sleep(0.05)  # the writer thread now waits inside write 1
        rest = [
            asyncio.ensure_future(sqlite.write(_insert(2))),
            asyncio.ensure_future(sqlite.write(_insert(3, then_fail=True))),
            asyncio.ensure_future(sqlite.write(_insert(2))),  # unique: fails in the database
            asyncio.ensure_future(sqlite.write(_insert(4))),
        ]
        await asyncio.sleep(0.05)
        hold.set()
        return await asyncio.gather(first, *rest, return_exceptions=True)

    results = asyncio.run(scenario())
    assert results[0] == 1 and results[1] == 2 and results[4] == 4
    assert isinstance(results[2], ValueError)
    assert isinstance(results[3], sa.exc.IntegrityError)
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
        hold = threading.Event()
        first = asyncio.ensure_future(sqlite.write(_insert(1, hold=hold)))
        await asyncio.sleep(0.05)
        abandoned = asyncio.ensure_future(sqlite.write(_insert(2)))
        kept = asyncio.ensure_future(sqlite.write(_insert(3)))
        await asyncio.sleep(0.01)
        abandoned.cancel()
        hold.set()
        await first
        return await kept

    assert asyncio.run(scenario()) == 3
    assert sorted(_rows(sqlite)) == [1, 2, 3], "a write handed over completes regardless"


def test_a_closed_database_refuses_writes(tmp_path: Path) -> None:
    database = Database(f"sqlite:///{tmp_path}/closed.db")
    database.close()

    async def scenario() -> None:
        await database.write(lambda conn: conn.exec_driver_sql("SELECT 1"))

    with pytest.raises(RuntimeError, match="closed"):
        asyncio.run(scenario())
