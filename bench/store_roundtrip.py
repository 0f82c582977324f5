"""What one transaction costs the caller beyond its own work: ``Database.write``/``read``
round trips on SQLite, one at a time and many at once (decision 0008).

Each write inserts one row; each read runs ``SELECT 1``-sized work: what is measured is
the store's own path (queueing, grouping, commit, settling the caller), wall time and this
process's CPU per call.

    python bench/store_roundtrip.py [--calls 2000] [--record]
Last line: ``write_us=<float> read_us=<float>``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from sqlalchemy import Connection

from _server import record
from hansa.store.db import Database


def _insert(conn: Connection) -> None:
    conn.connection.driver_connection.execute("INSERT INTO t (n) VALUES (1)")  # type: ignore[union-attr]


def _nothing(conn: Connection) -> None:
    return None


async def _timed(calls: int, work: Callable[[], Awaitable[Any]]) -> tuple[float, float]:
    """Microseconds of wall time and of CPU per call."""
    wall, cpu = time.perf_counter(), time.process_time()
    await work()
    return (
        (time.perf_counter() - wall) / calls * 1e6,
        (time.process_time() - cpu) / calls * 1e6,
    )


async def measure(path: Path, calls: int) -> dict[str, tuple[float, float]]:
    db = Database(f"sqlite:///{path}")
    db.write_now(lambda conn: conn.exec_driver_sql("CREATE TABLE t (n INTEGER)"))

    async def one_by_one(
        fn: Callable[[Callable[[Connection], None]], Awaitable[None]],
        body: Callable[[Connection], None],
    ) -> None:
        for _ in range(calls):
            await fn(body)

    async def at_once() -> None:
        await asyncio.gather(*(db.write(_insert) for _ in range(calls)))

    try:
        await one_by_one(db.write, _insert)  # warm-up
        return {
            "write, one at a time": await _timed(calls, lambda: one_by_one(db.write, _insert)),
            "read, one at a time": await _timed(calls, lambda: one_by_one(db.read, _nothing)),
            "write, all at once (grouped)": await _timed(calls, at_once),
        }
    finally:
        await db.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--record", action="store_true", help="write docs/benchmarks.md")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        figures = asyncio.run(measure(Path(tmp) / "roundtrip.db", args.calls))
    lines = [
        f"store_roundtrip: {args.calls} calls each, SQLite file; {platform.machine()}, "
        f"{os.cpu_count()} cores",
        "",
        "| call | wall µs per call | CPU µs per call |",
        "| --- | --- | --- |",
        *(f"| {name} | {wall:.0f} | {cpu:.0f} |" for name, (wall, cpu) in figures.items()),
    ]
    report = "\n".join(lines)
    print(report)
    if args.record:
        record(
            "store_roundtrip",
            report + "\n\nReproduce: `.venv/bin/python bench/store_roundtrip.py --record`. "
            "Before decision 0008 (a writer thread and reader threads) this script gave "
            "287 / 247 µs (wall / CPU) per write and 315 / 302 µs per read one at a time in "
            "the same hour (475 / 358 and 405 / 323 in an earlier measurement).",
        )
    write, read = figures["write, one at a time"][0], figures["read, one at a time"][0]
    print(f"write_us={write:.1f} read_us={read:.1f}")


if __name__ == "__main__":
    main()
