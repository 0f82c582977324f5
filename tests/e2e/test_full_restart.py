"""Issue 15 item 6: a full restart loses nothing.

Every process of a fleet (an API process and a worker, on PostgreSQL) is killed at once
while runs are paused, awaiting approval, awaiting the confirmation of an irreversible
step and in the middle of a step group. A new fleet starts on the same database; each run
continues from where it was: the paused one on resume, the unapproved one on approval, the
held step on confirmation (sent exactly once), the interrupted group by itself. Every task
completes once and every conversation's events stay gap-free.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from test_faults import _completions, _gap_free
from test_webhooks import Target

from harness import FAST, events_until, new_conversation, run_done, running_server, running_worker

Event = dict[str, Any]


def _fleet(tmp: Path, url: str, env: dict[str, str]) -> tuple[Any, Any]:
    api = running_server(tmp, database_url=url, extra_args=("--workers", "0"), env=env)
    return api, running_worker(tmp, url, env=env)


def _run(client: httpx.Client, cid: str, tasks: list[dict[str, Any]]) -> dict[str, Any]:
    response = client.post("/api/runs", json={"conversationId": cid, "title": "R", "tasks": tasks})
    assert response.status_code == 201, response.text
    return dict(response.json())


def _waits(*groups: str, seconds: float) -> list[dict[str, Any]]:
    return [
        {
            "stepGroup": g,
            "taskType": "wait",
            "parameters": {"seconds": seconds},
            "createdByAgentId": "schedulerAgent",
        }
        for g in groups
    ]


def _until(client: httpx.Client, cid: str, stop: Callable[[Event], bool]) -> list[Event]:
    return events_until(client, cid, stop, timeout=60)


def _status(client: httpx.Client, run_id: str) -> str:
    return str(client.get(f"/api/runs/{run_id}").json()["status"])


def test_every_run_continues_after_every_process_is_killed(tmp_path: Path, pg_url: str) -> None:
    target = Target()
    env = {**FAST, "HANSA_OUTBOUND_ALLOW": f"127.0.0.1:{target.port}"}
    hook = {
        "stepGroup": "A",
        "taskType": "webhook.call",
        "parameters": {"url": f"http://127.0.0.1:{target.port}/hook", "method": "POST"},
        "createdByAgentId": "notificationAgent",
    }
    try:
        api_cm, worker_cm = _fleet(tmp_path, pg_url, env)
        with api_cm as api, worker_cm as worker, api.client() as c:
            paused_cid, waiting_cid, held_cid, mid_cid = (new_conversation(c) for _ in range(4))
            paused = _run(c, paused_cid, _waits("A", "B", seconds=0.5))
            assert c.post(f"/api/runs/{paused['id']}/approve").status_code == 200
            assert c.post(f"/api/runs/{paused['id']}/pause").status_code == 200
            waiting = _run(c, waiting_cid, _waits("A", "B", seconds=0))
            held = _run(c, held_cid, [hook, *_waits("B", seconds=0)])
            assert c.post(f"/api/runs/{held['id']}/approve").status_code == 200
            mid = _run(c, mid_cid, _waits("A", "A", "A", "B", seconds=3))
            assert c.post(f"/api/runs/{mid['id']}/approve").status_code == 200
            _until(c, held_cid, lambda e: e["data"].get("status") == "awaiting_confirmation")
            _until(c, mid_cid, lambda e: e["data"].get("status") == "in_progress")
            _until(c, paused_cid, lambda e: e["type"] == "run" or "paused" in str(e["data"]))
            for proc in (api.process, worker):  # every process, at once, with no goodbye
                os.kill(proc.pid, signal.SIGKILL)
            for proc in (api.process, worker):
                proc.wait(10)
        assert not target.requests, "nothing irreversible was sent before its confirmation"

        api_cm, worker_cm = _fleet(tmp_path, pg_url, env)
        with api_cm as api, worker_cm, api.client() as c:
            assert _status(c, paused["id"]) == "paused"
            assert _status(c, waiting["id"]) == "awaiting_approval"
            assert c.post(f"/api/runs/{paused['id']}/resume").status_code == 200
            assert c.post(f"/api/runs/{waiting['id']}/approve").status_code == 200
            hold = c.get(f"/api/runs/{held['id']}").json()["groups"][0]["tasks"][0]
            assert hold["status"] == "awaiting_confirmation"
            confirmed = c.post(
                f"/api/tasks/{hold['id']}/confirm", json={"parametersHash": hold["parametersHash"]}
            )
            assert confirmed.status_code == 200, confirmed.text
            for cid, run in (
                (paused_cid, paused),
                (waiting_cid, waiting),
                (held_cid, held),
                (mid_cid, mid),
            ):
                events = _until(c, cid, run_done(run["id"]))
                card = c.get(f"/api/runs/{run['id']}").json()
                tasks = [t for g in card["groups"] for t in g["tasks"]]
                _gap_free(events)
                assert card["status"] == "completed", card
                assert _completions(events) == {t["id"]: 1 for t in tasks}, run["id"]
        assert len(target.requests) == 1, "the held call was sent exactly once"
    finally:
        target.close()
