"""Runs over HTTP, server to server: Hansa's server against LangGraph's API server.

The run of bench/run_throughput.py (5 no-op tasks in 3 step groups: 3 parallel, then 1,
then 1), each engine behind its own HTTP server on this machine, driven by the same aiohttp
client in this process. Hansa: ``hansa serve --model scripted`` on a fresh SQLite file; a run
is ``POST /api/runs`` and its approval, ended by its ``done`` event on the conversation's SSE
stream (after Hans's summary), as run_throughput.py's HTTP part measures it. LangGraph:
``langgraph dev`` (``langgraph-cli[inmem]``: the API server with its in-memory runtime),
serving a 5-node StateGraph of the same shape (3 nodes fanning out from START, joined into a
4th, then a 5th) that this script writes to a temporary directory with its langgraph.json; a
run is ``POST /threads/{id}/runs`` and ``GET /threads/{id}/runs/{run}/join`` (the final
state). Conversations and threads are made before the clock. Measured per round, each on
fresh servers, the engines alternating: runs one at a time (create -> done, p50/p95) and a
burst started at once (runs/s, wall time); the servers' CPU per run in the burst from /proc.

LangGraph's server runs from its own virtualenv, ``.venv-langgraph/`` in the repository
(created here when missing, with the releases pinned in LANGGRAPH_REQUIREMENTS): its
dependencies (starlette, uvicorn, ...) must not move the project's.

    python bench/run_throughput_server.py [--runs 200] [--sequential 40] [--rounds 3]
        [--langgraph-jobs 10] [--record]
Last line: ``runs_per_s=<f> langgraph_runs_per_s=<f> ratio=<f>``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

import aiohttp

from _server import Server, cpu_seconds, free_port, hansa_process, record, server_process
from run_throughput import RUN_TIMEOUT_SECONDS, _bounded, _http_run, _pct

ROOT = Path(__file__).resolve().parent.parent
LANGGRAPH_VENV = ROOT / ".venv-langgraph"
LANGGRAPH_REQUIREMENTS = (
    "langgraph-cli[inmem]==0.4.40",
    "langgraph-api==0.16.7",
    "langgraph-runtime-inmem==0.36.7",
    "langgraph==1.2.22",
    "langgraph-sdk==0.4.14",
)
GRAPH_ID = "bench"
GRAPH_MODULE = '''\
"""bench/run_throughput_server.py's graph: a, b, c from START, joined into d, then e."""

import operator
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph


class State(TypedDict):
    log: Annotated[list[str], operator.add]


def _node(name):
    async def step(state: State) -> dict[str, list[str]]:
        return {"log": [name]}

    return step


builder = StateGraph(State)
for name in "abcde":
    builder.add_node(name, _node(name))
for name in "abc":
    builder.add_edge(START, name)
