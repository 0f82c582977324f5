"""Memory over a long life: does a server's anonymous memory grow with the turns it serves?

Issue 35 items 1, 2 and 4. Starts ``hansa serve`` (scripted model) on a SQLite file, or on
a fresh PostgreSQL database an API process (``--workers 0``) and a ``hansa worker``, and
drives TURNS turns in rounds of ROUND: half of each round's turns go to GROWING
conversations that live the whole soak (each following its own SSE stream, which it closes
and resumes from its last id every RESUME turns), half to new conversations of FRESH turns
each (opened, followed, closed, never used again), CONCURRENCY of them at a time. Beside
the turns, CHURN streams per round are opened on the growing conversations and closed:
SSE and WebSocket, half of them politely and half abruptly (a TCP reset right after the
handshake). Every turn is followed to its ``done`` event.

After each round it prints each process's anonymous memory (``RssAnon``) and the round's
turns/s. The first WARMUP rounds are warm-up (caches fill, the heap settles); after them
it fits the memory's slope per turn (least squares) over all rounds and over the last
half (the trend), and compares the last round's throughput with the first after warm-up.
Targets: <= 0.5 KB per turn, and the last round at >= 0.95x the first.

``--tracemalloc`` starts the processes through bench/_traced.py (nothing in Hansa reads
a tracing switch) and prints, after each round, the allocation sites whose memory grew
most since the last round. Its figures include tracemalloc's own cost: a diagnosis, not
a measurement. What tracemalloc cannot see (C libraries' memory, the allocator's
fragments) shows in ``--maps``: after each round, each process's anonymous memory by
mapping, the main heap, malloc's thread arenas (where a PostgreSQL process's database
threads allocate: decision 0042) and the rest, read from ``/proc/<pid>/smaps``.

    python bench/soak_memory.py [--turns 50000] [--round 5000] [--db sqlite,postgres]
        [--growing 20] [--fresh 10] [--concurrency 10] [--churn 200] [--resume 100]
        [--warmup 1] [--tracemalloc] [--maps] [--top 12] [--record]
Last line: ``kb_per_turn_<db>=<f> trend_kb_per_turn_<db>=<f> rate_ratio_<db>=<f> …``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import platform
import random
import signal
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp

from _fleet import FAST
from _pgstats import fresh_database
from _server import cpu_seconds, free_port, record, server_process
from _soak_client import Conversation, churn_one

HERE = Path(__file__).resolve().parent
KB_PER_TURN_TARGET = 0.5
_GLIBC_HEAP_ALIGN = 64 * 2**20
"""glibc's thread arenas grow in heaps aligned to their largest size (64 MB on 64-bit)."""
RATE_RATIO_TARGET = 0.95


@dataclass
class Process:
    """A measured process: its role, id and (with ``--tracemalloc``) snapshot folder."""

    role: str
    pid: int
    snapshots: Path | None = None
    taken: int = 0
    last: tracemalloc.Snapshot | None = None

    def rss_anon_mb(self) -> float:
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("RssAnon:"):
                return int(line.split()[1]) / 1024
        raise RuntimeError(f"no RssAnon for process {self.pid}")

    def anon_by_mapping(self) -> str:
        """Anonymous memory (MB) by kind of mapping: the main heap (``brk``, the main
        thread's malloc), malloc's thread arenas (glibc's heaps start at a multiple of 64 MB)
        and the rest (Python's own arenas, large blocks, stacks)."""
        kinds = {"main heap": 0, "thread arenas": 0, "the rest": 0}
        kind = "the rest"
        for line in Path(f"/proc/{self.pid}/smaps").read_text().splitlines():
            head = line.split(maxsplit=5)
            if len(head) >= 5 and "-" in head[0] and not head[0].endswith(":"):
                start = int(head[0].split("-", 1)[0], 16)
                name = head[5] if len(head) > 5 else ""
                if name == "[heap]":
                    kind = "main heap"
                elif not name and start % _GLIBC_HEAP_ALIGN == 0:
                    kind = "thread arenas"
                else:
                    kind = "the rest"
            elif line.startswith("Anonymous:"):
                kinds[kind] += int(line.split()[1])
        return ", ".join(f"{k} {kb / 1024:.1f} MB" for k, kb in kinds.items())

    def grown(self, top: int) -> list[str]:
        """Take a snapshot; the ``top`` sites that grew most since the last one."""
        if self.snapshots is None:
            return []
        self.taken += 1
        os.kill(self.pid, signal.SIGUSR1)
        path = self.snapshots / f"{self.taken}.snapshot"
        deadline = time.monotonic() + 120
        while not path.exists():
            if time.monotonic() > deadline:
                raise RuntimeError(f"no snapshot from {self.role} in 120 s")
            time.sleep(0.2)
        snapshot = tracemalloc.Snapshot.load(str(path))
        path.unlink()
        before, self.last = self.last, snapshot
        if before is None:
            return [f"  {self.role}: first snapshot, {_total_mb(snapshot):.1f} MB traced"]
        lines = [f"  {self.role}: {_total_mb(snapshot):.1f} MB traced, grown most:"]
        for stat in snapshot.compare_to(before, "traceback")[:top]:
            if stat.size_diff <= 0:
                break
            frames = " <- ".join(
                f"{_short(f.filename)}:{f.lineno}" for f in reversed(stat.traceback)
            )
            lines.append(f"    {stat.size_diff / 1024:+9.1f} KB {stat.count_diff:+7d} {frames}")
        return lines


