"""Run scheduler throughput on PostgreSQL: Hansa (API process + worker) against LangGraph.

The topology of bench/run_throughput.py (5 no-op tasks; groups A A A B C), on the local
PostgreSQL server, each engine on a database of its own (so that ``pg_stat_database``
counts its commits and rows alone). Hansa: an API process (``--workers 0``)
and one ``hansa worker`` process; runs are created and approved over HTTP. One at a time:
create -> its ``done`` event over SSE (after Hans's summary). Burst: all runs created and
approved at once, runs/s until every run is terminal in the database (polled, as in
bench/scale.py; the summaries that follow are not waited for). Before the burst each engine
runs a warm-up burst (``--warm-up``, 40 runs at once): its connections are open before the
clock, as LangGraph's pool opens its 16 at start; Hansa's pools open theirs on demand, and
without it the burst opened ~21 new PostgreSQL sessions, whose catalog reads were ~100 of
the ~370 rows fetched per run (issue 29). LangGraph: the 5-node
StateGraph of run_throughput.py with ``AsyncPostgresSaver`` on a psycopg pool (16
connections, as many as Hansa's per-process pool), ``durability="sync"``, one thread per run,
in this process. Conversations and thread ids are made before the clock.

    python bench/run_throughput_pg.py [--runs 200] [--sequential 20] [--warm-up 40] [--record]
Last two lines: ``commits_per_run=<f> rows_fetched_per_run=<f> burst_ratio=<f> p50_ratio=<f>
api_cpu_ms_per_run=<f> worker_cpu_ms_per_run=<f> langgraph_cpu_ms_per_run=<f>`` and
``runs_per_s=<f> langgraph_runs_per_s=<f>``. CPU per run of the burst: Hansa's API and
worker processes (all threads, from /proc, the summaries after the runs included),
LangGraph's process (its graph and saver; the client's loop is in it too).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

import httpx
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.graph import END, START, StateGraph
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from _fleet import FAST, start_worker, stop
from _pgstats import Spent, fresh_database, snapshot, snapshot_after
from _server import cpu_seconds, hansa_process, record
from run_throughput import (
    RUN_TIMEOUT_SECONDS,
    TASKS_JSON,
    Result,
    State,
    _bounded,
    _measure,
    _node,
    _row,
    hansa_http,
)
from scale import _wait_terminal

POOL_SIZE = 16
SPENT: dict[str, Spent] = {}
"""What PostgreSQL spent per run of each engine's burst."""
CPU_MS: dict[str, float] = {}
"""Milliseconds of CPU per run of the burst, by process: Hansa's API and worker, LangGraph."""


async def _burst(url: str, runs: int, db_url: str) -> float:
    """Runs/s: ``runs`` created and approved at once, until all are terminal in the database."""
    limits = httpx.Limits(max_connections=40, keepalive_expiry=1)
    async with httpx.AsyncClient(base_url=url, timeout=RUN_TIMEOUT_SECONDS, limits=limits) as c:

        async def conversation() -> str:
            response = await c.post("/api/conversations", json={})
            response.raise_for_status()
            return str(response.json()["id"])

        cids = [await conversation() for _ in range(runs)]

        async def one(cid: str) -> str:
            body = {"conversationId": cid, "title": "bench", "tasks": TASKS_JSON}
            response = await c.post("/api/runs", json=body)
            response.raise_for_status()
            run_id = str(response.json()["id"])
            (await c.post(f"/api/runs/{run_id}/approve")).raise_for_status()
            return run_id

        started = time.perf_counter()
        run_ids = list(await asyncio.gather(*(one(cid) for cid in cids)))
    await asyncio.to_thread(_wait_terminal, db_url, run_ids)
    return runs / (time.perf_counter() - started)


def hansa(seq: int, burst: int, warm_up: int) -> Result:
    with tempfile.TemporaryDirectory() as tmp_name, fresh_database() as db_url:
        tmp = Path(tmp_name)
        with hansa_process(
            tmp, "--model", "scripted", "--workers", "0", database_url=db_url, env=FAST
        ) as api:
            worker = start_worker(tmp, db_url)
            try:
                time.sleep(2)  # the worker is up
                sequential = asyncio.run(hansa_http(api.url, seq, 0)).sequential
                if warm_up:
                    asyncio.run(_burst(api.url, warm_up, db_url))
                before = snapshot(db_url)
                cpu = (cpu_seconds(api.pid), cpu_seconds(worker.pid))
                rate = asyncio.run(_burst(api.url, burst, db_url))
                SPENT["Hansa"] = (snapshot_after(db_url) - before).per(burst)
                CPU_MS["API"] = (cpu_seconds(api.pid) - cpu[0]) * 1000 / burst
                CPU_MS["worker"] = (cpu_seconds(worker.pid) - cpu[1]) * 1000 / burst
                if worker.poll() is not None:
                    raise RuntimeError(f"the worker exited {worker.returncode}")
                return Result(sequential, rate)
            finally:
                stop(worker)


