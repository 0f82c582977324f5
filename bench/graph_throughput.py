"""Graph run throughput (issue 18): a 50-node graph in Hansa against the same DAG in LangGraph.

The graph, the same in both engines: a root fork, then 4 stages, each a fan-out of 8
parallel nodes joined into one node, then a chain of 3 sequential nodes (the last of a
stage forks the next stage's fan-out), then a sink: 1 + 4 x (8 + 1 + 3) + 1 = 50 nodes,
22 levels deep. Every node is a no-op that does no I/O. Hansa: a prompt graph whose forks
(the root and the last chain node of stages 1-3) are ``parallel {strategy: all}`` nodes and
whose other 46 nodes are ``condition``s that always hold (every edge leaving one carries
``when: "true"``, the branch it takes); the graph is saved once, and each run reads it and
starts it as ``POST /api/graphs/{id}/runs`` does (``engine/graphs/start.py:start``), in
process, on a SQLite file, ``task_concurrency`` = the fan-out's width so a stage's fan-out
runs at once as in LangGraph; a run ends at its ``done`` event. LangGraph: a 50-node
StateGraph with the same edges (each join waits for all 8), async no-op nodes returning
``{"count": 1}`` into an ``operator.add`` reducer, ``AsyncSqliteSaver`` on a SQLite file,
``durability="sync"``, one ``thread_id`` per run. Measured as in bench/run_throughput.py
(whose helpers this uses): runs one at a time (p50/p95), then a burst started at once
(runs/s), the engines alternating over rounds; medians reported, the verdict on the median
of the rounds' ratios.

    python bench/graph_throughput.py [--runs 100] [--sequential 30] [--rounds 3]
        [--width 8] [--profile] [--record]

``--profile`` runs only Hansa's runs one at a time (timed, then under cProfile) and prints
the top costs, the transactions and rows per run, and SQLite's floor: the statements of such
runs replayed alone (bench/storage_floor.py's method). ``--width`` other than 8 changes the
node count (at most ``HANSA_MAX_TASKS_PER_RUN``, 50). Last line:
``runs_per_s=<f> langgraph_runs_per_s=<f> ratio=<median of the rounds' ratios>``.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import operator
import os
import platform
import pstats
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from contextlib import aclosing
from pathlib import Path
from sqlite3 import dbapi2
from typing import Annotated, Any, TypedDict

from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import END, START, StateGraph

import storage_floor
from _server import record
from hansa.domain import graph
from hansa.domain.base import new_id
from hansa.engine.graphs import start
from hansa.engine.running import running
from hansa.engine.runtime.follow import follow
from hansa.engine.runtime.services import Services
from hansa.engine.turns.chat import create_conversation
from hansa.settings import Settings
from hansa.store import graphs as graph_rows
from hansa.store.db import DEFAULT_TENANT_ID as TENANT
from run_throughput import RUN_TIMEOUT_SECONDS, Result, _bounded, _measure, _median_of, _ms, _row

TARGET = 1.5
STAGES = 4
CHAIN = 3


ALWAYS = {"field": "context.nothing", "operator": "not_exists"}
"""A condition that holds in every run (the context has no ``nothing``)."""


class Shape:
    """The graph's nodes (in order, with their kind) and edges, for both engines."""

    def __init__(self, width: int) -> None:
        self.width = width
        self.nodes: list[tuple[str, str]] = [("root", "fork")]
        self.edges: list[tuple[str, str]] = []
        fork = "root"
        for s in range(STAGES):
            fan = [f"s{s}_p{i}" for i in range(width)]
            join = f"s{s}_join"
            chain = [f"s{s}_q{i}" for i in range(CHAIN)]
            self.nodes += [(n, "step") for n in fan] + [(join, "step")]
            last = STAGES - 1
            self.nodes += [
                (n, "fork" if s < last and i == CHAIN - 1 else "step") for i, n in enumerate(chain)
            ]
            self.edges += [(fork, n) for n in fan] + [(n, join) for n in fan]
            self.edges += list(zip([join, *chain], chain, strict=False))
            fork = chain[-1]
        self.nodes.append(("sink", "step"))
        self.edges.append((fork, "sink"))

    def describe(self) -> str:
        return (
            f"{len(self.nodes)} nodes: a root fork, {STAGES} stages of (a fan-out of "
            f"{self.width} parallel nodes, a join, a chain of {CHAIN}), a sink; "
            f"{len(self.edges)} edges, {2 + STAGES * (2 + CHAIN)} levels"
        )

    def hansa_body(self) -> dict[str, Any]:
        """``POST /api/graphs``'s body: forks are ``parallel``, the rest ``condition``s."""
        kinds = dict(self.nodes)
        components = [
            {"id": n, "type": "parallel", "config": {"strategy": "all"}}
            if kind == "fork"
            else {"id": n, "type": "condition", "config": {"condition": ALWAYS}}
            for n, kind in self.nodes
        ]
        edges = [
            {"from": a, "to": b, **({"when": "true"} if kinds[a] == "step" else {})}
            for a, b in self.edges
        ]
        return {"name": "bench 50", "components": components, "edges": edges}