def _total_mb(snapshot: tracemalloc.Snapshot) -> float:
    return sum(s.size for s in snapshot.statistics("filename")) / 2**20


def _short(filename: str) -> str:
    for marker in ("/src/hansa/", "/site-packages/", "/lib/python3"):
        if marker in filename:
            return filename.split(marker, 1)[1]
    return filename


def _command(tracing: Path | None, *args: str) -> list[str]:
    if tracing is None:
        return [sys.executable, "-m", "hansa", *args]
    return [sys.executable, str(HERE / "_traced.py"), str(tracing), *args]


@contextlib.contextmanager
def _fleet(db: str, tmp: Path, tracing: bool) -> Iterator[tuple[str, list[Process]]]:
    """The server (SQLite), or an API process and a worker (PostgreSQL): URL and processes."""
    folders = {role: tmp / role for role in ("server", "api", "worker")}
    for folder in folders.values():
        folder.mkdir()
    port = free_port()
    serve = ["serve", "--port", str(port), "--model", "scripted"]
    if db == "sqlite":
        command = _command(folders["server"] if tracing else None, *serve)
        url = f"sqlite:///{tmp / 'soak.db'}"
        with server_process(
            [*command, "--database-url", url], port, "/healthz", tmp / "server.log"
        ) as server:
            yield (
                server.url,
                [Process("server", server.pid, folders["server"] if tracing else None)],
            )
        return
    with fresh_database() as url:
        command = _command(folders["api"] if tracing else None, *serve, "--workers", "0")
        with server_process(
            [*command, "--database-url", url], port, "/healthz", tmp / "api.log", env=FAST
        ) as server:
            worker_command = _command(
                folders["worker"] if tracing else None,
                "worker",
                "--database-url",
                url,
                "--model",
                "scripted",
            )
            log = (tmp / "worker.log").open("wb")
            worker = subprocess.Popen(
                worker_command, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, **FAST}
            )
            try:
                yield (
                    server.url,
                    [
                        Process("api", server.pid, folders["api"] if tracing else None),
                        Process("worker", worker.pid, folders["worker"] if tracing else None),
                    ],
                )
            finally:
                worker.terminate()
                worker.wait(15)
                log.close()


@dataclass
class Round:
    """One round: turns done in it, its seconds, each process's RssAnon (MB) after it and
    CPU (ms per turn) in it, the load client's included."""

    turns_so_far: int
    turns: int
    seconds: float
    rss: dict[str, float] = field(default_factory=dict)
    cpu: dict[str, float] = field(default_factory=dict)

    @property
    def rate(self) -> float:
        return self.turns / self.seconds


