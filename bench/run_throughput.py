"""Run scheduler throughput: Hansa (in-process and over HTTP) against LangGraph.

Same topology everywhere: 5 no-op tasks in 3 step groups (3 parallel, then 1, then 1),
persisted in a SQLite file. Hansa: ``wait {"seconds": 0}`` tasks of ``schedulerAgent``; a
run ends at its ``done`` event (after Hans's summary). LangGraph: a 5-node StateGraph
(3 fanning out from START, joined into a 4th, then a 5th), ``AsyncSqliteSaver``, one
``thread_id`` per run. Measured: runs one at a time (create -> done, p50/p95: the per-run
overhead) and a burst started at once (runs/s). Conversations are made before the clock.

    python bench/run_throughput.py [--runs 200] [--sequential 100] [--rounds 3] [--skip-http]
        [--record]
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import itertools
import json
import operator
import os
import platform
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from contextlib import aclosing
from pathlib import Path
from typing import Annotated, Any, NamedTuple, TypedDict

import aiohttp
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import END, START, StateGraph

from _server import hansa_server, record
from hansa.engine.running import running
from hansa.engine.runs.service import NewRun, TaskDraft, approve, create_run
from hansa.engine.runtime.follow import follow
from hansa.engine.runtime.services import Services
from hansa.engine.turns.chat import create_conversation
from hansa.settings import Settings
from hansa.store.db import DEFAULT_TENANT_ID as TENANT

RUN_TIMEOUT_SECONDS = 60.0
GROUPS = ("A", "A", "A", "B", "C")
DRAFTS = [
    TaskDraft(
        step_group=g,
        task_type="wait",
        parameters={"seconds": 0},
        created_by="schedulerAgent",
        summary=f"Wait {i}",
        sequence_order=i,
    )
    for i, g in enumerate(GROUPS)
]
TASKS_JSON = [
    {
        "stepGroup": d.step_group,
        "sequenceOrder": d.sequence_order,
        "taskType": "wait",
        "parameters": {"seconds": 0},
        "createdByAgentId": "schedulerAgent",
    }
    for d in DRAFTS
]


class Result(NamedTuple):
    sequential: list[float]
    """Seconds per run, one run at a time."""
    rate: float
    """Runs per second in the burst."""
    cpu: float | None = None
    """CPU seconds per run of this process (all its threads) in the burst, where the engine
    runs in this process."""


async def _bounded(what: str, seen: list[str], work: Awaitable[Any]) -> Any:
    """``work``, or a clear error naming the events seen so far after RUN_TIMEOUT_SECONDS."""
    try:
        async with asyncio.timeout(RUN_TIMEOUT_SECONDS):
            return await work
    except TimeoutError:
        raise RuntimeError(
            f"{what} did not finish within {RUN_TIMEOUT_SECONDS:.0f} s; events seen: {seen}"
        ) from None


async def _measure(
    one: Callable[[Any], Awaitable[float]], new: Callable[[int], Any], seq: int, burst: int
) -> Result:
    """``new(i)`` makes (or awaits) the key of run i: a conversation, a thread id."""
    counter = itertools.count()

    async def key() -> Any:
        made = new(next(counter))
        return await made if inspect.isawaitable(made) else made

    for _ in range(3):  # warm-up
        await one(await key())
    sequential = [await one(await key()) for _ in range(seq)]
    keys = [await key() for _ in range(burst)]
    started, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(one(k) for k in keys))
    cpu, elapsed = time.process_time() - cpu, time.perf_counter() - started
    return Result(sequential, burst / elapsed, cpu / burst if burst else None)


async def _hansa_run(services: Services, cid: str) -> float:
    started = time.perf_counter()
    run_id, stored = await create_run(services, TENANT, NewRun(cid, "bench", None, DRAFTS))
    await approve(services, TENANT, run_id)
    seen: list[str] = []

    async def until_done() -> float:
        events = follow(services, TENANT, cid, stored[-1].seq, idle_seconds=RUN_TIMEOUT_SECONDS)
        async with aclosing(events) as stream:
            async for ev in stream:
                if ev is None:
                    continue
                seen.append(f"{ev.type}({ev.run_id == run_id})")
                if ev.type == "done" and ev.run_id == run_id:
                    return time.perf_counter() - started
        raise AssertionError("unreachable")

    return await _bounded(f"run {run_id} (conversation {cid})", seen, until_done())


async def hansa_inprocess(tmp: Path, seq: int, burst: int) -> Result:
    settings = Settings(
        database_url=f"sqlite:///{tmp}/bench.db", model="scripted", task_concurrency=4
    )
    async with running(settings, workers=1) as services:  # as `hansa serve` runs it
        new = lambda _: create_conversation(services, TENANT)  # noqa: E731
        return await _measure(lambda c: _hansa_run(services, c.id), new, seq, burst)


async def _http_run(client: aiohttp.ClientSession, cid: str) -> float:
    started = time.perf_counter()
    body = {"conversationId": cid, "title": "bench", "tasks": TASKS_JSON}
    async with client.post("/api/runs", json=body) as response:
        response.raise_for_status()
        run_id = (await response.json())["id"]
    async with client.post(f"/api/runs/{run_id}/approve", json={}) as response:
        response.raise_for_status()
    seen: list[str] = []

    async def until_done() -> float:
        async with client.get(f"/api/conversations/{cid}/events") as source:
            source.raise_for_status()
            async for line in source.content:  # SSE: one `data:` line per event here
                if not line.startswith(b"data:"):
                    continue
                ev = json.loads(line[5:])
                seen.append(f"{ev['type']}({ev['runId'] == run_id})")
                if ev["type"] == "done" and ev["runId"] == run_id:
                    return time.perf_counter() - started
        raise RuntimeError(f"the event stream of {cid} ended before done; events seen: {seen}")

    return await _bounded(f"run {run_id} (conversation {cid}) over HTTP", seen, until_done())


async def hansa_http(url: str, seq: int, burst: int) -> Result:
    # aiohttp, not httpx: on these 2 cores the load client shares the CPU with the server, and
    # httpx spent more CPU per run (~18 ms) than the server did (decision 0007)
    connector = aiohttp.TCPConnector(limit=burst * 2 + 10, keepalive_timeout=1)
    timeout = aiohttp.ClientTimeout(total=RUN_TIMEOUT_SECONDS)
    async with aiohttp.ClientSession(url, connector=connector, timeout=timeout) as c:

        async def new(_: int) -> str:
            async with c.post("/api/conversations", json={}) as response:
                response.raise_for_status()
                return str((await response.json())["id"])

        measured = await _measure(lambda cid: _http_run(c, cid), new, seq, burst)
        return measured._replace(cpu=None)  # this process is only the load client


class State(TypedDict):
    log: Annotated[list[str], operator.add]


def _node(name: str) -> Callable[[State], Awaitable[dict[str, list[str]]]]:
    async def step(state: State) -> dict[str, list[str]]:
        return {"log": [name]}

    return step


async def langgraph(tmp: Path, seq: int, burst: int, durability: str) -> Result:
    graph = StateGraph(State)
    for name in "abcde":
        graph.add_node(name, _node(name))
    for name in "abc":
        graph.add_edge(START, name)
    graph.add_edge(["a", "b", "c"], "d")  # d waits for all three
    graph.add_edge("d", "e")
    graph.add_edge("e", END)
    async with AsyncSqliteSaver.from_conn_string(str(tmp / "langgraph.db")) as saver:
        app = graph.compile(checkpointer=saver)

        async def one(thread: str) -> float:
            started = time.perf_counter()
            config = {"configurable": {"thread_id": thread}}
            work = app.ainvoke({"log": []}, config, durability=durability)  # type: ignore[arg-type]
            out = await _bounded(f"LangGraph thread {thread}", [], work)
            assert len(out["log"]) == 5, out
            return time.perf_counter() - started

        return await _measure(one, lambda i: f"t{i}", seq, burst)


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def _median_of(rounds: list[tuple[Result, Result]], engine: int) -> Result:
    """The first round's runs one at a time; the median burst (and its CPU) of all rounds."""
    bursts = sorted((r[engine] for r in rounds), key=lambda r: r.rate)
    middle = bursts[len(bursts) // 2]
    return Result(rounds[0][engine].sequential, middle.rate, middle.cpu)


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1000:.2f}"


