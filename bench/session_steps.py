"""Agent session steps: the per-step overhead of the session loop, on SQLite and PostgreSQL.

A no-op step: ``chief``'s model is the unscripted ``scripted`` model, which answers every
frame at once with plain text (read as a text step: the session goes on to the following
step, and the text becomes the step's message). Each step is still the whole product path:
a claimed job, the frame, the model call and its ``llm_calls`` record, and one guarded
transaction with the step's row, the session's new cursor, its ``session_step`` event, its
message and the next step's job. In-process engine (``running(settings, workers=1)``, as
``hansa serve`` runs it), a SQLite file or a fresh schema of the local PostgreSQL
(``HANSA_BENCH_POSTGRES``, default postgresql://postgres@127.0.0.1:5432/test).

Measured: one session of ``--steps`` steps (steps/s over the wall clock from its creation
to its last step's ``finishedAt``; per step: p50/p95 of the interval between consecutive
steps' ``finishedAt``, the whole cycle, and of ``startedAt -> finishedAt``, from the
model call to the step's row in its transaction; CPU of this process per step), then
``--sessions`` sessions of ``--burst-steps`` steps each, started at once (steps/s until
the last step).

    python bench/session_steps.py [--steps 500] [--sessions 100] [--burst-steps 30]
        [--skip-pg] [--profile sqlite|pg] [--record]

``--profile`` runs only the one-session measure, under cProfile, and prints the top costs.
Last line: ``sqlite_step_ms=<p50> sqlite_steps_per_s=<f> ...``.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import os
import platform
import pstats
import statistics
import tempfile
import time
from datetime import datetime
from typing import NamedTuple

from _fleet import fresh_schema
from _server import record
from hansa.domain.base import utcnow
from hansa.domain.session import AgentSession, SessionStep
from hansa.engine.running import running
from hansa.engine.runtime.services import Services
from hansa.engine.sessions import service
from hansa.settings import Settings
from hansa.store import sessions as rows
from hansa.store.db import DEFAULT_TENANT_ID as TENANT

TARGET_MS = 3.0
"""Issue 20: at most 3 ms per step on SQLite."""
TIMEOUT_SECONDS = 300.0
AGENT = "chief"


class One(NamedTuple):
    rate: float
    """Steps per second of one session."""
    cycle: list[float]
    """Seconds between consecutive steps' ``finishedAt``."""
    inside: list[float]
    """Seconds from a step's ``startedAt`` to its ``finishedAt``."""
    cpu: float
    """CPU seconds of this process per step."""


class Many(NamedTuple):
    rate: float
    """Steps per second of all sessions together."""
    steps: int
    cpu: float


async def _until_ended(services: Services, ids: list[str]) -> list[AgentSession]:
    """Poll until every session has ended (``max_steps``); a failed one is an error."""
    deadline = time.monotonic() + TIMEOUT_SECONDS
    while True:
        found = [
            await services.db.read(lambda conn, sid=sid: rows.get(conn, TENANT, sid)) for sid in ids
        ]
        failed = [s for s in found if s.status.value == "failed"]
        if failed:
            raise RuntimeError(f"a session failed: {failed[0].reason}")
        if all(s.status.final for s in found):
            return found
        if time.monotonic() > deadline:
            steps = sum(s.iteration for s in found)
            raise RuntimeError(f"sessions did not end in {TIMEOUT_SECONDS:.0f} s ({steps} steps)")
        await asyncio.sleep(0.05)


async def _steps(services: Services, sid: str) -> list[SessionStep]:
    out: list[SessionStep] = []
    while True:
        after = len(out)
        page = await services.db.read(
            lambda conn, after=after: rows.steps_after(conn, sid, after, rows.STEPS_PAGE)
        )
        if not page:
            return out
        out += page


async def _start(services: Services, n: int, steps: int) -> tuple[datetime, list[str]]:
    begun = utcnow()
    made = await asyncio.gather(
        *(
            service.create(
                services,
                TENANT,
                service.NewSession(agent_id=AGENT, goal=f"bench {i}", max_steps=steps),
            )
            for i in range(n)
        )
    )
    return begun, [s.id for s in made]


def _seconds(a: datetime, b: datetime) -> float:
    return (b - a).total_seconds()


async def one_session(services: Services, steps: int) -> One:
    await _until_ended(services, (await _start(services, 1, 5))[1])  # warm-up
    cpu = time.process_time()
    begun, ids = await _start(services, 1, steps)
    await _until_ended(services, ids)
    cpu = time.process_time() - cpu  # includes the polling: a few reads per 50 ms
    recorded = await _steps(services, ids[0])
    assert [s.iteration for s in recorded] == list(range(1, steps + 1)), "steps missing"
    ends = [s.finished_at for s in recorded]
    return One(
        rate=steps / _seconds(begun, ends[-1]),
        cycle=[_seconds(a, b) for a, b in zip(ends, ends[1:], strict=False)],
        inside=[_seconds(s.started_at, s.finished_at) for s in recorded],
        cpu=cpu / steps,
    )


