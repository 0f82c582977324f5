"""Fault test: PostgreSQL itself restarts while a worker recovers a crashed worker's run.

A first worker dies at ``task.before_execute``; a second worker takes over and, while it
does, PostgreSQL is restarted (every connection of every process is cut). An SSE client of
the API process follows the conversation throughout, reconnecting with ``after=<last seq>``
when its stream drops. Afterwards the run is completed, every task completed exactly once,
the events are gap-free, and the API process and the worker are both still alive.
PostgreSQL is always running again at the end, whatever happened.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from httpx_sse import connect_sse
from test_faults import _completions, _died, _gap_free, _start_run

from harness import (
    FAST,
    Server,
    new_conversation,
    run_done,
    running_worker,
    waits,
)

PG_HOST, PG_PORT = "127.0.0.1", "5432"
PG_READY_SECONDS = 60.0
WORKER_UP_SECONDS = 60.0
RUN_DONE_SECONDS = 120.0
OUTAGE_SECONDS = 3.0  # longer than the 2 s lease of FAST
STARTUP_OUTAGE_SECONDS = 10.0  # PostgreSQL stays down this long while a worker starts

Event = dict[str, Any]

pytestmark = pytest.mark.exclusive  # PostgreSQL restarts: no other test may use it meanwhile


def _pg_ctl(action: str) -> None:
    versions = sorted(os.listdir("/etc/postgresql"))
    assert len(versions) == 1, f"expected one PostgreSQL cluster version, found {versions}"
    cmd = ["pg_ctlcluster", "--skip-systemctl-redirect", versions[0], "main", action]
    subprocess.run(cmd, check=True, capture_output=True, timeout=120)


def _pg_ready() -> bool:
    cmd = ["pg_isready", "-h", PG_HOST, "-p", PG_PORT]
    return subprocess.run(cmd, capture_output=True, timeout=10).returncode == 0


def _wait_pg_ready(seconds: float = PG_READY_SECONDS) -> None:
    deadline = time.monotonic() + seconds
    while not _pg_ready():
        assert time.monotonic() < deadline, f"PostgreSQL not accepting connections in {seconds} s"
        time.sleep(0.2)


def _ensure_pg_running() -> None:
    if not _pg_ready():
        _pg_ctl("start")
        _wait_pg_ready()


def _wait_worker_up(proc: subprocess.Popen[bytes], log: Path) -> None:
    """Until the worker printed its banner (migrated, listening, claiming)."""
    deadline = time.monotonic() + WORKER_UP_SECONDS
    while "hansa worker on" not in log.read_text(errors="replace"):
        assert proc.poll() is None, f"the worker exited {proc.returncode}:\n{log.read_text()}"
        assert time.monotonic() < deadline, f"the worker did not start:\n{log.read_text()}"
        time.sleep(0.05)


def _still_running(proc: subprocess.Popen[bytes], log: Path) -> None:
    assert proc.poll() is None, f"the worker died ({proc.returncode}):\n{log.read_text()}"


def _wait_takeover(url: str, run_id: str) -> None:
    """Until the rescuer has re-claimed a task of the crashed worker and is running it."""
    deadline = time.monotonic() + WORKER_UP_SECONDS
    query = (
        "SELECT count(*) FROM assistant_tasks WHERE run_id = %s AND status = 'in_progress' "
        "AND attempts >= 2"
    )
    with psycopg.connect(url, autocommit=True) as conn:
        while conn.execute(query, (run_id,)).fetchone() == (0,):
            assert time.monotonic() < deadline, "the rescuer never took over the crashed task"
            time.sleep(0.02)


class Follower(threading.Thread):
    """An SSE client of the API process, connected before PostgreSQL restarts, following the
    conversation until ``stop`` (inclusive). It reconnects with ``after=<last seq>`` whenever
    the stream fails or ends (expected around the restart), noting why in ``trouble``."""

    def __init__(self, server: Server, cid: str, stop: Callable[[Event], bool]) -> None:
        super().__init__(name=f"follow {cid}", daemon=True)
        self.server, self.cid, self.stop = server, cid, stop
        self.events: list[Event] = []
        self.trouble: list[str] = []
        self.error: BaseException | None = None
        self.cancelled = threading.Event()

    def run(self) -> None:
        try:
            self._follow()
        except BaseException as exc:  # handed to the test by result()
            self.error = exc

    def result(self) -> list[Event]:
        self.join(RUN_DONE_SECONDS + 40)  # _follow gives up after RUN_DONE_SECONDS + a read
        assert not self.is_alive(), f"the SSE follower hung; trouble: {self.trouble[-10:]}"
        if self.error is not None:
            raise self.error
        return self.events

    def _follow(self) -> None:
        deadline = time.monotonic() + RUN_DONE_SECONDS
        path = f"/api/conversations/{self.cid}/events"
        timeout = httpx.Timeout(10.0, read=30.0)  # a keep-alive comes every 15 s at least
        proc = self.server.process
        while not self.cancelled.is_set():
            assert proc.poll() is None, (
                f"the API process exited {proc.returncode}:\n{self.server.log_path.read_text()}"
            )
            assert time.monotonic() < deadline, (
                f"the run did not finish within {RUN_DONE_SECONDS:.0f} s; seqs seen "
                f"{[e['seq'] for e in self.events]}; trouble: {self.trouble[-10:]}"
            )
            after = self.events[-1]["seq"] if self.events else 0
            try:
                with (
                    httpx.Client(base_url=self.server.url, timeout=timeout) as client,
                    connect_sse(client, "GET", path, params={"after": after}) as source,
                ):
                    if source.response.status_code != 200:
                        source.response.read()
                        self.trouble.append(f"HTTP {source.response.status_code} after={after}")
                    else:
                        for sse in source.iter_sse():
                            if not sse.data:
                                continue
                            self.events.append(json.loads(sse.data))
                            if self.stop(self.events[-1]):
                                return
                            if time.monotonic() > deadline or self.cancelled.is_set():
                                break
                        self.trouble.append(f"stream ended (after={after})")
            except httpx.HTTPError as exc:
                seen = self.events[-1]["seq"] if self.events else 0
                self.trouble.append(f"{type(exc).__name__}: {exc} (after={after}, seen {seen})")
            time.sleep(0.3)


def _get_json(server: Server, path: str) -> dict[str, Any]:
    """GET with retries: the first request on a stale pooled connection may answer 500."""
    deadline = time.monotonic() + 30
    last = ""
    while time.monotonic() < deadline:
        try:
            response = httpx.get(server.url + path, timeout=10)
            if response.status_code == 200:
                body: dict[str, Any] = response.json()
                return body
            last = f"HTTP {response.status_code}: {response.text[:200]}"
        except httpx.HTTPError as exc:
            last = repr(exc)
        time.sleep(0.3)
    raise AssertionError(f"GET {path} kept failing: {last}")


def _restart(outage: float, api: Server) -> None:
    if outage:
        _pg_ctl("stop")
        started = time.monotonic()
        with api.client() as client:  # the API answers an outage, it does not fail
            not_ready = client.get("/readyz")
        assert not_ready.status_code == 503, not_ready.text
        assert not_ready.json()["error"]["details"] == {"reason": "unreachable"}
        assert int(not_ready.headers["Retry-After"]) > 0
        time.sleep(max(0.0, outage - (time.monotonic() - started)))
        _pg_ctl("start")
    else:
        _pg_ctl("restart")  # fast shutdown: every connection is terminated


@pytest.mark.parametrize(
    ("moment", "outage"),
    [
        pytest.param("worker_up", 0.0, id="restart-worker-up"),
        pytest.param("mid_takeover", 0.0, id="restart-mid-takeover"),
        pytest.param("mid_takeover", OUTAGE_SECONDS, id="outage-mid-takeover"),
        pytest.param("worker_starting", STARTUP_OUTAGE_SECONDS, id="outage-worker-starting"),
    ],
)
def test_postgres_restarting_during_recovery_loses_and_repeats_nothing(
    api: Server, pg_url: str, tmp_path: Path, moment: str, outage: float
) -> None:
    """When PostgreSQL goes away, relative to the rescuing worker:

    - ``worker_up``: it has started and waits for the crashed job's lease to expire;
    - ``mid_takeover``: it has re-claimed a crashed task and is running it;
    - ``worker_starting``: it starts while PostgreSQL is down (back within ``outage`` s,
      sooner if the worker exits).

    ``outage`` 0 is ``pg_ctlcluster restart`` (PostgreSQL is unreachable for ~0.2 s here);
    otherwise stop, wait that long (past the 2 s lease), start."""
    with api.client() as client:
        cid = new_conversation(client)
        run_id = _start_run(client, cid, waits("A", "A", "B", seconds=0.5))
    follower = Follower(api, cid, run_done(run_id))
    follower.start()
    with running_worker(
        tmp_path, pg_url, env={**FAST, "HANSA_CRASH_AT": "task.before_execute"}
    ) as doomed:
        _died(doomed)
    before = set(tmp_path.glob("worker-*.log"))
    try:
        if moment == "worker_starting":
            _pg_ctl("stop")
        with running_worker(tmp_path, pg_url, env=FAST) as rescuer:
            (log,) = set(tmp_path.glob("worker-*.log")) - before
            if moment == "worker_starting":
                deadline = time.monotonic() + outage
                while rescuer.poll() is None and time.monotonic() < deadline:
                    time.sleep(0.1)
                _pg_ctl("start")
            else:
                _wait_worker_up(rescuer, log)
                if moment == "mid_takeover":
                    _wait_takeover(pg_url, run_id)
                seen = [e["type"] for e in list(follower.events)]
                assert "done" not in seen, f"the run finished before PostgreSQL restarted: {seen}"
                _restart(outage, api)
            _wait_pg_ready()
            _still_running(rescuer, log)
            events = follower.result()
            card = _get_json(api, f"/api/runs/{run_id}")
            assert api.process.poll() is None, (
                f"the API process died ({api.process.returncode}):\n{api.log_path.read_text()}"
            )
            _still_running(rescuer, log)
    finally:
        follower.cancelled.set()
        _ensure_pg_running()
    tasks = [t for g in card["groups"] for t in g["tasks"]]
    print(f"attempts {[t['attempts'] for t in tasks]}; SSE trouble: {follower.trouble}")
    _gap_free(events)
    assert card["status"] == "completed", card
    assert len(tasks) == 3
    assert _completions(events) == {t["id"]: 1 for t in tasks}, "each task completed once"
    assert [e["type"] for e in events].count("done") == 1
    if outage:  # one line said the database was down, not a traceback at every poll
        assert log.read_text(errors="replace").count("claiming jobs failed") <= 2