# --- Hansa --------------------------------------------------------------------------------


async def _save(services: Services, shape: Shape) -> graph.Graph:
    """The graph's version 1, saved as ``POST /api/graphs`` saves it."""
    names = (t.name for t in services.registry.all())
    spec = graph.parse(shape.hansa_body(), names, services.settings.max_tasks_per_run)
    made = graph.Graph(
        name=spec.name,
        components=spec.components,
        edges=spec.edges,
        id=new_id(),
        tenant_id=TENANT,
        version=1,
        created_at=services.clock(),
        created_by="local:local",
    )
    await services.db.write(lambda conn: graph_rows.create(conn, made))
    return made


async def _hansa_run(services: Services, graph_id: str, cid: str) -> float:
    """One run as ``POST /api/graphs/{id}/runs`` starts it (less the card), until ``done``."""
    started = time.perf_counter()
    found = await services.db.read(lambda conn: graph_rows.get(conn, TENANT, graph_id, None))
    request = start.GraphRunRequest(cid, services.supervisor.id)
    run_id, stored = await start.start(services, TENANT, found, request)
    seen: list[str] = []
    if any(ev.type == "done" and ev.run_id == run_id for ev in stored):
        return time.perf_counter() - started  # decided in the transaction that started it

    async def until_done() -> float:
        events = follow(services, TENANT, cid, stored[-1].seq, idle_seconds=RUN_TIMEOUT_SECONDS)
        async with aclosing(events) as stream:
            async for ev in stream:
                if ev is None:
                    continue
                seen.append(ev.type)
                if ev.type == "done" and ev.run_id == run_id:
                    if getattr(ev.payload, "status", None) != "completed":
                        raise RuntimeError(f"run {run_id} ended {ev.payload}; events: {seen}")
                    return time.perf_counter() - started
        raise AssertionError("unreachable")

    return await _bounded(f"graph run {run_id} (conversation {cid})", seen, until_done())


def _settings(tmp: Path, width: int) -> Settings:
    return Settings(
        database_url=f"sqlite:///{tmp}/bench.db", model="scripted", task_concurrency=width
    )


async def hansa(tmp: Path, shape: Shape, seq: int, burst: int) -> Result:
    async with running(_settings(tmp, shape.width), workers=1) as services:
        saved = await _save(services, shape)
        new = lambda _: create_conversation(services, TENANT)  # noqa: E731
        return await _measure(lambda c: _hansa_run(services, saved.id, c.id), new, seq, burst)


# --- LangGraph ----------------------------------------------------------------------------


class State(TypedDict):
    count: Annotated[int, operator.add]


def _node(name: str) -> Callable[[State], Awaitable[dict[str, int]]]:
    async def step(state: State) -> dict[str, int]:
        return {"count": 1}

    step.__name__ = name
    return step


async def langgraph(tmp: Path, shape: Shape, seq: int, burst: int) -> Result:
    g = StateGraph(State)
    for name, _ in shape.nodes:
        g.add_node(name, _node(name))
    g.add_edge(START, "root")
    into: dict[str, list[str]] = {}
    for a, b in shape.edges:
        into.setdefault(b, []).append(a)
    for b, sources in into.items():
        # a node with several in-edges waits for all of them (as a Hansa task's dependsOn)
        g.add_edge(sources if len(sources) > 1 else sources[0], b)
    g.add_edge("sink", END)
    async with AsyncSqliteSaver.from_conn_string(str(tmp / "langgraph.db")) as saver:
        app = g.compile(checkpointer=saver)

        async def one(thread: str) -> float:
            started = time.perf_counter()
            config = {"configurable": {"thread_id": thread}}
            work = app.ainvoke({"count": 0}, config, durability="sync")  # type: ignore[arg-type]
            out = await _bounded(f"LangGraph thread {thread}", [], work)
            assert out["count"] == len(shape.nodes), out
            return time.perf_counter() - started

        return await _measure(one, lambda i: f"t{i}", seq, burst)