@dataclass
class Soak:
    """The load: growing conversations, fresh ones, stream churn."""

    client: aiohttp.ClientSession
    url: str
    args: argparse.Namespace
    growing: list[Conversation] = field(default_factory=list)
    churned: int = 0

    async def round(self, turns: int) -> int:
        """Run one round of about ``turns`` turns; the turns actually run."""
        per_growing = max(1, turns // 2 // len(self.growing))
        fresh_count = max(1, (turns - per_growing * len(self.growing)) // self.args.fresh)
        slots = asyncio.Semaphore(self.args.concurrency)

        async def fresh() -> None:
            async with slots:
                c = Conversation(self.client)
                await c.open()
                try:
                    for _ in range(self.args.fresh):
                        await c.turn()
                finally:
                    await c.close()

        async def grow(c: Conversation) -> None:
            for _ in range(per_growing):
                await c.turn()
                if c.turns % self.args.resume == 0:
                    await c.resume()

        async def churn() -> None:
            rng = random.Random(self.churned)
            for i in range(self.args.churn):
                target = rng.choice(self.growing)
                await churn_one(self.client, self.url, target, i % 4)
                self.churned += 1
                await asyncio.sleep(0.01)

        await asyncio.gather(
            *(grow(c) for c in self.growing), *(fresh() for _ in range(fresh_count)), churn()
        )
        return per_growing * len(self.growing) + fresh_count * self.args.fresh


async def _soak(url: str, processes: list[Process], args: argparse.Namespace) -> list[Round]:
    connector = aiohttp.TCPConnector(  # idle under uvicorn's 5 s: never reuse one it closes
        limit=args.growing * 2 + args.concurrency * 2 + 20, keepalive_timeout=2
    )
    timeout = aiohttp.ClientTimeout(total=None, sock_read=120)
    rounds: list[Round] = []
    async with aiohttp.ClientSession(url, connector=connector, timeout=timeout) as client:
        soak = Soak(client, url, args)
        soak.growing = [Conversation(client) for _ in range(args.growing)]
        try:
            for c in soak.growing:
                await c.open()
            done = 0
            while done < args.turns:
                started, used = time.perf_counter(), _cpu(processes)
                turns = await soak.round(min(args.round, args.turns - done))
                seconds = time.perf_counter() - started
                cpu = {k: (v - used[k]) * 1000 / turns for k, v in _cpu(processes).items()}
                done += turns
                await asyncio.sleep(1)  # streams closed a moment ago finish on the server
                rss = {p.role: p.rss_anon_mb() for p in processes}
                r = Round(done, turns, seconds, rss, cpu)
                rounds.append(r)
                mb = " ".join(f"{k} {v:.1f} MB" for k, v in r.rss.items())
                ms = " ".join(f"{k} {v:.2f}" for k, v in r.cpu.items())
                print(
                    f"  {done:>7} turns: {r.rate:6.1f} turns/s, RssAnon {mb}, CPU ms/turn {ms}",
                    flush=True,
                )
                if args.maps:
                    for p in processes:
                        print(f"    {p.role}: {p.anon_by_mapping()}", flush=True)
                for p in processes:
                    for line in await asyncio.to_thread(p.grown, args.top):
                        print(line, flush=True)
        finally:
            await asyncio.gather(*(c.close() for c in soak.growing))
    return rounds


def _cpu(processes: list[Process]) -> dict[str, float]:
    """CPU seconds used so far by each process and by this load client."""
    return {**{p.role: cpu_seconds(p.pid) for p in processes}, "client": time.process_time()}


def _slope(xs: list[float], ys: list[float]) -> float:
    """Least-squares slope of ``ys`` over ``xs`` (0 with fewer than 2 points)."""
    if len(xs) < 2:
        return 0.0
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / den


def _slope_kb(rounds: list[Round], role: str) -> float:
    """Least-squares slope of RssAnon over turns, KB per turn."""
    return _slope([float(r.turns_so_far) for r in rounds], [r.rss[role] * 1024 for r in rounds])


def _fitted_ratio(rounds: list[Round], value: Callable[[Round], float]) -> float:
    """The least-squares line of ``value`` over the rounds: its value at the last round
    against its value at the first (one round's noise, +-8 % here, weighs less than in the
    ratio of the two rounds themselves)."""
    xs, ys = [float(r.turns_so_far) for r in rounds], [value(r) for r in rounds]
    slope = _slope(xs, ys)
    mean_x, mean_y = sum(xs) / len(xs), sum(ys) / len(ys)
    at_first, at_last = (mean_y + slope * (x - mean_x) for x in (xs[0], xs[-1]))
    return at_last / at_first


def _report(db: str, rounds: list[Round], warmup: int) -> tuple[list[str], list[str]]:
    roles, users = list(rounds[0].rss), list(rounds[0].cpu)
    lines = [
        f"**{db}**",
        "",
        "| turns | turns/s | "
        + " | ".join(f"{r} RssAnon MB" for r in roles)
        + " | "
        + " | ".join(f"{u} CPU ms/turn" for u in users)
        + " |",
        "| --- | --- |" + " --- |" * (len(roles) + len(users)),
    ]
    for r in rounds:
        cells = " | ".join(
            [
                *(f"{r.rss[role]:.1f}" for role in roles),
                *(f"{r.cpu[u]:.2f}" for u in users),
            ]
        )
        mark = " (warm-up)" if rounds.index(r) < warmup else ""
        lines.append(f"| {r.turns_so_far}{mark} | {r.rate:.1f} | {cells} |")
    after = rounds[warmup:]
    half = after[len(after) // 2 :] if len(after) >= 4 else after
    figures: list[str] = []
    lines.append("")
    for role in roles:
        slope, trend = _slope_kb(after, role), _slope_kb(half, role)
        lines.append(
            f"- {role}: {slope:.3f} KB per turn after warm-up, {trend:.3f} KB per turn over "
            f"the last half (target <= {KB_PER_TURN_TARGET})"
        )
        figures += [f"kb_per_turn_{db}_{role}={slope:.3f}", f"trend_kb_{db}_{role}={trend:.3f}"]
    ratio = after[-1].rate / after[0].rate if after else 0.0
    lines.append(
        f"- throughput: last round {after[-1].rate:.1f} turns/s against {after[0].rate:.1f} "
        f"for the first after warm-up: {ratio:.2f}x (target >= {RATE_RATIO_TARGET})"
        if after
        else "- throughput: no round after warm-up"
    )
    figures.append(f"rate_ratio_{db}={ratio:.2f}")
    if len(after) >= 2:
        fitted = _fitted_ratio(after, lambda r: r.rate)
        cpu = {u: _fitted_ratio(after, lambda r, u=u: r.cpu[u]) for u in users}
        lines.append(
            "- fitted over the rounds after warm-up, last against first: "
            f"throughput {fitted:.2f}x, "
            + ", ".join(f"{u} CPU per turn {v:.2f}x" for u, v in cpu.items())
        )
        figures.append(f"fitted_rate_ratio_{db}={fitted:.2f}")
    return [*lines, ""], figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=50_000)
    parser.add_argument("--round", type=int, default=5_000, help="turns per measured round")
    parser.add_argument("--db", default="sqlite,postgres")
    parser.add_argument("--growing", type=int, default=20, help="conversations grown all along")
    parser.add_argument("--fresh", type=int, default=10, help="turns of each new conversation")
    parser.add_argument("--concurrency", type=int, default=10, help="new conversations at once")
    parser.add_argument("--churn", type=int, default=200, help="streams opened/closed a round")
    parser.add_argument("--resume", type=int, default=100, help="turns between stream resumes")
    parser.add_argument("--warmup", type=int, default=1, help="rounds of warm-up")
    parser.add_argument("--tracemalloc", action="store_true", help="print growing sites")
    parser.add_argument(
        "--maps", action="store_true", help="print anonymous memory by mapping after each round"
    )
    parser.add_argument("--top", type=int, default=12, help="sites printed per snapshot")
    parser.add_argument("--record", action="store_true", help="write docs/benchmarks.md")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    lines = [
        f"soak_memory: {args.turns} turns in rounds of {args.round} (scripted model): half to "
        f"{args.growing} conversations grown all along (their SSE stream resumed from its last "
        f"id every {args.resume} turns), half to new conversations of {args.fresh} turns "
        f"({args.concurrency} at once), and {args.churn} streams a round opened and closed "
        "(SSE and WebSocket, half of them reset abruptly); every turn followed to `done`. "
        f"{platform.machine()}, {os.cpu_count()} cores shared with the load client, load "
        f"average {load:.1f} at the start" + (" (tracemalloc on)" if args.tracemalloc else ""),
        "",
    ]
    last: list[str] = []
    for db in args.db.split(","):
        print(f"{db}:", flush=True)
        with (
            tempfile.TemporaryDirectory() as tmp,
            _fleet(db, Path(tmp), args.tracemalloc) as (
                url,
                processes,
            ),
        ):
            rounds = asyncio.run(_soak(url, processes, args))
        table, figures = _report(db, rounds, min(args.warmup, len(rounds) - 1))
        lines += table
        last += figures
    lines.append(f"load average at the end: {os.getloadavg()[0]:.1f}")
    report = "\n".join(lines)
    print(report)
    if args.record:
        record("soak_memory", report + "\n\nReproduce: `python bench/soak_memory.py --record`.")
    print(" ".join(last))


if __name__ == "__main__":
    sys.exit(main())
