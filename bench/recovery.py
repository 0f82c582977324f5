"""Recovery after a worker dies: how long runs freeze when one of two workers is killed.

A PostgreSQL fleet (an API process with no worker, two ``hansa worker`` processes, the
default lease of 10 s and poll of 0.5 s) gets 16 runs of short waits (groups A A B C,
0.3 s each), approved at once. Then the worker holding the most running jobs is killed with
SIGKILL, at one of three points:

- ``random``: 0.1-0.6 s after the approvals (mid-task or between steps, whichever it is; a
  quiet machine ends all the runs in ~1.2 s, so a later point may find nothing to kill);
- ``mid-task``: once one of its tasks is ``in_progress``;
- ``mid-commit``: frozen inside a job's transaction (``HANSA_STOP_AT=write.before_commit``
  on both workers: each freezes once, in its first), then killed; the other worker, if it
  froze too, is resumed at once (SIGCONT) whenever it does.

The figure is the time from the kill to the last run's terminal status (polled every
20 ms). Each trial then checks the guarantees: every run completed, no task completed
twice, every conversation's events gap-free.

    python bench/recovery.py [--trials 3] [--points random,mid-task,mid-commit]
        [--before <older tree>/src] [--record]
Last line: ``recovery_median_s=<f> recovery_max_s=<f> invariants_ok=<true|false>``.
With ``--before``, each trial runs on that tree too (its processes get it as
``PYTHONPATH``), alternating, and both tables are printed: e.g. ``git archive <commit> |
tar -x -C /tmp/before`` and ``--before /tmp/before/src``.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import statistics
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

import httpx
import psycopg

from _fleet import fresh_schema, start_worker, stop
from _server import hansa_server, record

DEFAULTS = {"HANSA_LEASE_SECONDS": "10", "HANSA_POLL_SECONDS": "0.5"}
RUNS = 16
TASKS = [
    {
        "stepGroup": g,
        "taskType": "wait",
        "parameters": {"seconds": 0.3},
        "createdByAgentId": "schedulerAgent",
    }
    for g in ("A", "A", "B", "C")
]
POINTS = ("random", "mid-task", "mid-commit")


def _owner_pid(owner: str) -> int:
    return int(owner.split(":")[1].split("+")[0])


def _holders(conn: psycopg.Connection) -> Counter[int]:
    rows = conn.execute("SELECT lease_owner FROM jobs WHERE status = 'running'").fetchall()
    return Counter(_owner_pid(owner) for (owner,) in rows if owner)


def _left(conn: psycopg.Connection, run_ids: list[str]) -> int:
    return int(
        conn.execute(
            "SELECT count(*) FROM assistant_runs WHERE id = ANY(%s) AND status NOT IN "
            "('completed','failed','cancelled')",
            (run_ids,),
        ).fetchone()[0]
    )


def _victim(conn: psycopg.Connection, workers: list[subprocess.Popen[bytes]], point: str, rng):
    """The worker to kill, once the point is reached."""
    pids = {w.pid: w for w in workers}
    deadline = time.monotonic() + 30
    if point == "random":
        time.sleep(rng.uniform(0.1, 0.6))
    while time.monotonic() < deadline:
        held = _holders(conn)
        if point == "mid-commit":
            frozen = [w for w in workers if _state(w.pid) == "T"]
            if frozen:
                return frozen[0]
        elif point == "mid-task":
            busy = conn.execute(
                "SELECT count(*) FROM assistant_tasks WHERE status = 'in_progress'"
            ).fetchone()[0]
            if busy and held:
                return pids[held.most_common(1)[0][0]]
        elif held:
            return pids.get(held.most_common(1)[0][0], rng.choice(workers))
        time.sleep(0.01)
    raise RuntimeError(f"the kill point {point} was never reached")


def _resume(workers: Iterable[subprocess.Popen[bytes]]) -> None:
    """Resume a survivor frozen at its stop point (mid-commit trials freeze each worker once)."""
    for w in workers:
        if w.poll() is None and _state(w.pid) == "T":
            os.kill(w.pid, signal.SIGCONT)


def _state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


def _check(conn: psycopg.Connection, run_ids: list[str]) -> list[str]:
    problems = []
    status = dict(conn.execute("SELECT id, status FROM assistant_runs").fetchall())
    problems += [f"run {r} is {status.get(r)}" for r in run_ids if status.get(r) != "completed"]
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
    return problems


def trial(point: str, rng: random.Random, tree: str | None) -> tuple[float, list[str]]:
    """Seconds from the kill to the last run's end; the guarantees broken, if any."""
    with tempfile.TemporaryDirectory() as tmp_name, fresh_schema() as url:
        tmp = Path(tmp_name)
        env = {**DEFAULTS, **({"PYTHONPATH": tree} if tree else {})}
        with hansa_server(
            tmp, "--model", "scripted", "--workers", "0", database_url=url, env=env
        ) as api:
            if point == "mid-commit":
                env["HANSA_STOP_AT"] = "write.before_commit"
            workers = [start_worker(tmp, url, **env) for _ in range(2)]
            try:
                time.sleep(3)  # both workers up and present
                with httpx.Client(base_url=api, timeout=30) as client:
                    cids = [
                        client.post("/api/conversations", json={}).json()["id"] for _ in range(RUNS)
                    ]
                    run_ids = [
                        client.post(
                            "/api/runs", json={"conversationId": c, "title": "R", "tasks": TASKS}
                        ).json()["id"]
                        for c in cids
                    ]
                    for run_id in run_ids:
                        assert client.post(f"/api/runs/{run_id}/approve").status_code == 200
                with psycopg.connect(url, autocommit=True) as conn:
                    victim = _victim(conn, workers, point, rng)
                    os.kill(victim.pid, signal.SIGKILL)
                    killed = time.monotonic()
                    victim.wait()
                    while _left(conn, run_ids) and time.monotonic() - killed < 60:
                        _resume(w for w in workers if w is not victim)
                        time.sleep(0.02)
                    seconds = time.monotonic() - killed
                    time.sleep(0.5)  # anything written late would show now
                    return seconds, _check(conn, run_ids)
            finally:
                for w in workers:
                    if w.poll() is None:
                        os.kill(w.pid, signal.SIGCONT)
                    stop(w)