def _row(name: str, r: Result) -> str:
    seq = r.sequential
    p50, p95 = statistics.median(seq) * 1000, _pct(seq, 0.95)
    return f"| {name} | {p50:.1f} | {p95:.1f} | {r.rate:.1f} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200, help="runs in the burst")
    parser.add_argument("--sequential", type=int, default=100, help="runs one at a time")
    parser.add_argument(
        "--durability",
        choices=("sync", "async", "exit"),
        default="sync",
        help="LangGraph checkpoints (sync: persisted before the next step, like Hansa)",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=3,
        help="in-process bursts per engine, the engines alternating; medians are reported",
    )
    parser.add_argument("--skip-http", action="store_true")
    parser.add_argument("--record", action="store_true", help="write docs/benchmarks.md")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        rounds: list[tuple[Result, Result]] = []
        for r in range(args.rounds):  # this VM's speed drifts: alternate, then take medians
            seq = args.sequential if r == 0 else 0
            for sub in (f"inproc{r}", f"langgraph{r}"):
                (tmp / sub).mkdir()
            mine = asyncio.run(hansa_inprocess(tmp / f"inproc{r}", seq, args.runs))
            theirs = asyncio.run(langgraph(tmp / f"langgraph{r}", seq, args.runs, args.durability))
            rounds.append((mine, theirs))
        inproc = _median_of(rounds, 0)
        lg = _median_of(rounds, 1)
        ratios = ", ".join(f"{m.rate / t.rate:.2f}x" for m, t in rounds)
        (tmp / "http").mkdir()
        http = None
        if not args.skip_http:
            with hansa_server(tmp / "http", "--model", "scripted") as url:
                http = asyncio.run(hansa_http(url, args.sequential, args.runs))
    lines = [
        f"run_throughput: runs of 5 no-op tasks in 3 step groups (3 parallel, 1, 1), SQLite "
        f"file, {args.sequential} runs one at a time, then a burst of {args.runs}; LangGraph "
        f"durability={args.durability}; burst runs/s are medians of {args.rounds} alternating "
        f"rounds; {platform.machine()}, {os.cpu_count()} cores",
        "",
        "| engine | per-run p50 ms | per-run p95 ms | burst runs/s |",
        "| --- | --- | --- | --- |",
        _row("Hansa in-process", inproc),
        *([_row("Hansa over HTTP (server + client on one machine)", http)] if http else []),
        _row("LangGraph + AsyncSqliteSaver", lg),
        "",
        "| measure | value | target |",
        "| --- | --- | --- |",
        f"| Hansa burst / LangGraph burst | {inproc.rate / lg.rate:.2f}x (rounds: {ratios}) "
        "| >= 5x |",
        f"| Hansa per-run overhead p50 | {statistics.median(inproc.sequential) * 1000:.1f} ms "
        "| <= 2 ms |",
    ]
    if http:
        lines.append(f"| Hansa HTTP burst / LangGraph burst | {http.rate / lg.rate:.2f}x | >= 2x |")
    lines += [
        f"| CPU per run in the burst (the process, all threads): Hansa / LangGraph "
        f"| {_ms(inproc.cpu)} / {_ms(lg.cpu)} ms | - |",
        f"| what 5x LangGraph's burst leaves per run (wall time, both cores) "
        f"| {1000 / (5 * lg.rate):.2f} ms | - |",
    ]
    report = "\n".join(lines)
    print(report)
    if args.record:
        record(
            "run_throughput",
            report + "\n\nReproduce: `.venv/bin/python bench/run_throughput.py --record` "
            '(needs the bench extra: `pip install -e ".[bench]"`).',
        )
    http_rate = f" http_runs_per_s={http.rate:.1f}" if http else ""
    print(f"runs_per_s={inproc.rate:.1f} langgraph_runs_per_s={lg.rate:.1f}{http_rate}")


if __name__ == "__main__":
    main()
