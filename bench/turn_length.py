"""Does a turn cost more in a long conversation? Turn cost at 10, 300 and 1,000 turns.

Issue 35 item 3: "the cost of a turn does not depend on how long its conversation is".
Starts ``hansa serve`` (scripted model) on a SQLite file and on a fresh PostgreSQL
database, opens CONVERSATIONS conversations (each following its own SSE stream) and grows
them together, every conversation sending its next message once the last is done (closed
loop). At each length it measures a window of WINDOW turns per conversation: turns/s and
the server's CPU per turn; on PostgreSQL also the rows the server read per turn, by table
(``pg_stat_user_tables``: sequential plus index fetches), which names a table whose reads
grow with the conversation. Last, as many fresh conversations are measured at the first
length in the grown database: a turn slower there too comes from the tables' size, not
from its conversation's length.

The figures are ratios to the first window (target ~1.0). The server and this load client
share the machine's cores.

    python bench/turn_length.py [--conversations 10] [--lengths 10,300,1000] [--window 30]
        [--db sqlite,postgres] [--record]
Last line: ``cpu_ratio_<db>=<cost at the longest length / cost at the first> …``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
import psycopg

from _pgstats import SETTLE_SECONDS, fresh_database
from _server import cpu_seconds, hansa_process, record

TURN_TIMEOUT_SECONDS = 60.0
RETRIES = 3
_ROWS_READ = (
    "SELECT relname, coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0) "
    "FROM pg_stat_user_tables"
)


@dataclass
class Window:
    """One measured window: every conversation at ``length`` turns, ``turns`` turns more."""

    label: str
    turns: int
    seconds: float
    cpu_seconds: float
    rows_read: dict[str, float] = field(default_factory=dict)
    """PostgreSQL: rows read per turn, by table."""

    @property
    def rate(self) -> float:
        return self.turns / self.seconds

    @property
    def cpu_ms(self) -> float:
        return self.cpu_seconds * 1000 / self.turns


class Conversation:
    """A conversation driven over HTTP, its events read from its own SSE stream."""

    def __init__(self, client: aiohttp.ClientSession) -> None:
        self.client = client
        self.id = ""
        self.turns = 0
        self._done: dict[str, asyncio.Event] = {}
        self._reader: asyncio.Task[None] | None = None

    async def open(self) -> None:
        async with self.client.post("/api/conversations", json={}) as response:
            response.raise_for_status()
            self.id = (await response.json())["id"]
        opened = asyncio.Event()
        self._reader = asyncio.create_task(self._read(opened), name=f"sse {self.id}")
        await opened.wait()

    async def _read(self, opened: asyncio.Event) -> None:
        async with self.client.get(f"/api/conversations/{self.id}/events") as source:
            source.raise_for_status()
            opened.set()
            async for line in source.content:
                if line.startswith(b"data:"):
                    ev = json.loads(line[5:])
                    if ev["type"] == "done":
                        self._done.setdefault(ev["turnId"], asyncio.Event()).set()

    async def turn(self) -> None:
        path = f"/api/conversations/{self.id}/messages"
        body = {"content": f"Improve our SEO, step {self.turns}"}
        # a pooled connection the server closed as it was reused: the same message again,
        # under the same Idempotency-Key (stored once)
        headers = {"Idempotency-Key": uuid.uuid4().hex}
        for attempt in range(RETRIES + 1):
            try:
                async with self.client.post(path, json=body, headers=headers) as response:
                    response.raise_for_status()
                    turn_id = (await response.json())["turnId"]
                break
            except (aiohttp.ClientOSError, aiohttp.ServerDisconnectedError):
                if attempt == RETRIES:
                    raise
        done = self._done.setdefault(turn_id, asyncio.Event())
        await asyncio.wait_for(done.wait(), TURN_TIMEOUT_SECONDS)
        del self._done[turn_id]
        self.turns += 1

    async def grow_to(self, length: int) -> None:
        while self.turns < length:
            await self.turn()

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            await asyncio.gather(self._reader, return_exceptions=True)


def _rows_read(url: str | None) -> dict[str, float]:
    if url is None:
        return {}
    with psycopg.connect(url, autocommit=True) as conn:
        return {str(name): float(n) for name, n in conn.execute(_ROWS_READ).fetchall()}


async def _measure(
    label: str, convos: list[Conversation], window: int, pid: int, pg_url: str | None
) -> Window:
    if pg_url is not None:
        await asyncio.sleep(SETTLE_SECONDS)  # idle sessions flush their counters
    rows_before = _rows_read(pg_url)
    cpu_before = cpu_seconds(pid)
    started = time.perf_counter()
    await asyncio.gather(*(c.grow_to(c.turns + window) for c in convos))
    seconds = time.perf_counter() - started
    cpu = cpu_seconds(pid) - cpu_before
    rows: dict[str, float] = {}
    if pg_url is not None:
        await asyncio.sleep(SETTLE_SECONDS)
        after = _rows_read(pg_url)
        turns = window * len(convos)
        rows = {t: (n - rows_before.get(t, 0.0)) / turns for t, n in after.items()}
    return Window(label, window * len(convos), seconds, cpu, rows)


async def _drive(
    url: str, pid: int, conversations: int, lengths: list[int], window: int, pg: str | None
) -> list[Window]:
    connector = aiohttp.TCPConnector(limit=conversations * 4 + 10)
    timeout = aiohttp.ClientTimeout(total=None, sock_read=TURN_TIMEOUT_SECONDS)
    found: list[Window] = []
    async with aiohttp.ClientSession(url, connector=connector, timeout=timeout) as client:
        convos = [Conversation(client) for _ in range(conversations)]
        fresh = [Conversation(client) for _ in range(conversations)]
        try:
            for c in convos:
                await c.open()
            for length in lengths:
                started = time.perf_counter()
                await asyncio.gather(*(c.grow_to(length) for c in convos))
                print(f"  grown to {length} turns in {time.perf_counter() - started:.0f} s")
                found.append(await _measure(f"at {length} turns", convos, window, pid, pg))
                print(f"  {found[-1].label}: {found[-1].rate:.1f} turns/s", flush=True)
            for c in fresh:
                await c.open()
            await asyncio.gather(*(c.grow_to(lengths[0]) for c in fresh))
            label = f"fresh conversations at {lengths[0]} turns, grown database"
            found.append(await _measure(label, fresh, window, pid, pg))
        finally:
            await asyncio.gather(*(c.close() for c in [*convos, *fresh]))
    return found


@contextlib.contextmanager
def _server(db: str, tmp: Path) -> Iterator[tuple[str, int, str | None]]:
    """A running server on ``db``: its URL, process id and (PostgreSQL) database URL."""
    if db == "sqlite":
        with hansa_process(tmp, "--model", "scripted") as server:
            yield server.url, server.pid, None
        return
    with (
        fresh_database() as database_url,
        hansa_process(tmp, "--model", "scripted", database_url=database_url) as server,
    ):
        yield server.url, server.pid, database_url


def _table(db: str, windows: list[Window]) -> list[str]:
    first = windows[0]
    lines = [
        f"**{db}**",
        "",
        "| window | turns | turns/s | ratio | server CPU ms/turn | ratio |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for w in windows:
        lines.append(
            f"| {w.label} | {w.turns} | {w.rate:.1f} | {w.rate / first.rate:.2f} | "
            f"{w.cpu_ms:.2f} | {w.cpu_ms / first.cpu_ms:.2f} |"
        )
    if first.rows_read:
        tables = sorted(
            {t for w in windows for t, n in w.rows_read.items() if n >= 0.05},
            key=lambda t: -max(w.rows_read.get(t, 0.0) for w in windows),
        )
        lines += [
            "",
            "PostgreSQL rows read per turn (sequential + index fetches), by table:",
            "",
            "| table | " + " | ".join(w.label for w in windows) + " |",
            "| --- |" + " --- |" * len(windows),
        ]
        for t in tables:
            cells = " | ".join(f"{w.rows_read.get(t, 0.0):.1f}" for w in windows)
            lines.append(f"| {t} | {cells} |")
    return [*lines, ""]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=10)
    parser.add_argument("--lengths", default="10,300,1000", help="turns per conversation")
    parser.add_argument("--window", type=int, default=30, help="turns measured per conversation")
    parser.add_argument("--db", default="sqlite,postgres")
    parser.add_argument("--record", action="store_true", help="write docs/benchmarks.md")
    args = parser.parse_args()
    lengths = [int(n) for n in args.lengths.split(",")]
    load = os.getloadavg()[0]
    lines = [
        f"turn_length: {args.conversations} conversations grown together to "
        f"{', '.join(map(str, lengths))} turns (closed loop, scripted model), "
        f"{args.window} turns each measured at every length; {platform.machine()}, "
        f"{os.cpu_count()} cores shared by server and load client, load average "
        f"{load:.1f} at the start",
        "",
    ]
    last: list[str] = []
    for db in args.db.split(","):
        print(f"{db}:", flush=True)
        with tempfile.TemporaryDirectory() as tmp, _server(db, Path(tmp)) as (url, pid, pg):
            windows = asyncio.run(_drive(url, pid, args.conversations, lengths, args.window, pg))
        lines += _table(db, windows)
        longest = windows[len(lengths) - 1]
        last.append(f"cpu_ratio_{db}={longest.cpu_ms / windows[0].cpu_ms:.2f}")
        last.append(f"rate_ratio_{db}={longest.rate / windows[0].rate:.2f}")
    lines.append(f"load average at the end: {os.getloadavg()[0]:.1f}")
    report = "\n".join(lines)
    print(report)
    if args.record:
        record("turn_length", report + "\n\nReproduce: `python bench/turn_length.py --record`.")
    print(" ".join(last))


if __name__ == "__main__":
    sys.exit(main())