def _table(label: str, figures: dict[str, list[float]], problems: list[str]) -> list[str]:
    every = [x for xs in figures.values() for x in xs]
    return [
        f"**{label}**",
        "",
        "| kill point | median s | max s | trials |",
        "| --- | --- | --- | --- |",
        *(
            f"| {p} | {statistics.median(xs):.2f} | {max(xs):.2f} | "
            + ", ".join(f"{x:.2f}" for x in xs)
            + " |"
            for p, xs in figures.items()
        ),
        f"| all | {statistics.median(every):.2f} | {max(every):.2f} | {len(every)} |",
        "",
        "Guarantees after every trial (runs completed, no task completed twice, events "
        f"gap-free): {'held' if not problems else '; '.join(problems[:5])}",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=3, help="trials per kill point")
    parser.add_argument("--points", default=",".join(POINTS))
    parser.add_argument("--seed", type=int, default=34)
    parser.add_argument("--before", help="an older tree's src folder, measured alternately")
    parser.add_argument("--before-label", default="the older tree", help="its name, printed")
    parser.add_argument("--record", action="store_true", help="write docs/benchmarks.md")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    points = args.points.split(",")
    trees = {
        "this tree": None,
        **({f"before: {args.before_label}": args.before} if args.before else {}),
    }
    figures = {name: {p: [] for p in points} for name in trees}
    problems: dict[str, list[str]] = {name: [] for name in trees}
    for _ in range(args.trials):
        for point in points:
            for name, tree in trees.items():
                for attempt in range(3):  # a process too slow to start under load: again
                    try:
                        seconds, broken = trial(point, rng, tree)
                        break
                    except RuntimeError as exc:
                        if attempt == 2:
                            raise
                        print(f"{name}, {point}: {exc}; once more")
                figures[name][point].append(seconds)
                problems[name] += broken
                print(f"{name}, {point}: last run ended {seconds:.2f} s after the kill; {broken}")
    load = os.getloadavg()[0]
    lines = [
        f"recovery: PostgreSQL fleet (API process + 2 workers, lease 10 s, poll 0.5 s), "
        f"{RUNS} runs of 4 waits of 0.3 s (groups A A B C); the worker "
        "holding the most running jobs killed with SIGKILL; seconds from the kill to the last "
        f"run's end, {args.trials} trials per kill point"
        + (", alternating with the older tree" if args.before else "")
        + f"; load average {load:.1f} at the end on 2 cores"
        + (" (shared with other work: under load)" if load > 2 else ""),
        "",
    ]
    for name in trees:
        lines += [*_table(name, figures[name], problems[name]), ""]
    if "mid-commit" in points:
        lines += [
            "mid-commit freezes each worker once, in its first job's transaction: the survivor, "
            "when it froze too, waited for the kill to be resumed, and its own runs with it.",
            "",
        ]
    report = "\n".join(lines)
    print(report)
    if args.record:
        record(
            "recovery",
            report + "\nReproduce: `.venv/bin/python bench/recovery.py --record` (PostgreSQL "
            "on 127.0.0.1:5432; `--before <tree>/src` measures an older tree alternately).",
        )
    every = [x for xs in figures["this tree"].values() for x in xs]
    ok = not any(problems.values())
    print(
        f"recovery_median_s={statistics.median(every):.2f} recovery_max_s={max(every):.2f} "
        f"invariants_ok={'true' if ok else 'false'}"
    )


if __name__ == "__main__":
    main()