async def langgraph(seq: int, burst: int, warm_up: int) -> Result:
    graph = StateGraph(State)
    for name in "abcde":
        graph.add_node(name, _node(name))
    for name in "abc":
        graph.add_edge(START, name)
    graph.add_edge(["a", "b", "c"], "d")  # d waits for all three
    graph.add_edge("d", "e")
    graph.add_edge("e", END)
    with fresh_database() as db_url:
        kwargs = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}
        pool = AsyncConnectionPool(
            db_url, min_size=POOL_SIZE, max_size=POOL_SIZE, kwargs=kwargs, open=False
        )
        async with pool:
            saver = AsyncPostgresSaver(pool)  # type: ignore[arg-type]
            await saver.setup()
            app = graph.compile(checkpointer=saver)

            async def one(thread: str) -> float:
                started = time.perf_counter()
                config = {"configurable": {"thread_id": thread}}
                work = app.ainvoke({"log": []}, config, durability="sync")  # type: ignore[arg-type]
                out = await _bounded(f"LangGraph thread {thread}", [], work)
                assert len(out["log"]) == 5, out
                return time.perf_counter() - started

            result = await _measure(one, lambda i: f"t{i}", seq, 0)
            await asyncio.gather(*(one(f"w{i}") for i in range(warm_up)))
            before = await asyncio.to_thread(snapshot, db_url)
            started, cpu = time.perf_counter(), time.process_time()
            await asyncio.gather(*(one(f"b{i}") for i in range(burst)))
            rate = burst / (time.perf_counter() - started)
            CPU_MS["LangGraph"] = (time.process_time() - cpu) * 1000 / burst
            SPENT["LangGraph"] = ((await asyncio.to_thread(snapshot_after, db_url)) - before).per(
                burst
            )
            return Result(result.sequential, rate)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200, help="runs in the burst")
    parser.add_argument("--sequential", type=int, default=20, help="runs one at a time")
    parser.add_argument(
        "--warm-up", type=int, default=40, help="runs at once before the burst, not measured"
    )
    parser.add_argument("--record", action="store_true", help="write docs/benchmarks.md")
    args = parser.parse_args()
    hs = hansa(args.sequential, args.runs, args.warm_up)
    lg = asyncio.run(langgraph(args.sequential, args.runs, args.warm_up))
    p50 = statistics.median(hs[0]) / statistics.median(lg[0])
    lines = [
        f"run_throughput_pg: runs of 5 no-op tasks in 3 step groups (3 parallel, 1, 1) on "
        f"PostgreSQL (local server, a database of its own each), {args.sequential} runs one at "
        f"a time, "
        f"then a warm-up burst of {args.warm_up} and a burst of {args.runs}; Hansa: API "
        f"process + 1 worker process over HTTP (burst: "
        f"until terminal in the database); LangGraph: in-process, AsyncPostgresSaver on a "
        f"{POOL_SIZE}-connection pool, durability=sync; {platform.machine()}, "
        f"{os.cpu_count()} cores shared with PostgreSQL and the load client",
        "",
        "| engine | per-run p50 ms | per-run p95 ms | burst runs/s |",
        "| --- | --- | --- | --- |",
        _row("Hansa, API + 1 worker process (HTTP)", hs),
        _row("LangGraph + AsyncPostgresSaver (in-process)", lg),
        "",
        "| measure | value |",
        "| --- | --- |",
        f"| Hansa burst / LangGraph burst | {hs[1] / lg[1]:.2f}x |",
        f"| Hansa per-run p50 / LangGraph per-run p50 | {p50:.2f}x |",
        "",
        "What PostgreSQL spent per run of the burst (`pg_stat_database`; server CPU from "
        "/proc; statements need pg_stat_statements, not loaded here):",
        "",
        "| engine | commits | rows written | rows fetched | server CPU ms | runs/s per core |",
        "| --- | --- | --- | --- | --- | --- |",
        *(
            f"| {name} | {x.commits:.1f} | {x.rows_written:.1f} | {x.rows_fetched:.1f} | "
            f"{x.cpu_seconds * 1000:.1f} | {1 / x.cpu_seconds if x.cpu_seconds else 0:.0f} |"
            for name, x in SPENT.items()
        ),
        "",
        "CPU per run of the burst (ms, from /proc; LangGraph's process runs the client too): "
        + ", ".join(f"{name} {ms:.1f}" for name, ms in CPU_MS.items()),
    ]
    report = "\n".join(lines)
    print(report)
    if args.record:
        record(
            "run_throughput_pg",
            report + "\n\nReproduce: `.venv/bin/python bench/run_throughput_pg.py --record` "
            "(PostgreSQL on 127.0.0.1:5432, as a role that may create databases: each engine "
            'gets one of its own; `pip install -e ".[bench]"`).',
        )
    spent = SPENT["Hansa"]
    print(
        f"commits_per_run={spent.commits:.1f} rows_fetched_per_run={spent.rows_fetched:.1f} "
        f"burst_ratio={hs[1] / lg[1]:.2f} p50_ratio={p50:.2f} "
        f"api_cpu_ms_per_run={CPU_MS['API']:.2f} worker_cpu_ms_per_run={CPU_MS['worker']:.2f} "
        f"langgraph_cpu_ms_per_run={CPU_MS['LangGraph']:.2f}"
    )
    print(f"runs_per_s={hs[1]:.1f} langgraph_runs_per_s={lg[1]:.1f}")


if __name__ == "__main__":
    main()
