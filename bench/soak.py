"""A randomized soak on PostgreSQL: 200 runs while workers are killed and runs paused.

Seedable and bounded. Starts an API process (no worker) and a pool of workers;
keeps killing a random worker (SIGKILL) and starting a new one, pauses and
resumes random runs. At the end it checks the invariants of docs/guarantees.md:
every accepted run is terminal; no task completed twice; every conversation's
events are gap-free (1..N); each run's log ends with exactly one run ``done``.

    python bench/soak.py [--runs 200] [--workers 3] [--seed 7] [--minutes 4]
Last line: ``invariants_ok=<true|false> runs=<n>``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import signal
import sys
import tempfile
import time
from pathlib import Path

import httpx
import psycopg

from _fleet import FAST, fresh_schema, start_worker, stop
from _server import hansa_server

TASKS = [
    {
        "stepGroup": g,
        "taskType": "wait",
        "parameters": {"seconds": s},
        "createdByAgentId": "schedulerAgent",
    }
    for g, s in (("A", 0.05), ("A", 0.1), ("A", 0.0), ("B", 0.05), ("C", 0.0))
]


async def _drive(url: str, runs: int, rng: random.Random) -> list[str]:
    accepted: list[str] = []
    async with httpx.AsyncClient(base_url=url, timeout=30) as client:
        for i in range(runs):
            cid = (await client.post("/api/conversations", json={})).json()["id"]
            run = await client.post(
                "/api/runs", json={"conversationId": cid, "title": f"soak {i}", "tasks": TASKS}
            )
            run_id = run.json()["id"]
            if (await client.post(f"/api/runs/{run_id}/approve")).status_code == 200:
                accepted.append(run_id)
            if rng.random() < 0.1:
                await client.post(f"/api/runs/{run_id}/pause")
                await asyncio.sleep(rng.uniform(0, 0.2))
                await client.post(f"/api/runs/{run_id}/resume")
            await asyncio.sleep(rng.uniform(0, 0.02))
    return accepted


def _chaos(tmp: Path, url: str, workers: list, rng: random.Random, stop_at: float) -> int:
    kills = 0
    while time.monotonic() < stop_at:
        time.sleep(rng.uniform(0.5, 2.0))
        victim = workers.pop(rng.randrange(len(workers)))
        os.kill(victim.pid, signal.SIGKILL)
        victim.wait()
        kills += 1
        workers.append(start_worker(tmp, url))
    return kills


def _check(url: str, accepted: list[str], deadline: float) -> list[str]:
    problems: list[str] = []
    dsn = url.replace("?options=", "?options=")
    with psycopg.connect(dsn, autocommit=True) as conn:
        while time.monotonic() < deadline:
            open_runs = conn.execute(
                "SELECT count(*) FROM assistant_runs WHERE status NOT IN "
                "('completed','failed','cancelled')"
            ).fetchone()[0]
            pending = conn.execute(
                "SELECT count(*) FROM jobs WHERE status IN ('queued','running')"
            ).fetchone()[0]
            if open_runs == 0 and pending == 0:
                break
            time.sleep(1)
        status = dict(conn.execute("SELECT id, status FROM assistant_runs").fetchall())
        for run_id in accepted:
            if status.get(run_id) not in ("completed", "failed", "cancelled"):
                tasks = conn.execute(
                    "SELECT id, step_group, status, attempts, scheduled_at IS NOT NULL "
                    "FROM assistant_tasks WHERE run_id = %s ORDER BY step_group",
                    (run_id,),
                ).fetchall()
                jobs = conn.execute(
                    "SELECT kind, status, attempts, epoch, payload::text FROM jobs "
                    "WHERE payload->>'runId' = %s",
                    (run_id,),
                ).fetchall()
                problems.append(f"run {run_id} is {status.get(run_id)}: tasks {tasks} jobs {jobs}")
        twice = conn.execute(
            "SELECT task_id, count(*) FROM events WHERE type='task_status' "
            "AND data->>'status'='completed' GROUP BY task_id HAVING count(*) > 1"
        ).fetchall()
        problems += [f"task {t} completed {n} times" for t, n in twice]
        gaps = conn.execute(
            "SELECT conversation_id FROM events GROUP BY conversation_id "
            "HAVING max(seq) <> count(*) OR min(seq) <> 1"
        ).fetchall()
        problems += [f"conversation {c} has a gap" for (c,) in gaps]
        dones = conn.execute(
            "SELECT run_id, count(*) FROM events WHERE type='done' AND run_id IS NOT NULL "
            "GROUP BY run_id"
        ).fetchall()
        done_count = dict(dones)
        problems += [
            f"run {r} has {done_count.get(r, 0)} done events"
            for r in accepted
            if done_count.get(r, 0) != 1
        ]
    return problems


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--minutes", type=float, default=4.0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    started = time.monotonic()
    limit = started + args.minutes * 60
    with tempfile.TemporaryDirectory() as tmp_name, fresh_schema() as url:
        tmp = Path(tmp_name)
        with hansa_server(
            tmp, "--model", "scripted", "--workers", "0", database_url=url, env=FAST
        ) as api:
            workers = [start_worker(tmp, url) for _ in range(args.workers)]
            try:
                loop = asyncio.new_event_loop()
                drive = loop.run_in_executor(None, lambda: asyncio.run(_drive(api, args.runs, rng)))
                chaos_rng = random.Random(args.seed + 1)
                chaos_stop = min(limit - 60, time.monotonic() + args.minutes * 30)
                kills = _chaos(tmp, url, workers, chaos_rng, chaos_stop)
                accepted = loop.run_until_complete(drive)
                loop.close()
                problems = _check(url, accepted, limit)
            finally:
                for w in workers:
                    stop(w)
    elapsed = time.monotonic() - started
    print(
        f"soak: {len(accepted)} runs accepted, {kills} workers killed, {elapsed:.0f} s, "
        f"seed {args.seed}"
    )
    for problem in problems[:20]:
        print("PROBLEM:", problem)
    print(f"invariants_ok={'true' if not problems else 'false'} runs={len(accepted)}")
    sys.exit(0 if not problems else 1)


if __name__ == "__main__":
    main()