# --- where Hansa's time goes --------------------------------------------------------------


async def _timed(services: Services, graph_id: str, cids: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds per run, one run at a time."""
    started, cpu = time.perf_counter(), time.process_time()
    for cid in cids:
        await _hansa_run(services, graph_id, cid)
    n = len(cids)
    return (time.perf_counter() - started) / n, (time.process_time() - cpu) / n


async def _profiled(tmp: Path, shape: Shape, runs: int) -> None:
    """Runs one at a time: timed, then under cProfile (CPU time) counting transactions."""
    async with running(_settings(tmp, shape.width), workers=1) as services:
        saved = await _save(services, shape)
        cids = [(await create_conversation(services, TENANT)).id for _ in range(2 * runs + 3)]
        await _timed(services, saved.id, cids[:3])  # warm-up
        wall, cpu = await _timed(services, saved.id, cids[3 : 3 + runs])
        writes = 0
        write = services.db.write

        async def counted(fn: Any) -> Any:
            nonlocal writes
            writes += 1
            return await write(fn)

        services.db.write = counted  # type: ignore[method-assign]
        profiler = cProfile.Profile(time.process_time)
        profiler.enable()
        await _timed(services, saved.id, cids[3 + runs :])
        profiler.disable()
        services.db.write = write  # type: ignore[method-assign]
        rows = await services.db.read(
            lambda conn: {
                table: conn.exec_driver_sql(
                    f"SELECT count(*) FROM {table} WHERE conversation_id = ?", (cids[-1],)
                ).scalar_one()
                for table in ("events", "assistant_messages", "assistant_tasks")
            }
        )
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("tottime").print_stats(30)
    stats.sort_stats("cumulative").print_stats(50)
    print(out.getvalue())
    print(
        f"{runs} runs one at a time: {wall * 1000:.1f} ms wall, {cpu * 1000:.1f} ms CPU per "
        f"run (without the profiler); {writes / runs:.1f} Database.write calls per run; rows "
        f"of the last run: {rows}"
    )


async def _recorded(db: Path, template: Path, shape: Shape, runs: int) -> list[list[Any]]:
    """The statements of ``runs`` graph runs, as bench/storage_floor.py records a plan's."""
    async with running(_settings(db.parent, shape.width), workers=1) as services:
        saved = await _save(services, shape)
        cids = [(await create_conversation(services, TENANT)).id for _ in range(runs + 3)]
        await _timed(services, saved.id, cids[:3])  # warm-up
        with sqlite3.connect(db) as copy_from:
            copy_from.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            copy_from.backup(sqlite3.connect(template))
        storage_floor._recording = []
        for cid in cids[3:]:
            storage_floor._recording.append([])
            await _hansa_run(services, saved.id, cid)
        recorded, storage_floor._recording = storage_floor._recording, None
    return recorded


def profile(shape: Shape, runs: int) -> None:
    """Where Hansa's time goes: cProfile of runs one at a time, and SQLite's floor (the
    statements of a run replayed alone on a plain connection, bench/storage_floor.py)."""
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        asyncio.run(_profiled(tmp, shape, runs))
        dbapi2.connect = storage_floor._recording_connect  # what SQLAlchemy's pysqlite calls
        try:
            (tmp / "floor").mkdir()
            db, template = tmp / "floor" / "bench.db", tmp / "template.db"
            recorded = asyncio.run(_recorded(db, template, shape, runs))
        finally:
            dbapi2.connect = storage_floor._connect
        statements = statistics.median(
            sum(len(p) if many else 1 for _, p, many in run) for run in recorded
        )
        commits = statistics.median(sum(sql == "COMMIT" for sql, _, _ in run) for run in recorded)
        storage_floor._replay(template, tmp / "warm.db", recorded, 1)  # the page cache, warmed
        one = storage_floor._replay(template, tmp / "one.db", recorded, 1)
        grouped = storage_floor._replay(template, tmp / "grouped.db", recorded, 20)
    print(
        f"SQLite floor of a graph run: {statements:.0f} statements (rows of executemany "
        f"counted), {commits:.0f} commits; replayed alone p50 "
        f"{statistics.median(one) * 1000:.2f} ms, with one commit per 20 runs "
        f"{sum(grouped) / len(grouped) * 1000:.2f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100, help="runs in the burst")
    parser.add_argument("--sequential", type=int, default=30, help="runs one at a time")
    parser.add_argument(
        "--rounds",
        type=int,
        default=3,
        help="rounds per engine, the engines alternating; medians are reported",
    )
    parser.add_argument("--width", type=int, default=8, help="the fan-outs' width")
    parser.add_argument("--profile", action="store_true", help="cProfile Hansa's runs")
    parser.add_argument("--record", action="store_true", help="write docs/benchmarks.md")
    args = parser.parse_args()
    shape = Shape(args.width)
    print(f"graph_throughput: {shape.describe()}")
    if args.profile:
        profile(shape, args.sequential)
        return
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        rounds: list[tuple[Result, Result]] = []
        for r in range(args.rounds):  # this VM's speed drifts: alternate, then take medians
            for sub in (f"hansa{r}", f"langgraph{r}"):
                (tmp / sub).mkdir()
            mine = asyncio.run(hansa(tmp / f"hansa{r}", shape, args.sequential, args.runs))
            theirs = asyncio.run(
                langgraph(tmp / f"langgraph{r}", shape, args.sequential, args.runs)
            )
            rounds.append((mine, theirs))
            print(
                f"round {r + 1}: Hansa {mine.rate:.1f} runs/s (p50 "
                f"{statistics.median(mine.sequential) * 1000:.1f} ms), LangGraph "
                f"{theirs.rate:.1f} runs/s (p50 {statistics.median(theirs.sequential) * 1000:.1f}"
                f" ms)",
                flush=True,
            )
    # the median burst; the runs one at a time of all rounds
    mine = _median_of(rounds, 0)._replace(sequential=[s for m, _ in rounds for s in m.sequential])
    theirs = _median_of(rounds, 1)._replace(sequential=[s for _, t in rounds for s in t.sequential])
    seq_mine, seq_theirs = statistics.median(mine.sequential), statistics.median(theirs.sequential)
    paired = [m.rate / t.rate for m, t in rounds]  # each round's engines ran minutes apart
    ratio = statistics.median(paired)
    ratios = ", ".join(f"{r:.2f}x" for r in paired)
    seq_ratio = seq_theirs / seq_mine
    after = os.getloadavg()
    forks = sum(kind == "fork" for _, kind in shape.nodes)
    lines = [
        f"graph_throughput: {shape.describe()}; every node a no-op (Hansa: {forks} "
        f"`parallel` forks, {len(shape.nodes) - forks} `condition` nodes; LangGraph: async "
        f"nodes returning a count); SQLite file; Hansa in-process, task_concurrency "
        f"{args.width}; LangGraph AsyncSqliteSaver, durability=sync; {args.sequential} runs "
        f"one at a time, then a burst of {args.runs}, per round; {args.rounds} alternating "
        f"rounds, medians; {platform.machine()}, {os.cpu_count()} cores, load average "
        f"{load[0]:.2f} before, {after[0]:.2f} after",
        "",
        "| engine | per-run p50 ms | per-run p95 ms | burst runs/s |",
        "| --- | --- | --- | --- |",
        _row("Hansa in-process (graph run)", mine),
        _row("LangGraph + AsyncSqliteSaver", theirs),
        "",
        "| measure | value | target |",
        "| --- | --- | --- |",
        f"| Hansa burst / LangGraph burst, median of the rounds' ratios | {ratio:.2f}x (rounds: "
        f"{ratios}) | >= {TARGET}x ({'met' if ratio >= TARGET else 'not met'}) |",
        f"| the same, median burst / median burst | {mine.rate / theirs.rate:.2f}x | - |",
        f"| one at a time, LangGraph p50 / Hansa p50 (all rounds) "
        f"| {seq_ratio:.2f}x ({seq_theirs * 1000:.1f} / {seq_mine * 1000:.1f} ms) | - |",
        f"| CPU per run in the burst (the process, all threads): Hansa / LangGraph "
        f"| {_ms(mine.cpu)} / {_ms(theirs.cpu)} ms | - |",
    ]
    report = "\n".join(lines)
    print(report)
    if args.record:
        record(
            "graph_throughput",
            report + "\n\nReproduce: `.venv/bin/python bench/graph_throughput.py --record` "
            '(needs the bench extra: `pip install -e ".[bench]"`).',
        )
    print(f"runs_per_s={mine.rate:.1f} langgraph_runs_per_s={theirs.rate:.1f} ratio={ratio:.2f}")


if __name__ == "__main__":
    main()
