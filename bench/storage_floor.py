"""What SQLite alone costs for the statements of a run, on this machine: a floor under
bench/run_throughput.py's per-run figure.

Runs the benchmark's run (5 no-op tasks in groups A A A B C) through Hansa one at a
time, recording every statement its connections execute (SQL text and parameters,
``BEGIN``/``COMMIT`` included), then replays the recorded statements with nothing
else: one plain ``sqlite3`` connection with Hansa's pragmas, on a copy of the
database as it was before the recorded runs. The replay of one run is what SQLite
itself needs to persist everything the run persists; no Python of Hansa's runs.
Printed: the replayed per-run p50/p95 (statements and commits as recorded), and the
same statements with one commit per 20 runs (about what a burst's group commit pays).

    python bench/storage_floor.py [--runs 60] [--record]
Last line: ``floor_p50_ms=<float> floor_batched_ms=<float>``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from sqlite3 import dbapi2
from typing import Any

from _server import record
from hansa.engine.running import running
from hansa.engine.turns.chat import create_conversation
from hansa.settings import Settings
from hansa.store.db import DEFAULT_TENANT_ID as TENANT
from hansa.store.db import SQLITE_PRAGMAS
from run_throughput import _hansa_run

Statement = tuple[str, Any, bool]  # SQL, parameters, executemany?
_recording: list[list[Statement]] | None = None


def _note(sql: str, params: Any = (), many: bool = False) -> None:
    if _recording is not None:
        _recording[-1].append((sql, list(params) if many else params, many))


class _Cursor(sqlite3.Cursor):
    def execute(self, sql: str, params: Any = (), /) -> Any:  # type: ignore[override]
        _note(sql, params)
        return super().execute(sql, params)

    def executemany(self, sql: str, params: Any, /) -> Any:  # type: ignore[override]
        _note(sql, params, many=True)
        return super().executemany(sql, params)


class _Connection(sqlite3.Connection):
    def cursor(self, factory: Any = _Cursor) -> Any:  # type: ignore[override]
        return super().cursor(factory)

    def execute(self, sql: str, params: Any = (), /) -> Any:  # type: ignore[override]
        return self.cursor().execute(sql, params)

    def executemany(self, sql: str, params: Any, /) -> Any:  # type: ignore[override]
        return self.cursor().executemany(sql, params)

    def commit(self) -> None:
        if self.in_transaction:
            _note("COMMIT")
        super().commit()

    def rollback(self) -> None:
        if self.in_transaction:
            _note("ROLLBACK")
        super().rollback()


_connect = sqlite3.connect


def _recording_connect(*args: Any, **kwargs: Any) -> sqlite3.Connection:
    return _connect(*args, **{**kwargs, "factory": _Connection})


async def _record_runs(db: Path, template: Path, runs: int) -> list[list[Statement]]:
    global _recording
    settings = Settings(database_url=f"sqlite:///{db}", model="scripted", task_concurrency=4)
    async with running(settings, workers=1) as services:
        convs = [await create_conversation(services, TENANT) for _ in range(runs + 3)]
        for c in convs[:3]:  # warm-up
            await _hansa_run(services, c.id)
        with sqlite3.connect(db) as copy_from:
            copy_from.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            copy_from.backup(sqlite3.connect(template))
        _recording = []
        for c in convs[3:]:
            _recording.append([])
            await _hansa_run(services, c.id)
        recorded, _recording = _recording, None
    return recorded


def _replay(
    template: Path, work: Path, runs: list[list[Statement]], per_commit: int
) -> list[float]:
    """Seconds per run; with ``per_commit`` > 1, BEGIN/COMMIT only around that many runs."""
    shutil.copy(template, work)
    conn = sqlite3.connect(work, isolation_level=None)
    for pragma in SQLITE_PRAGMAS:
        conn.execute(pragma)
    out: list[float] = []
    batched = per_commit > 1
    for i, statements in enumerate(runs):
        if batched and i % per_commit == 0:
            conn.execute("BEGIN IMMEDIATE")
        started = time.perf_counter()
        for sql, params, many in statements:
            if batched and (sql == "COMMIT" or sql.startswith("BEGIN")):
                continue
            if sql == "COMMIT":
                conn.commit()
            elif many:
                conn.executemany(sql, params)
            else:
                conn.execute(sql, params).fetchall()
        if batched and (i % per_commit == per_commit - 1 or i == len(runs) - 1):
            conn.commit()
        out.append(time.perf_counter() - started)
    conn.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--record", action="store_true", help="write docs/benchmarks.md")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        dbapi2.connect = _recording_connect  # what SQLAlchemy's pysqlite dialect calls
        try:
            recorded = asyncio.run(_record_runs(tmp / "hansa.db", tmp / "template.db", args.runs))
        finally:
            dbapi2.connect = _connect
        statements = statistics.median(
            sum(len(p) if many else 1 for _, p, many in run) for run in recorded
        )
        commits = statistics.median(sum(sql == "COMMIT" for sql, _, _ in run) for run in recorded)
        _replay(tmp / "template.db", tmp / "warm.db", recorded, 1)  # the page cache, warmed
        one = _replay(tmp / "template.db", tmp / "one.db", recorded, 1)
        grouped = _replay(tmp / "template.db", tmp / "grouped.db", recorded, 20)
    p50, p95 = statistics.median(one) * 1000, sorted(one)[int(0.95 * len(one))] * 1000
    batched = sum(grouped) / len(grouped) * 1000
    report = "\n".join(
        [
            f"storage_floor: the SQLite statements of {args.runs} recorded runs (5 no-op tasks in "
            f"3 step groups), replayed on a plain sqlite3 connection; {platform.machine()}, "
            f"{os.cpu_count()} cores, Python {sys.version.split()[0]}, SQLite "
            f"{sqlite3.sqlite_version}",
            "",
            "| measure | value |",
            "| --- | --- |",
            f"| statements per run (rows of executemany counted) | {statements:.0f} |",
            f"| commits per run | {commits:.0f} |",
            f"| replayed per run, as recorded: p50 / p95 | {p50:.2f} / {p95:.2f} ms |",
            f"| replayed per run, one commit per 20 runs | {batched:.2f} ms |",
        ]
    )
    print(report)
    if args.record:
        record(
            "storage_floor",
            report + "\n\nReproduce: `.venv/bin/python bench/storage_floor.py --record`.",
        )
    print(f"floor_p50_ms={p50:.2f} floor_batched_ms={batched:.2f}")


if __name__ == "__main__":
    main()
