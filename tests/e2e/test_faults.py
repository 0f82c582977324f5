"""Fault injection with real processes on PostgreSQL: workers die at named crash points,
freeze past their lease, and race on one queue. Afterwards every accepted piece of work is
finished, no committed task ran twice, an irreversible call was made at most once, and every
conversation's events are gap-free."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from test_webhooks import Target

from harness import (
    FAST,
    Server,
    events_until,
    hans_says,
    new_conversation,
    post,
    run_done,
    running_server,
    running_worker,
    waits,
)


def _crashing(tmp: Path, url: str, point: str, **env: str) -> Any:
    return running_worker(tmp, url, env={**FAST, "HANSA_CRASH_AT": point, **env})


def _died(proc: Any) -> None:
    assert proc.wait(60) == 86, "the worker ended at its crash point"


def _gap_free(events: list[dict]) -> None:
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))


def _start_run(client: httpx.Client, cid: str, tasks: list[dict]) -> str:
    response = client.post("/api/runs", json={"conversationId": cid, "title": "R", "tasks": tasks})
    assert response.status_code == 201, response.text
    run_id = str(response.json()["id"])
    assert client.post(f"/api/runs/{run_id}/approve").status_code == 200
    return run_id


def _completed_once(events: list[dict[str, Any]], card: dict[str, Any]) -> list[dict[str, Any]]:
    """The run completed with a gap-free log, each of its tasks completed exactly once."""
    _gap_free(events)
    assert card["status"] == "completed"
    tasks = [t for g in card["groups"] for t in g["tasks"]]
    assert _completions(events) == {t["id"]: 1 for t in tasks}, "each task completed once"
    return tasks


def _completions(events: list[dict]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for e in events:
        if e["type"] == "task_status" and e["data"]["status"] == "completed":
            counts[e["taskId"]] = counts.get(e["taskId"], 0) + 1
    return counts


def test_a_worker_killed_during_a_turn_is_replaced_and_the_turn_finishes(
    api: Server, pg_url: str, tmp_path: Path
) -> None:
    with api.client() as client:
        cid = new_conversation(client)
        posted = post(client, cid, "Please improve our SEO traffic")
        with _crashing(tmp_path, pg_url, "turn.after_route") as doomed:
            _died(doomed)
        with running_worker(tmp_path, pg_url, env=FAST):
            events = events_until(client, cid, lambda e: e["type"] == "done")
    _gap_free(events)
    assert [e["type"] for e in events].count("done") == 1
    assert events[-1]["turnId"] == posted["turnId"]
    assert events[-1]["data"]["status"] == "completed"
    assert hans_says(events), "the replacement worker answered"


def test_a_worker_killed_between_tasks_leaves_nothing_half_done(
    api: Server, pg_url: str, tmp_path: Path
) -> None:
    with api.client() as client:
        cid = new_conversation(client)
        run_id = _start_run(client, cid, waits("A", "A", "B"))
        with _crashing(tmp_path, pg_url, "task.before_execute") as doomed:
            _died(doomed)
        with running_worker(tmp_path, pg_url, env=FAST):
            events = events_until(client, cid, run_done(run_id))
        card = client.get(f"/api/runs/{run_id}").json()
    tasks = _completed_once(events, card)
    assert max(t["attempts"] for t in tasks) == 2, "the interrupted task ran again"


def test_an_irreversible_call_cut_off_from_its_result_is_never_repeated(
    api: Server, pg_url: str, tmp_path: Path
) -> None:
    target = Target()
    allow = {"HANSA_OUTBOUND_ALLOW": f"127.0.0.1:{target.port}"}
    try:
        with api.client() as client:
            cid = new_conversation(client)
            response = client.post(
                "/api/runs",
                json={
                    "conversationId": cid,
                    "title": "Notify",
                    "tasks": [
                        {
                            "stepGroup": "A",
                            "taskType": "webhook.call",
                            "createdByAgentId": "notificationAgent",
                            "parameters": {
                                "url": f"http://127.0.0.1:{target.port}/hook",
                                "method": "POST",
                                "body": {"n": 1},
                            },
                            "summary": "Notify the billing system",
                        }
                    ],
                },
            )
            run = response.json()
            task = run["groups"][0]["tasks"][0]
            client.post(
                f"/api/tasks/{task['id']}/confirm", json={"parametersHash": task["parametersHash"]}
            )
            client.post(f"/api/runs/{run['id']}/approve")
            with _crashing(tmp_path, pg_url, "task.after_execute", **allow) as doomed:
                _died(doomed)
            calls_at_crash = len(target.requests)
            with running_worker(tmp_path, pg_url, env={**FAST, **allow}):
                events = events_until(client, cid, run_done(run["id"]))
                time.sleep(1)
            final_task = client.get(f"/api/tasks/{task['id']}").json()
    finally:
        target.close()
    _gap_free(events)
    assert calls_at_crash == 1
    assert len(target.requests) == 1, "the call was made exactly once"
    assert final_task["status"] == "ambiguous"
    assert events[-1]["data"]["status"] == "failed"
    assert "can't tell whether this step happened" in hans_says(events)[-1]


def test_a_frozen_worker_past_its_lease_cannot_write_after_the_takeover(
    api: Server, pg_url: str, tmp_path: Path
) -> None:
    with api.client() as client:
        cid = new_conversation(client)
        with running_worker(tmp_path, pg_url, env=FAST) as frozen:
            run_id = _start_run(client, cid, waits("A", seconds=2.5))
            events_until(
                client,
                cid,
                lambda e: e["type"] == "task_status" and e["data"]["status"] == "in_progress",
            )
            os.kill(frozen.pid, signal.SIGSTOP)
            try:
                with running_worker(tmp_path, pg_url, env=FAST):
                    events = events_until(client, cid, run_done(run_id))
                    os.kill(frozen.pid, signal.SIGCONT)
                    time.sleep(4)  # the zombie wakes up and tries to finish its task
            finally:
                os.kill(frozen.pid, signal.SIGCONT)
        full = events_until(client, cid, run_done(run_id))
        card = client.get(f"/api/runs/{run_id}").json()
    _gap_free(full)
    assert full == events, "nothing was written after the takeover finished the run"
    (task,) = card["groups"][0]["tasks"]
    assert _completions(full) == {task["id"]: 1}
    assert task["attempts"] == 2


def _stopped(pid: int, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "T":
            return
        time.sleep(0.05)
    raise AssertionError("the worker never reached its stop point")


def test_a_worker_frozen_inside_its_transaction_cannot_commit_after_the_takeover(
    api: Server, pg_url: str, tmp_path: Path
) -> None:
    """Issue 15 item 1: the worker stops itself inside a turn's transaction, after its
    guard and its writes; PostgreSQL ends the idle session and frees its locks, another
    worker takes the job over and answers; the first, resumed, has its commit refused."""
    freeze = {
        **FAST,
        "HANSA_STOP_AT": "write.before_commit",
        "HANSA_DB_IDLE_IN_TRANSACTION_SECONDS": "1",
    }
    with api.client() as client:
        cid = new_conversation(client)
        with running_worker(tmp_path, pg_url, env=freeze) as frozen:
            posted = post(client, cid, "Hello there")
            _stopped(frozen.pid)
            try:
                with running_worker(tmp_path, pg_url, env=FAST):
                    events = events_until(client, cid, lambda e: e["type"] == "done")
                    os.kill(frozen.pid, signal.SIGCONT)
                    time.sleep(3)  # the zombie wakes up and tries to commit, then to fail
            finally:
                os.kill(frozen.pid, signal.SIGCONT)
        full = events_until(client, cid, lambda e: e["type"] == "done")
        stored = client.get(f"/api/conversations/{cid}/messages").json()
    _gap_free(full)
    assert full == events, "nothing was written after the takeover answered"
    assert [e["type"] for e in full].count("done") == 1
    assert {e["turnId"] for e in full} == {posted["turnId"]}
    assert len(hans_says(full)) == 1, "one answer, not two"
    assert len([m for m in stored if m["kind"] == "assistant"]) == 1
    logs = "".join(p.read_text() for p in tmp_path.glob("worker-*.log"))
    assert "stop point write.before_commit reached" in logs


@pytest.mark.parametrize("workers", [2, 4])
def test_workers_racing_on_one_queue_run_every_task_once(
    api: Server, pg_url: str, tmp_path: Path, workers: int
) -> None:
    with api.client() as client, contextlib.ExitStack() as stack:
        for _ in range(workers):
            stack.enter_context(running_worker(tmp_path, pg_url, env=FAST))
        runs = []
        for _ in range(12):
            cid = new_conversation(client)
            runs.append((cid, _start_run(client, cid, waits("A", "A", "A", "B", "C"))))
        for cid, run_id in runs:
            events = events_until(client, cid, run_done(run_id))
            _gap_free(events)
            counts = _completions(events)
            assert len(counts) == 5 and set(counts.values()) == {1}
            assert client.get(f"/api/runs/{run_id}").json()["status"] == "completed"


def test_a_crash_during_recovery_is_recovered_too(api: Server, pg_url: str, tmp_path: Path) -> None:
    with api.client() as client:
        cid = new_conversation(client)
        run_id = _start_run(client, cid, waits("A"))
        with _crashing(tmp_path, pg_url, "task.before_execute") as first:
            _died(first)
        with _crashing(tmp_path, pg_url, "recovery.claim") as second:
            _died(second)
        with running_worker(tmp_path, pg_url, env=FAST):
            events = events_until(client, cid, run_done(run_id))
        card = client.get(f"/api/runs/{run_id}").json()
    _gap_free(events)
    assert card["status"] == "completed"


def test_tasks_started_by_an_approval_survive_the_server_dying_right_after(
    tmp_path: Path,
) -> None:
    """Approving starts the first tasks in the approval's transaction, for the server's
    own worker; that server dies before executing them. The next server (same SQLite
    file) takes the run job over when its lease expires and runs them again."""
    crash = {**FAST, "HANSA_CRASH_AT": "task.before_execute"}
    with running_server(tmp_path, env=crash) as doomed, doomed.client() as client:
        cid = new_conversation(client)
        response = client.post(
            "/api/runs", json={"conversationId": cid, "title": "R", "tasks": waits("A", "A", "B")}
        )
        run_id = str(response.json()["id"])
        with contextlib.suppress(httpx.HTTPError):  # it may die before it answers
            client.post(f"/api/runs/{run_id}/approve")
        _died(doomed.process)
    with running_server(tmp_path, env=FAST) as server, server.client() as client:
        events = events_until(client, cid, run_done(run_id))
        card = client.get(f"/api/runs/{run_id}").json()
    _completed_once(events, card)
    first_group = [t["attempts"] for t in card["groups"][0]["tasks"]]
    assert first_group == [2, 2], "started by the approval, interrupted, run again"
