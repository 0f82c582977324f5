"""Turn latency and throughput of Hansa itself (scripted model, SQLite, HTTP + SSE).

Starts the server and drives conversations over HTTP, each following its own SSE
stream, in three phases:

- light: 5 conversations at 20 turns/s in all — latency when the server is not busy;

- paced: every conversation sends a message every CONVERSATIONS/RATE seconds, so
  the server gets RATE turns/s; latencies are measured under that load;
- burst: every conversation sends its next message as soon as the last is done
  (closed loop); turns/s is the most the server sustains. Latencies in a closed
  loop are queueing time (Little's law: 50 in flight / turns/s), printed for honesty.

Latencies: POST -> first event of the turn (the user message, written with the
POST), POST -> first event the turn processing wrote (``session``), POST -> ``done``.

The load client is aiohttp: it shares the 2 cores with the server, and httpx (with
httpx-sse) spent several times more CPU per request than aiohttp does (decision 0007),
which the server's figures paid for.

    python bench/turn_latency.py [--conversations 50] [--turns 10] [--rate 150] [--record]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

from _server import cpu_seconds, free_port, hansa_process, record, server_process

TURN_TIMEOUT_SECONDS = 60.0
LIGHT_CONVERSATIONS = 5
LIGHT_RATE = 20.0

TARGETS = {
    "first_event_p50_ms": 10.0,
    "done_p50_ms": 50.0,
    "turns_per_s": 400.0,
    "server_cpu_ms_per_turn": 4.0,
}


@dataclass
class Samples:
    first: list[float] = field(default_factory=list)
    session: list[float] = field(default_factory=list)
    done: list[float] = field(default_factory=list)


async def _post(client: aiohttp.ClientSession, path: str, body: dict[str, str]) -> Any:
    async with client.post(path, json=body) as response:
        response.raise_for_status()
        return await response.json()


async def _conversation(
    client: aiohttp.ClientSession, turns: int, samples: Samples, interval: float = 0.0
) -> None:
    cid = (await _post(client, "/api/conversations", {}))["id"]
    arrivals: dict[str, dict[str, float]] = {}
    done: dict[str, asyncio.Event] = {}
    opened = asyncio.Event()

    async def reader() -> None:
        async with client.get(f"/api/conversations/{cid}/events") as source:
            source.raise_for_status()
            opened.set()
            async for line in source.content:  # SSE: one `data:` line per event here
                now = time.perf_counter()
                if not line.startswith(b"data:"):  # ids, keep-alive comments, blank lines
                    continue
                ev = json.loads(line[5:])
                seen = arrivals.setdefault(ev["turnId"], {})
                seen.setdefault("first", now)
                seen.setdefault(ev["type"], now)
                if ev["type"] == "done":
                    done.setdefault(ev["turnId"], asyncio.Event()).set()

    task = asyncio.create_task(reader(), name=f"sse {cid}")
    await opened.wait()
    try:
        if interval:
            await asyncio.sleep(random.uniform(0, interval))  # spread the arrivals
        for i in range(turns):
            started = time.perf_counter()
            accepted = await _post(
                client, f"/api/conversations/{cid}/messages", {"content": f"Improve our SEO {i}"}
            )
            turn_id = accepted["turnId"]
            finished = done.setdefault(turn_id, asyncio.Event())
            await asyncio.wait_for(finished.wait(), TURN_TIMEOUT_SECONDS)
            seen = arrivals[turn_id]
            samples.first.append((seen["first"] - started) * 1000)
            samples.session.append((seen["session"] - started) * 1000)
            samples.done.append((seen["done"] - started) * 1000)
            if interval:
                await asyncio.sleep(max(0.0, interval - (time.perf_counter() - started)))
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def drive(url: str, conversations: int, turns: int, interval: float) -> tuple[Samples, float]:
    connector = aiohttp.TCPConnector(limit=conversations * 2 + 10)
    timeout = aiohttp.ClientTimeout(total=None, sock_read=TURN_TIMEOUT_SECONDS)
    samples = Samples()
    async with aiohttp.ClientSession(url, connector=connector, timeout=timeout) as client:
        await _conversation(client, 2, Samples())  # warm-up
        started = time.perf_counter()
        await asyncio.gather(
            *(_conversation(client, turns, samples, interval) for _ in range(conversations))
        )
        elapsed = time.perf_counter() - started
    return samples, len(samples.done) / elapsed


def _table(title: str, samples: Samples, rate: float, targets: bool) -> list[str]:
    rows = [
        ("POST -> first event (user message)", samples.first, TARGETS["first_event_p50_ms"]),
        ("POST -> first processing event (session)", samples.session, None),
        ("POST -> done", samples.done, TARGETS["done_p50_ms"]),
    ]
    lines = [
        f"**{title}** ({len(samples.done)} turns, {rate:.1f} turns/s)",
        "",
        "| measure | p50 ms | p95 ms | target p50 |",
        "| --- | --- | --- | --- |",
    ]
    for name, values, target in rows:
        goal = f"<= {target:.0f} ms" if target and targets else "-"
        lines.append(
            f"| {name} | {statistics.median(values):.1f} | {_pct(values, 0.95):.1f} | {goal} |"
        )
    return [*lines, ""]


def _floor(tmp: Path, conversations: int, turns: int) -> tuple[float, float]:
    """The burst's turns/s and CPU per turn of bench/turn_floor.py (the anchor)."""
    port = free_port()
    script = Path(__file__).with_name("turn_floor.py")
    command = [sys.executable, str(script), "--port", str(port), "--db", str(tmp / "floor.db")]
    with server_process(command, port, "/healthz", tmp / "floor.log") as floor:
        asyncio.run(drive(floor.url, conversations, turns, 0.0))  # warm, as Hansa's phases
        before = cpu_seconds(floor.pid)
        burst, rate = asyncio.run(drive(floor.url, conversations, turns, 0.0))
        return rate, (cpu_seconds(floor.pid) - before) * 1000 / (len(burst.done) + 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=50)
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--rate", type=float, default=TARGETS["turns_per_s"])
    parser.add_argument("--record", action="store_true", help="write docs/benchmarks.md")
    parser.add_argument("--url", help="drive this running server instead of starting one")
    args = parser.parse_args()
    interval = args.conversations / args.rate
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        pid = None
        url = args.url
        if url is None:
            server = stack.enter_context(hansa_process(Path(tmp), "--model", "scripted"))
            url, pid = server.url, server.pid
        light, light_rate = asyncio.run(
            drive(url, LIGHT_CONVERSATIONS, args.turns, LIGHT_CONVERSATIONS / LIGHT_RATE)
        )
        paced, paced_rate = asyncio.run(drive(url, args.conversations, args.turns, interval))
        cpu_before = cpu_seconds(pid) if pid else 0.0
        burst, burst_rate = asyncio.run(drive(url, args.conversations, args.turns, 0.0))
        # the burst's turns and its warm-up's 2 (the conversations' opening is counted too)
        cpu_ms = (cpu_seconds(pid) - cpu_before) * 1000 / (len(burst.done) + 2) if pid else 0.0
        floor_rate, floor_cpu_ms = _floor(Path(tmp), args.conversations, args.turns)
    cpu_row = (
        f"| server CPU per turn (burst) | {cpu_ms:.2f} ms | "
        f"target <= {TARGETS['server_cpu_ms_per_turn']:.0f} ms |"
        if pid
        else "| server CPU per turn | not measured (--url) | - |"
    )
    lines = [
        f"turn_latency: {args.conversations} concurrent conversations x {args.turns} turns per "
        f"phase, scripted model, SQLite file, {platform.machine()}, {os.cpu_count()} cores "
        "shared by server and load client",
        "",
        *_table(
            f"light load: {LIGHT_CONVERSATIONS} conversations, {LIGHT_RATE:.0f} turns/s offered",
            light,
            light_rate,
            True,
        ),
        *_table(f"paced at {args.rate:.0f} turns/s offered", paced, paced_rate, True),
        *_table("burst, closed loop (latency here is queueing)", burst, burst_rate, False),
        "| figure | value | target |",
        "| --- | --- | --- |",
        f"| turns/s (burst) | {burst_rate:.1f} | target >= {TARGETS['turns_per_s']:.0f} |",
        cpu_row,
        f"| the floor: turns/s of a minimal Starlette + SQLite server doing a turn's storage "
        f"and streaming (bench/turn_floor.py), its CPU per turn | {floor_rate:.1f}, "
        f"{floor_cpu_ms:.2f} ms | - |",
    ]
    report = "\n".join(lines)
    print(report)
    if args.record:
        record("turn_latency", report + "\n\nReproduce: `make bench` (runs this script).")
    print(
        f"turns_per_s={burst_rate:.1f} server_cpu_ms_per_turn={cpu_ms:.2f} "
        f"floor_turns_per_s={floor_rate:.1f} floor_cpu_ms_per_turn={floor_cpu_ms:.2f}"
    )


if __name__ == "__main__":
    main()
