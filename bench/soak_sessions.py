"""A randomized soak of agent sessions on PostgreSQL, with workers killed and faults mixed in.

Starts an API process (no worker) and a pool of workers, one of them deaf to notices
(``HANSA_DROP_NOTICES``) and one that freezes itself inside its first transaction
(``HANSA_STOP_AT=write.before_commit``, ended by PostgreSQL's idle timeout); starts 50
sessions of 20 steps (agents answering every step at once) and keeps killing a random
worker (SIGKILL) and starting a new one, pausing and resuming random sessions. At the end
it checks: every session stopped at ``max_steps`` with exactly 20 steps, iterations 1..20
once each; one ``session_step`` event per step; every conversation's events gap-free.

    python bench/soak_sessions.py [--sessions 50] [--steps 20] [--workers 3] [--seed 11]
        [--minutes 5]
Last line: ``invariants_ok=<true|false> sessions=<n> steps=<n>``.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
import psycopg

from _fleet import fresh_schema, start_worker, stop
from _server import hansa_server

AGENTS = ("creativeLead", "researchAgent", "growthLead", "technicalLead")
FAULTY = ({"HANSA_DROP_NOTICES": "1"}, {"HANSA_STOP_AT": "write.before_commit"})
FREEZE = {"HANSA_DB_IDLE_IN_TRANSACTION_SECONDS": "1"}


def _start(url: str, count: int, steps: int, rng: random.Random) -> list[str]:
    started = []
    with httpx.Client(base_url=url, timeout=30) as client:
        for i in range(count):
            body = {"agentId": AGENTS[i % len(AGENTS)], "goal": f"soak {i}", "maxSteps": steps}
            response = client.post("/api/agent-sessions", json=body)
            response.raise_for_status()
            started.append(response.json()["id"])
            time.sleep(rng.uniform(0, 0.02))
    return started


def _meddle(url: str, sessions: list[str], rng: random.Random, stop_at: float) -> int:
    """Pause and resume random sessions until ``stop_at``; how many pauses."""
    pauses = 0
    with httpx.Client(base_url=url, timeout=30) as client:
        while time.monotonic() < stop_at:
            sid = rng.choice(sessions)
            if client.post(f"/api/agent-sessions/{sid}/pause").status_code == 200:
                pauses += 1
            time.sleep(rng.uniform(0, 0.3))
            client.post(f"/api/agent-sessions/{sid}/resume")
            time.sleep(rng.uniform(0, 0.2))
        for sid in sessions:  # whatever the last pause left paused goes on
            client.post(f"/api/agent-sessions/{sid}/resume")
    return pauses


def _chaos(
    tmp: Path, url: str, workers: list[subprocess.Popen[bytes]], rng: random.Random, until: float
) -> int:
    kills = 0
    while time.monotonic() < until:
        time.sleep(rng.uniform(0.5, 2.0))
        victim = workers.pop(rng.randrange(len(workers)))
        os.kill(victim.pid, signal.SIGKILL)
        victim.wait()
        kills += 1
        workers.append(start_worker(tmp, url))
    return kills


def _check(url: str, sessions: list[str], steps: int, deadline: float) -> list[str]:
    problems: list[str] = []
    with psycopg.connect(url, autocommit=True) as conn:
        while time.monotonic() < deadline:
            live = conn.execute(
                "SELECT count(*) FROM agent_sessions WHERE status IN ('running', 'paused')"
            ).fetchone()
            if live is not None and live[0] == 0:
                break
            time.sleep(1)
        rows = conn.execute("SELECT id, status, reason, iteration FROM agent_sessions").fetchall()
        state = {r[0]: r[1:] for r in rows}
        for sid in sessions:
            status, reason, iteration = state.get(sid, (None, None, None))
            if (status, reason, iteration) != ("stopped", "max_steps", steps):
                problems.append(f"session {sid} is {status} ({reason}) at step {iteration}")
        counts = conn.execute(
            "SELECT session_id, count(*), min(iteration), max(iteration) "
            "FROM agent_session_steps GROUP BY session_id"
        ).fetchall()
        for sid, n, low, high in counts:
            if (n, low, high) != (steps, 1, steps):
                problems.append(f"session {sid}: {n} steps, iterations {low}..{high}")
        events = conn.execute(
            "SELECT data->>'sessionId', count(*) FROM events WHERE type = 'session_step' "
            "GROUP BY data->>'sessionId'"
        ).fetchall()
        problems += [f"session {s}: {n} step events" for s, n in events if n != steps]
        gaps = conn.execute(
            "SELECT conversation_id FROM events GROUP BY conversation_id "
            "HAVING max(seq) <> count(*) OR min(seq) <> 1"
        ).fetchall()
        problems += [f"conversation {c} has a gap" for (c,) in gaps]
    return problems


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--minutes", type=float, default=5.0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    started = time.monotonic()
    limit = started + args.minutes * 60
    with tempfile.TemporaryDirectory() as tmp_name, fresh_schema() as url:
        tmp = Path(tmp_name)
        with hansa_server(
            tmp, "--model", "scripted", "--workers", "0", database_url=url, env=FREEZE
        ) as api:
            workers = [start_worker(tmp, url, **FREEZE) for _ in range(args.workers)]
            workers += [start_worker(tmp, url, **FREEZE, **fault) for fault in FAULTY]
            try:
                sessions = _start(api, args.sessions, args.steps, rng)
                chaos_until = min(limit - 60, time.monotonic() + args.minutes * 20)
                meddling = threading.Thread(
                    target=_meddle, args=(api, sessions, random.Random(args.seed + 2), chaos_until)
                )
                meddling.start()
                kills = _chaos(tmp, url, workers, random.Random(args.seed + 1), chaos_until)
                meddling.join()
                for frozen in workers:  # a worker stopped at its stop point goes on (or dies)
                    if frozen.poll() is None:
                        os.kill(frozen.pid, signal.SIGCONT)
                problems = _check(url, sessions, args.steps, limit)
            finally:
                for w in workers:
                    if w.poll() is None:
                        os.kill(w.pid, signal.SIGCONT)
                    stop(w)
    elapsed = time.monotonic() - started
    print(
        f"soak_sessions: {len(sessions)} sessions x {args.steps} steps, {kills} workers killed, "
        f"{elapsed:.0f} s, seed {args.seed}"
    )
    for problem in problems[:20]:
        print("PROBLEM:", problem)
    ok = "true" if not problems else "false"
    print(f"invariants_ok={ok} sessions={len(sessions)} steps={len(sessions) * args.steps}")
    sys.exit(0 if not problems else 1)


if __name__ == "__main__":
    main()