async def many_sessions(services: Services, n: int, steps: int) -> Many:
    cpu = time.process_time()
    begun, ids = await _start(services, n, steps)
    await _until_ended(services, ids)
    cpu = time.process_time() - cpu
    last = begun
    total = 0
    for sid in ids:
        recorded = await _steps(services, sid)
        total += len(recorded)
        last = max([last, *(s.finished_at for s in recorded)])
    assert total == n * steps, f"{total} steps recorded of {n * steps}"
    return Many(rate=total / _seconds(begun, last), steps=total, cpu=cpu / total)


async def measure(
    database_url: str, steps: int, sessions: int, burst_steps: int
) -> tuple[One, Many]:
    settings = Settings(database_url=database_url, model="scripted")
    async with running(settings, workers=1) as services:
        one = await one_session(services, steps)
        many = await many_sessions(services, sessions, burst_steps)
    return one, many


def profile(steps: int, database: str) -> None:
    """The one-session measure under cProfile: the top costs by own and cumulative time."""

    async def go(url: str) -> None:
        settings = Settings(database_url=url, model="scripted")
        async with running(settings, workers=1) as services:
            await one_session(services, 5)
            profiler = cProfile.Profile()
            profiler.enable()
            await one_session(services, steps)
            profiler.disable()
        out = io.StringIO()
        stats = pstats.Stats(profiler, stream=out)
        stats.sort_stats("tottime").print_stats(25)
        stats.sort_stats("cumulative").print_stats(40)
        print(out.getvalue())

    if database == "pg":
        with fresh_schema() as pg_url:
            asyncio.run(go(pg_url))
        return
    with tempfile.TemporaryDirectory() as tmp_name:
        asyncio.run(go(f"sqlite:///{tmp_name}/profile.db"))


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def _rows(name: str, one: One, many: Many) -> list[str]:
    p50 = statistics.median(one.cycle) * 1000
    inside = statistics.median(one.inside) * 1000
    return [
        f"| {name} | {one.rate:.0f} | {p50:.2f} | {_pct(one.cycle, 0.95):.2f} | {inside:.2f} "
        f"| {one.cpu * 1000:.2f} | {many.rate:.0f} | {many.cpu * 1000:.2f} |"
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=500, help="steps of the one session")
    parser.add_argument("--sessions", type=int, default=100, help="sessions at once")
    parser.add_argument("--burst-steps", type=int, default=30, help="steps of each of them")
    parser.add_argument("--skip-pg", action="store_true")
    parser.add_argument(
        "--profile", choices=("sqlite", "pg"), help="only cProfile one session on this database"
    )
    parser.add_argument("--record", action="store_true", help="write docs/benchmarks.md")
    args = parser.parse_args()
    if args.profile:
        profile(args.steps, args.profile)
        return
    with tempfile.TemporaryDirectory() as tmp_name:
        url = f"sqlite:///{tmp_name}/bench.db"
        sqlite = asyncio.run(measure(url, args.steps, args.sessions, args.burst_steps))
    pg = None
    if not args.skip_pg:
        with fresh_schema() as pg_url:
            pg = asyncio.run(measure(pg_url, args.steps, args.sessions, args.burst_steps))
    p50 = statistics.median(sqlite[0].cycle) * 1000
    lines = [
        f"session_steps: no-op steps (the unscripted model answers each frame at once with "
        f"text), in-process engine with one worker; one session of {args.steps} steps, then "
        f"{args.sessions} sessions of {args.burst_steps} steps started at once; per step = "
        f"the interval between consecutive steps' finishedAt (job claim, frame, model call, "
        f"the step's transaction, the next job); {platform.machine()}, {os.cpu_count()} cores",
        "",
        "| database | one session steps/s | per step p50 ms | per step p95 ms "
        "| model call -> step row p50 ms | CPU per step ms | "
        f"{args.sessions} sessions steps/s | CPU per step ms |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
        *_rows("SQLite file", *sqlite),
        *(_rows("PostgreSQL (local, fresh schema)", *pg) if pg else []),
        "",
        "| measure | value | target |",
        "| --- | --- | --- |",
        f"| per-step overhead p50, SQLite | {p50:.2f} ms "
        f"({'met' if p50 <= TARGET_MS else 'missed'}) | <= {TARGET_MS:.0f} ms |",
    ]
    report = "\n".join(lines)
    print(report)
    if args.record:
        record(
            "session_steps",
            report + "\n\nReproduce: `.venv/bin/python bench/session_steps.py --record` "
            "(`--profile sqlite` or `--profile pg` for cProfile's top costs of one session).",
        )
    tail = f"sqlite_step_ms={p50:.2f} sqlite_steps_per_s={sqlite[0].rate:.1f} "
    tail += f"sqlite_{args.sessions}_sessions_steps_per_s={sqlite[1].rate:.1f}"
    if pg:
        tail += f" pg_step_ms={statistics.median(pg[0].cycle) * 1000:.2f}"
        tail += f" pg_steps_per_s={pg[0].rate:.1f} pg_{args.sessions}_sessions_steps_per_s="
        tail += f"{pg[1].rate:.1f}"
    print(tail)


if __name__ == "__main__":
    main()