builder.add_edge(["a", "b", "c"], "d")  # d waits for all three
builder.add_edge("d", "e")
builder.add_edge("e", END)
graph = builder.compile()
'''
BURST_TARGET = 2.0
"""Hansa's burst over LangGraph's, at least (issue 15)."""
P50_TARGET = 20.0
"""LangGraph's per-run p50 over Hansa's, at least (issue 15: <= 1/20 of it)."""


class Side(NamedTuple):
    sequential: list[float]
    """Seconds per run, one run at a time."""
    rate: float
    """Runs per second in the burst."""
    wall: float
    """Seconds from the burst's first request to its last run done."""
    server_cpu: float
    """CPU seconds of the server process per run in the burst."""
    client_cpu: float
    """CPU seconds of this process (the load client) per run in the burst."""


def langgraph_venv() -> Path:
    """LangGraph's ``langgraph`` command, installing its virtualenv first if needed."""
    stamp = LANGGRAPH_VENV / ".installed-bench"
    wanted = "\n".join(LANGGRAPH_REQUIREMENTS)
    if not stamp.exists() or stamp.read_text() != wanted:
        print(f"installing {', '.join(LANGGRAPH_REQUIREMENTS)} into {LANGGRAPH_VENV}", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(LANGGRAPH_VENV)], check=True)
        pip = [str(LANGGRAPH_VENV / "bin" / "python"), "-m", "pip", "install", "--quiet"]
        subprocess.run([*pip, "--upgrade", "pip"], check=True)
        subprocess.run([*pip, *LANGGRAPH_REQUIREMENTS], check=True)
        stamp.write_text(wanted)
    return LANGGRAPH_VENV / "bin" / "langgraph"


@contextmanager
def langgraph_process(tmp: Path, jobs: int) -> Iterator[Server]:
    """A running ``langgraph dev`` serving the bench's graph (in-memory runtime)."""
    command = langgraph_venv()
    (tmp / "graph.py").write_text(GRAPH_MODULE)
    config = {"dependencies": ["."], "graphs": {GRAPH_ID: "./graph.py:graph"}}
    (tmp / "langgraph.json").write_text(json.dumps(config))
    port = free_port()
    argv = [
        str(command),
        "dev",
        "--no-browser",
        "--no-reload",  # no file watcher: nothing changes during the bench
        "--port",
        str(port),
        "--config",
        str(tmp / "langgraph.json"),
        "--n-jobs-per-worker",
        str(jobs),
    ]
    # no analytics or tracing calls out of this machine; `dev` writes .langgraph_api/ in cwd
    env = {"LANGGRAPH_CLI_NO_ANALYTICS": "1", "LANGSMITH_TRACING": "false"}
    with server_process(argv, port, "/ok", tmp / "server.log", env=env, cwd=tmp) as server:
        yield server


def _client(url: str, burst: int) -> aiohttp.ClientSession:
    # as run_throughput.hansa_http: aiohttp, a connection per run of the burst (and its stream)
    connector = aiohttp.TCPConnector(limit=burst * 2 + 10, keepalive_timeout=1)
    timeout = aiohttp.ClientTimeout(total=RUN_TIMEOUT_SECONDS)
    return aiohttp.ClientSession(url, connector=connector, timeout=timeout)


async def _langgraph_run(client: aiohttp.ClientSession, thread: str) -> float:
    started = time.perf_counter()
    body = {"assistant_id": GRAPH_ID, "input": {"log": []}}
    async with client.post(f"/threads/{thread}/runs", json=body) as response:
        response.raise_for_status()
        run_id = (await response.json())["run_id"]

    async def until_done() -> float:
        async with client.get(f"/threads/{thread}/runs/{run_id}/join") as response:
            response.raise_for_status()
            state = await response.json()
        log = state.get("log", [])
        if sorted(log[:3]) != ["a", "b", "c"] or log[3:] != ["d", "e"]:
            raise RuntimeError(f"LangGraph run {run_id} ended with {state}")
        return time.perf_counter() - started

    return float(await _bounded(f"LangGraph run {run_id} (thread {thread})", [], until_done()))


async def _new_conversation(client: aiohttp.ClientSession) -> str:
    async with client.post("/api/conversations", json={}) as response:
        response.raise_for_status()
        return str((await response.json())["id"])


async def _new_thread(client: aiohttp.ClientSession) -> str:
    async with client.post("/threads", json={}) as response:
        response.raise_for_status()
        return str((await response.json())["thread_id"])


async def measure(server: Server, hansa: bool, seq: int, burst: int) -> Side:
    """3 warm-up runs, ``seq`` runs one at a time, then ``burst`` runs started at once."""
    async with _client(server.url, burst) as client:
        new, run = (_new_conversation, _http_run) if hansa else (_new_thread, _langgraph_run)
        for _ in range(3):
            await run(client, await new(client))
        sequential = [await run(client, await new(client)) for _ in range(seq)]
        keys = [await new(client) for _ in range(burst)]

        async def finished(key: str) -> float:
            await run(client, key)
            return time.perf_counter()

        server_cpu, client_cpu = cpu_seconds(server.pid), time.process_time()
        started = time.perf_counter()
        wall = max(await asyncio.gather(*(finished(key) for key in keys))) - started
        server_cpu = cpu_seconds(server.pid) - server_cpu
        client_cpu = time.process_time() - client_cpu
    return Side(sequential, burst / wall, wall, server_cpu / burst, client_cpu / burst)


def _median_side(sides: list[Side]) -> Side:
    """All rounds' runs one at a time; the median burst (with its wall time and CPU)."""
    middle = sorted(sides, key=lambda s: s.rate)[len(sides) // 2]
    return middle._replace(sequential=[t for s in sides for t in s.sequential])


def _row(name: str, s: Side) -> str:
    p50, p95 = statistics.median(s.sequential) * 1000, _pct(s.sequential, 0.95)
    return (
        f"| {name} | {p50:.1f} | {p95:.1f} | {s.rate:.1f} | {s.wall:.2f} | "
        f"{s.server_cpu * 1000:.2f} | {s.server_cpu * s.rate:.2f} | {s.client_cpu * 1000:.2f} |"
    )


def _met(ok: bool) -> str:
    return "met" if ok else "not met"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200, help="runs in the burst")
    parser.add_argument(
        "--sequential", type=int, default=40, help="runs one at a time, per round and engine"
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=3,
        help="rounds per engine, the engines alternating, fresh servers each; medians reported",
    )
    parser.add_argument(
        "--langgraph-jobs",
        type=int,
        default=10,
        help="langgraph dev --n-jobs-per-worker: runs its queue executes at once (its default: 1)",
    )
    parser.add_argument("--record", action="store_true", help="write docs/benchmarks.md")
    args = parser.parse_args()
    langgraph_venv()  # before the clock: the first time, this installs LangGraph's server
    load = os.getloadavg()
    rounds: list[tuple[Side, Side]] = []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        for r in range(args.rounds):  # this VM's speed drifts: alternate, then take medians
            for sub in (f"hansa{r}", f"langgraph{r}"):
                (tmp / sub).mkdir()
            with hansa_process(tmp / f"hansa{r}", "--model", "scripted") as server:
                mine = asyncio.run(measure(server, True, args.sequential, args.runs))
            with langgraph_process(tmp / f"langgraph{r}", args.langgraph_jobs) as server:
                theirs = asyncio.run(measure(server, False, args.sequential, args.runs))
            rounds.append((mine, theirs))
            print(
                f"round {r + 1}: Hansa {mine.rate:.1f} runs/s (p50 "
                f"{statistics.median(mine.sequential) * 1000:.1f} ms), LangGraph "
                f"{theirs.rate:.1f} runs/s (p50 {statistics.median(theirs.sequential) * 1000:.1f}"
                " ms)",
                flush=True,
            )
    after = os.getloadavg()
    mine = _median_side([m for m, _ in rounds])
    theirs = _median_side([t for _, t in rounds])
    paired = [m.rate / t.rate for m, t in rounds]  # each round's engines ran a minute apart
    ratio = statistics.median(paired)
    p50_mine, p50_theirs = statistics.median(mine.sequential), statistics.median(theirs.sequential)
    p50_ratio = p50_theirs / p50_mine
    lines = [
        f"run_throughput_server: runs of 5 no-op tasks in 3 step groups (3 parallel, 1, 1) over "
        f"HTTP, server to server, the load client (aiohttp) in one process on the same machine. "
        f"Hansa: `hansa serve --model scripted`, SQLite file; a run = `POST /api/runs` + "
        f"approve, until its `done` event on the conversation's SSE stream (after Hans's "
        f"summary). LangGraph: `langgraph dev --no-reload --n-jobs-per-worker "
        f"{args.langgraph_jobs}` ({LANGGRAPH_REQUIREMENTS[1]}, "
        f"{LANGGRAPH_REQUIREMENTS[2]}: in memory), a 5-node StateGraph of the same shape; a "
        f"run = `POST /threads/{{id}}/runs` + `GET .../join`. Conversations and threads made "
        f"before the clock; per round and engine, on fresh servers: 3 warm-up runs, "
        f"{args.sequential} one at a time, then a burst of {args.runs}; {args.rounds} "
        f"alternating rounds: per-run figures over all rounds, the median round's burst; "
        f"{platform.machine()}, {os.cpu_count()} cores, load average {load[0]:.2f} before, "
        f"{after[0]:.2f} after",
        "",
        "| server | per-run p50 ms | per-run p95 ms | burst runs/s | burst wall s "
        "| server CPU per run in the burst ms | server cores busy in the burst "
        "| client CPU per run ms |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
        _row("Hansa (`hansa serve`, SQLite)", mine),
        _row("LangGraph (`langgraph dev`, in-memory)", theirs),
        "",
        "| measure | value | target |",
        "| --- | --- | --- |",
        f"| Hansa burst / LangGraph burst, median of the rounds' ratios | {ratio:.2f}x (rounds: "
        f"{', '.join(f'{p:.2f}x' for p in paired)}) | >= {BURST_TARGET:.0f}x "
        f"({_met(ratio >= BURST_TARGET)}) |",
        f"| Hansa per-run p50 / LangGraph per-run p50 | 1/{p50_ratio:.1f} ({p50_mine * 1000:.1f} "
        f"vs {p50_theirs * 1000:.1f} ms) | <= 1/{P50_TARGET:.0f} "
        f"({_met(p50_ratio >= P50_TARGET)}) |",
    ]
    report = "\n".join(lines)
    print(report)
    if args.record:
        record(
            "run_throughput_server",
            report + "\n\nReproduce: `.venv/bin/python bench/run_throughput_server.py --record` "
            '(needs the bench extra, `pip install -e ".[bench]"`; the script installs '
            "LangGraph's server into `.venv-langgraph/` the first time).",
        )
    print(
        f"runs_per_s={mine.rate:.1f} langgraph_runs_per_s={theirs.rate:.1f} ratio={ratio:.2f} "
        f"p50_ms={p50_mine * 1000:.2f} langgraph_p50_ms={p50_theirs * 1000:.2f}"
    )


if __name__ == "__main__":
    main()
