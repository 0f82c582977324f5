"""Scale-out on PostgreSQL: runs/s with 1, 2 and 4 worker processes, and recovery time.

For each worker count: an API process (no worker) and N ``hansa worker`` processes on
a fresh schema; a burst of runs (5 no-op tasks in 3 groups) created and approved over
HTTP; runs/s = runs / time until the last is terminal (polled in the database).
Recovery: a worker that is mid-task is killed (SIGKILL); the time until another worker
finishes that task is measured against the lease (2 s here; 10 s by default).

    python bench/scale.py [--runs 100] [--record]
Last line: ``runs_per_s_1=<f> runs_per_s_2=<f> runs_per_s_4=<f> recovery_s=<f>``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import tempfile
import time
from pathlib import Path

import httpx
import psycopg

from _fleet import FAST, fresh_schema, start_worker, stop
from _server import hansa_server, record

TASKS = [
    {
        "stepGroup": g,
        "taskType": "wait",
        "parameters": {"seconds": 0},
        "createdByAgentId": "schedulerAgent",
    }
    for g in ("A", "A", "A", "B", "C")
]
LEASE_SECONDS = float(FAST["HANSA_LEASE_SECONDS"])


async def _submit(url: str, runs: int) -> list[str]:
    limits = httpx.Limits(max_connections=40, keepalive_expiry=1)
    async with httpx.AsyncClient(base_url=url, timeout=60, limits=limits) as client:
        cids = [
            (await client.post("/api/conversations", json={})).json()["id"] for _ in range(runs)
        ]

        async def one(cid: str) -> str:
            body = {"conversationId": cid, "title": "scale", "tasks": TASKS}
            run_id = (await client.post("/api/runs", json=body)).json()["id"]
            await client.post(f"/api/runs/{run_id}/approve")
            return str(run_id)

        return list(await asyncio.gather(*(one(c) for c in cids)))


def _wait_terminal(url: str, run_ids: list[str], timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    # one read-committed transaction (each poll sees what committed since): the polls are not
    # counted as commits of the engine measured (bench/_pgstats.py)
    with psycopg.connect(url) as conn:
        while time.monotonic() < deadline:
            left = conn.execute(
                "SELECT count(*) FROM assistant_runs WHERE id = ANY(%s) AND status NOT IN "
                "('completed','failed','cancelled')",
                (run_ids,),
            ).fetchone()[0]
            if left == 0:
                return
            time.sleep(0.05)
    raise TimeoutError("runs did not finish")


def throughput(workers: int, runs: int) -> float:
    with tempfile.TemporaryDirectory() as tmp_name, fresh_schema() as url:
        tmp = Path(tmp_name)
        with hansa_server(
            tmp, "--model", "scripted", "--workers", "0", database_url=url, env=FAST
        ) as api:
            procs = [start_worker(tmp, url) for _ in range(workers)]
            try:
                time.sleep(2)  # workers up
                started = time.perf_counter()
                run_ids = asyncio.run(_submit(api, runs))
                _wait_terminal(url, run_ids)
                return runs / (time.perf_counter() - started)
            finally:
                for p in procs:
                    stop(p)


def recovery() -> float:
    """Seconds from killing a worker mid-task to that task completing elsewhere."""
    with tempfile.TemporaryDirectory() as tmp_name, fresh_schema() as url:
        tmp = Path(tmp_name)
        with hansa_server(
            tmp, "--model", "scripted", "--workers", "0", database_url=url, env=FAST
        ) as api:
            victim = start_worker(tmp, url)
            time.sleep(2)
            with httpx.Client(base_url=api, timeout=30) as client:
                cid = client.post("/api/conversations", json={}).json()["id"]
                tasks = [
                    {
                        "stepGroup": "A",
                        "taskType": "wait",
                        "parameters": {"seconds": 1.0},
                        "createdByAgentId": "schedulerAgent",
                    }
                ]
                run_id = client.post(
                    "/api/runs", json={"conversationId": cid, "title": "r", "tasks": tasks}
                ).json()["id"]
                client.post(f"/api/runs/{run_id}/approve")
            with psycopg.connect(url, autocommit=True) as conn:
                while (
                    conn.execute(
                        "SELECT count(*) FROM assistant_tasks WHERE run_id=%s AND "
                        "status='in_progress'",
                        (run_id,),
                    ).fetchone()[0]
                    == 0
                ):
                    time.sleep(0.01)
                os.kill(victim.pid, signal.SIGKILL)
                killed = time.perf_counter()
                rescuer = start_worker(tmp, url)
                try:
                    while (
                        conn.execute(
                            "SELECT status FROM assistant_tasks WHERE run_id=%s", (run_id,)
                        ).fetchone()[0]
                        != "completed"
                    ):
                        time.sleep(0.01)
                    return time.perf_counter() - killed
                finally:
                    stop(rescuer)
                    stop(victim)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--record", action="store_true")
    args = parser.parse_args()
    rates = {n: throughput(n, args.runs) for n in (1, 2, 4)}
    rescue = recovery()
    lines = [
        f"scale: PostgreSQL, {args.runs} runs of 5 no-op tasks (3 groups) per worker count, "
        f"API process + N worker processes, {os.cpu_count()} cores shared with PostgreSQL and "
        "the load client",
        "",
        "| workers | runs/s | vs 1 worker |",
        "| --- | --- | --- |",
        *(f"| {n} | {r:.1f} | {r / rates[1]:.2f}× |" for n, r in rates.items()),
        "",
        f"Recovery: a worker killed mid-task; the task completed on another worker "
        f"{rescue:.2f} s later (lease {LEASE_SECONDS:.0f} s; target ≤ lease + 2 s; a new "
        "worker process also has to start).",
    ]
    report = "\n".join(lines)
    print(report)
    if args.record:
        record(
            "scale",
            report + "\n\nReproduce: `python bench/scale.py` (PostgreSQL on "
            "127.0.0.1:5432, database `test`).",
        )
    print(
        f"runs_per_s_1={rates[1]:.1f} runs_per_s_2={rates[2]:.1f} "
        f"runs_per_s_4={rates[4]:.1f} recovery_s={rescue:.2f}"
    )


if __name__ == "__main__":
    main()
