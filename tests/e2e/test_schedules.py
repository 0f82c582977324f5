"""Schedules against the real server: cron and zone checked (422 naming the field), firings
that post messages and start runs, pause and resume, "fire now", a firing that survives a
restart (once, not once per missed time), and two workers on PostgreSQL firing each time once.

Crons with a seconds field (``* * * * * */2``: every 2 s) and
``HANSA_SCHEDULE_MIN_INTERVAL_SECONDS=2`` keep the real path without waiting minutes."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from harness import (
    FAST,
    Server,
    new_conversation,
    poll_until,
    running_server,
    running_worker,
    waits,
)

QUICK = {"HANSA_SCHEDULE_MIN_INTERVAL_SECONDS": "2", "HANSA_MAX_SCHEDULES_PER_TENANT": "5"}
EVERY_2S = "* * * * * */2"


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with running_server(tmp_path_factory.mktemp("schedules"), env=QUICK) as server:
        yield server


def _message(cid: str | None = None, content: str = "Daily report please") -> dict[str, Any]:
    return {"type": "message", "conversationId": cid, "content": content}


def _fired_messages(client: httpx.Client, cid: str, sid: str) -> list[dict[str, Any]]:
    found = client.get(f"/api/conversations/{cid}/messages").json()
    return [m for m in found if m["kind"] == "user" and m["metadata"].get("scheduleId") == sid]


def test_bad_cron_zone_and_interval_are_422_naming_the_field(quick: Server) -> None:
    with quick.client() as client:
        cid = new_conversation(client)
        for cron, zone, field in (
            ("61 * * * *", "UTC", "cron"),
            ("every day", "UTC", "cron"),
            ("0 9 * * *", "Mars/Olympus", "timezone"),
            ("* * * * * *", "UTC", "cron"),  # every second: under the minimum interval
        ):
            body = {"name": "x", "cron": cron, "timezone": zone, "action": _message(cid)}
            answer = client.post("/api/schedules", json=body)
            assert answer.status_code == 422, answer.text
            assert answer.json()["error"]["details"]["field"] == field, answer.text
        gone = {"name": "x", "cron": "0 9 * * *", "action": _message("nope")}
        answer = client.post("/api/schedules", json=gone)
        assert answer.status_code == 422
        assert answer.json()["error"]["details"]["field"] == "action.conversationId"
        assert client.get("/api/schedules/unknown").status_code == 404


def test_a_schedule_fires_on_its_cron_pauses_and_resumes(quick: Server) -> None:
    with quick.client() as client:
        cid = new_conversation(client)
        body = {"name": "Ping", "cron": EVERY_2S, "timezone": "Europe/Berlin",
                "action": _message(cid)}  # fmt: skip
        created = client.post("/api/schedules", json=body)
        assert created.status_code == 201, created.text
        sched = created.json()
        sid = sched["id"]
        assert sched["nextRunAt"] is not None and sched["fired"] == 0
        assert sid in [s["id"] for s in client.get("/api/schedules").json()]
        poll_until(client, f"/api/schedules/{sid}", lambda s: s["fired"] >= 2, seconds=20)
        paused = client.patch(f"/api/schedules/{sid}", json={"enabled": False}).json()
        assert paused["enabled"] is False and paused["nextRunAt"] is None
        time.sleep(1)
        settled = client.get(f"/api/schedules/{sid}").json()["fired"]
        time.sleep(3)
        assert client.get(f"/api/schedules/{sid}").json()["fired"] == settled  # paused: none
        fired = _fired_messages(client, cid, sid)
        assert sorted(m["metadata"]["firing"] for m in fired) == list(range(1, settled + 1))
        resumed = client.patch(f"/api/schedules/{sid}", json={"enabled": True}).json()
        assert resumed["nextRunAt"] is not None
        poll_until(client, f"/api/schedules/{sid}", lambda s: s["fired"] > settled, seconds=20)
        assert client.delete(f"/api/schedules/{sid}").status_code == 204
        assert client.get(f"/api/schedules/{sid}").status_code == 404


def test_fire_now_starts_an_approved_run_and_a_new_conversation(quick: Server) -> None:
    with quick.client() as client:
        cid = new_conversation(client)
        run = {"type": "run", "conversationId": cid, "title": "Nightly", "tasks": waits("A", "B")}
        body = {"name": "Nightly", "cron": "0 3 * * *", "timezone": "UTC", "action": run,
                "enabled": False}  # fmt: skip
        sid = client.post("/api/schedules", json=body).json()["id"]
        assert client.post(f"/api/schedules/{sid}/fire").status_code == 202
        poll_until(client, f"/api/schedules/{sid}", lambda s: s["fired"] == 1)
        runs = [r for r in client.get("/api/runs").json() if r["conversationId"] == cid]
        assert len(runs) == 1
        poll_until(client, f"/api/runs/{runs[0]['id']}", lambda r: r["status"] == "completed")
        assert client.get(f"/api/schedules/{sid}").json()["nextRunAt"] is None  # still paused

        hello = {"name": "Fresh", "cron": "0 3 * * *", "action": _message(None, "Hello")}
        fresh = client.post("/api/schedules", json=hello).json()["id"]
        client.post(f"/api/schedules/{fresh}/fire")
        client.post(f"/api/schedules/{fresh}/fire")
        poll_until(client, f"/api/schedules/{fresh}", lambda s: s["fired"] == 2)
        mine = [
            c for c in client.get("/api/conversations").json()
            if (c.get("metadata") or {}).get("scheduleId") == fresh
        ]  # fmt: skip
        assert len(mine) == 2  # a new conversation per firing
        for sid_ in (sid, fresh):
            client.delete(f"/api/schedules/{sid_}")


def test_a_refused_run_is_recorded_and_the_cron_goes_on(quick: Server) -> None:
    with quick.client() as client:
        cid = new_conversation(client)
        bad = [{"stepGroup": "A", "taskType": "no_such_type", "parameters": {},
                "createdByAgentId": "chief"}]  # fmt: skip
        run = {"type": "run", "conversationId": cid, "title": "Bad", "tasks": bad}
        sid = client.post(
            "/api/schedules", json={"name": "Bad", "cron": "0 3 * * *", "action": run}
        ).json()["id"]
        client.post(f"/api/schedules/{sid}/fire")
        done = poll_until(client, f"/api/schedules/{sid}", lambda s: s["lastError"] is not None)
        assert done["fired"] == 0 and done["nextRunAt"] is not None
        client.delete(f"/api/schedules/{sid}")


def test_a_schedules_message_is_posted_as_a_clients(quick: Server) -> None:
    # chat's one step posts it: an agent removed since the schedule was saved is refused at
    # the firing, and nothing of it (not even the conversation it would open) is stored
    with quick.client() as client:
        agent = {"id": "nightOwl", "displayName": "Night Owl", "capabilities": ["tickets"]}
        assert client.post("/api/agents", json=agent).status_code == 201
        action = {**_message(None, "Anything new?"), "agentId": "nightOwl"}
        made = client.post(
            "/api/schedules", json={"name": "Owl", "cron": "0 3 * * *", "action": action}
        )
        assert made.status_code == 201, made.text
        sid = made.json()["id"]
        assert client.delete("/api/agents/nightOwl").status_code == 204
        client.post(f"/api/schedules/{sid}/fire")
        done = poll_until(client, f"/api/schedules/{sid}", lambda s: s["lastError"] is not None)
        assert done["lastError"].startswith("invalid_input") and done["fired"] == 0
        opened = [
            c for c in client.get("/api/conversations").json()
            if (c.get("metadata") or {}).get("scheduleId") == sid
        ]  # fmt: skip
        assert opened == []
        client.delete(f"/api/schedules/{sid}")


def test_the_tenant_limit(quick: Server) -> None:
    with quick.client() as client:
        body = {"name": "n", "cron": "0 3 * * *", "action": _message(None)}
        made = []
        while (answer := client.post("/api/schedules", json=body)).status_code == 201:
            made.append(answer.json()["id"])
            assert len(made) <= 5
        assert answer.status_code == 422 and "at most 5" in answer.json()["error"]["message"]
        for sid in made:
            client.delete(f"/api/schedules/{sid}")


def test_a_time_missed_while_down_fires_once_after_the_restart(tmp_path: Path) -> None:
    with running_server(tmp_path, env=QUICK) as server, server.client() as client:
        cid = new_conversation(client)
        body = {"name": "Tick", "cron": EVERY_2S, "action": _message(cid), "enabled": False}
        sid = client.post("/api/schedules", json=body).json()["id"]
        client.patch(f"/api/schedules/{sid}", json={"enabled": True})
    time.sleep(7)  # three or four cron times pass while nothing runs
    with running_server(tmp_path, env=QUICK) as server, server.client() as client:
        poll_until(client, f"/api/schedules/{sid}", lambda s: s["fired"] >= 3, seconds=30)
        client.patch(f"/api/schedules/{sid}", json={"enabled": False})
        fired = _fired_messages(client, cid, sid)
    times = sorted(datetime.fromisoformat(m["createdAt"]) for m in fired)
    gaps = [(b - a).total_seconds() for a, b in zip(times, times[1:], strict=False)]
    # the one catch-up firing may fall just before the next cron time; after it the cron's
    # own pace, and no burst making up the three or four missed times
    assert all(gap > 1.2 for gap in gaps[1:]), gaps


def test_two_workers_on_postgres_fire_each_time_once(tmp_path: Path, pg_url: str) -> None:
    env = {**FAST, **QUICK}
    with (
        running_server(
            tmp_path, database_url=pg_url, extra_args=("--workers", "0"), env=env
        ) as server,
        running_worker(tmp_path, pg_url, env=env),
        running_worker(tmp_path, pg_url, env=env),
        server.client() as client,
    ):
        cid = new_conversation(client)
        body = {"name": "Fleet", "cron": EVERY_2S, "action": _message(cid)}
        sid = client.post("/api/schedules", json=body).json()["id"]
        poll_until(client, f"/api/schedules/{sid}", lambda s: s["fired"] >= 4, seconds=40)
        client.patch(f"/api/schedules/{sid}", json={"enabled": False})
        time.sleep(1)
        fired = client.get(f"/api/schedules/{sid}").json()["fired"]
        numbers = sorted(m["metadata"]["firing"] for m in _fired_messages(client, cid, sid))
    assert numbers == list(range(1, fired + 1))  # every firing once, none twice
