"""A randomized soak on PostgreSQL: 200 runs while workers are killed, runs paused, and
the faults of issue 15 mixed in.

Seedable and bounded. Starts an API process (no worker) and a pool of workers, plus one
worker deaf to notices (``HANSA_DROP_NOTICES``), one whose clock runs five minutes ahead
(``HANSA_CLOCK_SKEW_SECONDS``) and one that freezes itself inside its first transaction
(``HANSA_STOP_AT=write.before_commit``; PostgreSQL ends its idle session); keeps killing a
random worker (SIGKILL) and starting a new one, pauses and resumes random runs, restarts
PostgreSQL once, and queues poison jobs (turn jobs whose payload cannot be read). At the
end it checks the invariants of docs/guarantees.md: every accepted run is terminal; no
task completed twice; every conversation's events are gap-free (1..N); each run's log
ends with exactly one run ``done``; every poison job failed with its error; no job is
left queued or running.

    python bench/soak.py [--runs 200] [--workers 3] [--seed 7] [--minutes 4] [--poison 5]
        [--no-pg-restart]
Last line: ``invariants_ok=<true|false> runs=<n>``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import sys
import tempfile
import time
import uuid
from pathlib import Path

import httpx
import psycopg

from _fleet import FAST, fresh_schema, start_worker, stop
from _pg_ctl import restart_postgres
from _server import hansa_server

FREEZE = {"HANSA_DB_IDLE_IN_TRANSACTION_SECONDS": "1"}
FAULTY = (
    {"HANSA_DROP_NOTICES": "1"},
    {"HANSA_CLOCK_SKEW_SECONDS": "300"},
    {"HANSA_STOP_AT": "write.before_commit"},
)
POISON = (
    "INSERT INTO jobs (tenant_id, kind, key, payload, status, run_at, attempts, max_attempts,"
    " epoch, created_at, updated_at) VALUES ('default', 'turn', %s, %s, 'queued', now(), 0, 3,"
    " 0, now(), now()) RETURNING id"
)
TASKS = [
    {
        "stepGroup": g,
        "taskType": "wait",
        "parameters": {"seconds": s},
        "createdByAgentId": "schedulerAgent",
    }
    for g, s in (("A", 0.05), ("A", 0.1), ("A", 0.0), ("B", 0.05), ("C", 0.0))
]


async def _post(client: httpx.AsyncClient, path: str, body: dict | None = None) -> httpx.Response:
    """POST as a careful client does through an outage: the same Idempotency-Key, again after
    ``Retry-After`` on a 503 or a dropped connection, for up to a minute."""
    key = uuid.uuid4().hex
    deadline = time.monotonic() + 60
    while True:
        try:
            response = await client.post(path, json=body, headers={"Idempotency-Key": key})
            if response.status_code != 503 or time.monotonic() > deadline:
                return response
            wait = float(response.headers.get("Retry-After", "1"))
        except httpx.TransportError:
            if time.monotonic() > deadline:
                raise
            wait = 1.0
        await asyncio.sleep(min(wait, 5.0))


async def _drive(url: str, runs: int, rng: random.Random) -> list[str]:
    accepted: list[str] = []
    async with httpx.AsyncClient(base_url=url, timeout=30) as client:
        for i in range(runs):
            cid = (await _post(client, "/api/conversations", {})).json()["id"]
            body = {"conversationId": cid, "title": f"soak {i}", "tasks": TASKS}
            run_id = (await _post(client, "/api/runs", body)).json()["id"]
            if (await _post(client, f"/api/runs/{run_id}/approve")).status_code == 200:
                accepted.append(run_id)
            if rng.random() < 0.1:
                await _post(client, f"/api/runs/{run_id}/pause")
                await asyncio.sleep(rng.uniform(0, 0.2))
                await _post(client, f"/api/runs/{run_id}/resume")
            await asyncio.sleep(rng.uniform(0, 0.02))
    return accepted


def _poison(url: str, count: int) -> list[str]:
    """``count`` conversations of their own for the poison jobs."""
    with httpx.Client(base_url=url, timeout=30) as client:
        return [client.post("/api/conversations", json={}).json()["id"] for _ in range(count)]


def _queue_poison(db_url: str, cids: list[str]) -> list[int]:
    """A turn job no worker can read (its payload lacks the turn) in each conversation."""
    with psycopg.connect(db_url, autocommit=True) as conn:
        return [
            conn.execute(POISON, (cid, json.dumps({"conversationId": cid}))).fetchone()[0]
            for cid in cids
        ]


def _chaos(
    tmp: Path, url: str, workers: list, rng: random.Random, stop_at: float, pg_restart: bool
) -> int:
    kills = 0
    restart_at = time.monotonic() + (stop_at - time.monotonic()) / 2 if pg_restart else None
    while time.monotonic() < stop_at:
        if restart_at is not None and time.monotonic() >= restart_at:
            restart_postgres()
            restart_at = None
        time.sleep(rng.uniform(0.5, 2.0))
        victim = workers.pop(rng.randrange(len(workers)))
        os.kill(victim.pid, signal.SIGKILL)
        victim.wait()
        kills += 1
        workers.append(start_worker(tmp, url, **FREEZE))
    return kills


def _check(url: str, accepted: list[str], poison: list[int], deadline: float) -> list[str]:
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
        ended = dict(
            conn.execute(
                "SELECT id, status || ':' || coalesce(last_error, '') FROM jobs WHERE id = ANY(%s)",
                (poison,),
            ).fetchall()
        )
        problems += [
            f"poison job {j} is {ended.get(j)}"
            for j in poison
            if not str(ended.get(j, "")).startswith("failed:ValidationError")
        ]
        live = conn.execute("SELECT count(*) FROM jobs WHERE status IN ('queued', 'running')")
        left = live.fetchone()[0]
        if left:
            problems.append(f"{left} jobs are still queued or running")
    return problems


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--minutes", type=float, default=4.0)
    parser.add_argument("--poison", type=int, default=5)
    parser.add_argument("--no-pg-restart", dest="pg_restart", action="store_false")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    started = time.monotonic()
    limit = started + args.minutes * 60
    with tempfile.TemporaryDirectory() as tmp_name, fresh_schema() as url:
        tmp = Path(tmp_name)
        with hansa_server(
            tmp, "--model", "scripted", "--workers", "0", database_url=url, env={**FAST, **FREEZE}
        ) as api:
            workers = [start_worker(tmp, url, **FREEZE) for _ in range(args.workers)]
            workers += [start_worker(tmp, url, **FREEZE, **fault) for fault in FAULTY]
            try:
                poison = _queue_poison(url, _poison(api, args.poison))
                loop = asyncio.new_event_loop()
                drive = loop.run_in_executor(None, lambda: asyncio.run(_drive(api, args.runs, rng)))
                chaos_rng = random.Random(args.seed + 1)
                chaos_stop = min(limit - 60, time.monotonic() + args.minutes * 30)
                kills = _chaos(tmp, url, workers, chaos_rng, chaos_stop, args.pg_restart)
                accepted = loop.run_until_complete(drive)
                loop.close()
                for w in workers:  # a worker frozen at its stop point goes on
                    if w.poll() is None:
                        os.kill(w.pid, signal.SIGCONT)
                problems = _check(url, accepted, poison, limit)
            finally:
                for w in workers:
                    if w.poll() is None:
                        os.kill(w.pid, signal.SIGCONT)
                    stop(w)
    elapsed = time.monotonic() - started
    print(
        f"soak: {len(accepted)} runs accepted, {kills} workers killed, {len(poison)} poison "
        f"jobs, PostgreSQL restarted: {args.pg_restart}, {elapsed:.0f} s, seed {args.seed}"
    )
    for problem in problems[:20]:
        print("PROBLEM:", problem)
    print(f"invariants_ok={'true' if not problems else 'false'} runs={len(accepted)}")
    sys.exit(0 if not problems else 1)


if __name__ == "__main__":
    main()
