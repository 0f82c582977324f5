"""Issue 34 item 1: a dead worker is noticed, not waited out.

Every process here runs with a lease of 120 s: a run that completes well within it (the
tests wait 60 s at most) was taken over because its worker's presence ended
(``store/presence.py``), never because its lease ran out. Workers die by SIGKILL or at a
named crash point (``os._exit``), mid-task, between steps and inside a step's transaction,
on PostgreSQL (a fleet: API process and workers) and on SQLite (one server, restarted on
the same file). The guarantees hold each time: every task completes once, an irreversible
call is sent once and marked ambiguous, events stay gap-free.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from test_faults import _completed_once, _gap_free, _start_run, _stopped
from test_webhooks import Target

from hansa.store import presence
from harness import (
    Server,
    events_until,
    hans_says,
    new_conversation,
    run_done,
    running_server,
    running_worker,
    waits,
)

LONG = {"HANSA_LEASE_SECONDS": "120", "HANSA_POLL_SECONDS": "0.2"}
"""A lease no test outlives: each takeover here is by presence."""


@pytest.fixture
def fleet_api(tmp_path: Path, pg_url: str) -> Any:
    """An API process only (``--workers 0``) on ``pg_url``, with the long lease."""
    with running_server(
        tmp_path, database_url=pg_url, extra_args=("--workers", "0"), env=LONG
    ) as server:
        yield server


def _in_progress(client: httpx.Client, cid: str) -> None:
    events_until(
        client,
        cid,
        lambda e: e["type"] == "task_status" and e["data"]["status"] == "in_progress",
    )


def _holder_pid(pg_url: str, run_id: str) -> int:
    """The process id of the worker holding the run's job (from its lease owner's name)."""
    with psycopg.connect(pg_url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT lease_owner FROM jobs WHERE status = 'running' AND payload->>'runId' = %s",
            (run_id,),
        ).fetchone()
    assert row is not None, "the run's job is running"
    owner = str(row[0])
    assert owner.endswith(presence.MARK), "a worker holding a presence says so in its name"
    return int(owner.split(":")[1])


def _taken_over_in_time(events: list[dict[str, Any]], card: dict[str, Any]) -> None:
    tasks = _completed_once(events, card)
    assert max(t["attempts"] for t in tasks) == 2, "the interrupted task ran again"


def test_a_worker_killed_mid_task_is_noticed_by_the_other_worker(
    fleet_api: Server, pg_url: str, tmp_path: Path
) -> None:
    with (
        running_worker(tmp_path, pg_url, env=LONG) as first,
        running_worker(tmp_path, pg_url, env=LONG) as second,
        fleet_api.client() as client,
    ):
        cid = new_conversation(client)
        run_id = _start_run(client, cid, waits("A", "B", seconds=1.5))
        _in_progress(client, cid)
        victim = {p.pid: p for p in (first, second)}[_holder_pid(pg_url, run_id)]
        os.kill(victim.pid, signal.SIGKILL)
        victim.wait(10)
        events = events_until(client, cid, run_done(run_id), timeout=60)
        card = client.get(f"/api/runs/{run_id}").json()
    _taken_over_in_time(events, card)


def test_a_worker_dead_between_steps_is_taken_over_by_a_worker_started_later(
    fleet_api: Server, pg_url: str, tmp_path: Path
) -> None:
    """The replacement's first look finds the dead worker's job at once."""
    with fleet_api.client() as client:
        cid = new_conversation(client)
        run_id = _start_run(client, cid, waits("A", "A", "B"))
        crashing = {**LONG, "HANSA_CRASH_AT": "task.before_execute"}
        with running_worker(tmp_path, pg_url, env=crashing) as doomed:
            assert doomed.wait(60) == 86, "the worker ended at its crash point"
        with running_worker(tmp_path, pg_url, env=LONG):
            events = events_until(client, cid, run_done(run_id), timeout=60)
        card = client.get(f"/api/runs/{run_id}").json()
    _taken_over_in_time(events, card)


def test_a_worker_killed_inside_its_transaction_commits_nothing(
    fleet_api: Server, pg_url: str, tmp_path: Path
) -> None:
    freeze = {**LONG, "HANSA_STOP_AT": "write.before_commit"}
    with fleet_api.client() as client:
        cid = new_conversation(client)
        with running_worker(tmp_path, pg_url, env=freeze) as frozen:
            run_id = _start_run(client, cid, waits("A", "B"))
            _stopped(frozen.pid)
            with running_worker(tmp_path, pg_url, env=LONG):
                os.kill(frozen.pid, signal.SIGKILL)
                frozen.wait(10)
                events = events_until(client, cid, run_done(run_id), timeout=60)
        card = client.get(f"/api/runs/{run_id}").json()
    _completed_once(events, card)


def test_an_irreversible_call_cut_off_by_a_death_is_ambiguous_at_once(
    fleet_api: Server, pg_url: str, tmp_path: Path
) -> None:
    target = Target()
    allow = {**LONG, "HANSA_OUTBOUND_ALLOW": f"127.0.0.1:{target.port}"}
    hook = {
        "stepGroup": "A",
        "taskType": "webhook.call",
        "createdByAgentId": "notificationAgent",
        "parameters": {"url": f"http://127.0.0.1:{target.port}/hook", "method": "POST"},
    }
    try:
        with fleet_api.client() as client:
            cid = new_conversation(client)
            response = client.post(
                "/api/runs", json={"conversationId": cid, "title": "Notify", "tasks": [hook]}
            )
            run = response.json()
            task = run["groups"][0]["tasks"][0]
            confirm = {"parametersHash": task["parametersHash"]}
            assert client.post(f"/api/tasks/{task['id']}/confirm", json=confirm).status_code == 200
            assert client.post(f"/api/runs/{run['id']}/approve").status_code == 200
            crashing = {**allow, "HANSA_CRASH_AT": "task.after_execute"}
            with running_worker(tmp_path, pg_url, env=crashing) as doomed:
                assert doomed.wait(60) == 86
            with running_worker(tmp_path, pg_url, env=allow):
                events = events_until(client, cid, run_done(run["id"]), timeout=60)
                time.sleep(1)
            final = client.get(f"/api/tasks/{task['id']}").json()
    finally:
        target.close()
    _gap_free(events)
    assert len(target.requests) == 1, "the call was sent exactly once"
    assert final["status"] == "ambiguous"
    assert "can't tell whether this step happened" in hans_says(events)[-1]


def test_a_live_worker_whose_presence_ended_cannot_write_after_the_takeover(
    fleet_api: Server, pg_url: str, tmp_path: Path
) -> None:
    """The lock's session ends (a cut connection, an operator) while its worker is paused
    and cannot take it again: another worker takes the job over at once, and the first,
    resumed, has its late writes refused."""
    with (
        running_worker(tmp_path, pg_url, env=LONG) as first,
        running_worker(tmp_path, pg_url, env=LONG) as second,
        fleet_api.client() as client,
    ):
        cid = new_conversation(client)
        run_id = _start_run(client, cid, waits("A", seconds=2.0))
        _in_progress(client, cid)
        holder = _holder_pid(pg_url, run_id)
        os.kill(holder, signal.SIGSTOP)
        try:
            with psycopg.connect(pg_url, autocommit=True) as conn:
                ended = conn.execute(
                    "SELECT pg_terminate_backend(l.pid) FROM pg_locks l JOIN jobs j"
                    " ON l.objid = hashtext(j.lease_owner)::oid"
                    " WHERE l.locktype = 'advisory' AND l.classid = %s"
                    " AND j.status = 'running' AND j.payload->>'runId' = %s",
                    (presence.LOCK_SPACE, run_id),
                ).fetchall()
            assert ended == [(True,)], "the holder's presence session was ended"
            events = events_until(client, cid, run_done(run_id), timeout=60)
        finally:
            os.kill(holder, signal.SIGCONT)
        time.sleep(3)  # the first worker's wait ends; its result must be refused
        full = events_until(client, cid, run_done(run_id))
        card = client.get(f"/api/runs/{run_id}").json()
        assert all(p.poll() is None for p in (first, second)), "both workers live on"
    assert full == events, "nothing was written after the takeover finished the run"
    _taken_over_in_time(full, card)


def _serve(tmp: Path, **env: str) -> Any:
    return running_server(tmp, env={**LONG, **env})


@pytest.mark.parametrize("point", ["sigkill-mid-task", "task.before_execute", "mid-commit"])
def test_a_restarted_sqlite_server_takes_its_dead_processs_jobs_at_once(
    tmp_path: Path, point: str
) -> None:
    faults = {
        "sigkill-mid-task": {},
        "task.before_execute": {"HANSA_CRASH_AT": "task.before_execute"},
        "mid-commit": {"HANSA_STOP_AT": "write.before_commit"},
    }[point]
    with _serve(tmp_path, **faults) as server, server.client() as client:
        cid = new_conversation(client, title="R")
        response = client.post(
            "/api/runs",
            json={"conversationId": cid, "title": "R", "tasks": waits("A", "B", seconds=1.0)},
        )
        run_id = response.json()["id"]
        if point == "sigkill-mid-task":
            assert client.post(f"/api/runs/{run_id}/approve").status_code == 200
        else:  # the process may stop or end inside the approval (it starts the run's first
            try:  # step in its transaction): then its answer never comes
                client.post(f"/api/runs/{run_id}/approve", timeout=3)
            except httpx.TransportError:
                pass
        if point == "mid-commit":
            _stopped(server.process.pid)
        if point == "sigkill-mid-task":
            _in_progress(client, cid)
        if point != "task.before_execute":
            os.kill(server.process.pid, signal.SIGKILL)
        server.process.wait(60)
    with _serve(tmp_path) as server, server.client() as client:
        if client.get(f"/api/runs/{run_id}").json()["status"] == "awaiting_approval":
            # the approval ended before its commit: the client, answered by no one, asks again
            assert client.post(f"/api/runs/{run_id}/approve").status_code == 200
        events = events_until(client, cid, run_done(run_id), timeout=60)
        card = client.get(f"/api/runs/{run_id}").json()
    _completed_once(events, card)
