"""Control over HTTP and the CLI: pause and resume, cancel, preempt, handoff,
double-texting strategies."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator

import httpx
import pytest

from harness import (
    Server,
    events_until,
    new_conversation,
    post,
    run_done,
    running_server,
    turn,
    waits,
)


@pytest.fixture(scope="module")
def slow(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("control")
    script = tmp / "script.json"
    script.write_text(json.dumps({"delaySeconds": 1.5}))
    with running_server(tmp, model=f"scripted:{script}") as server:
        yield server


def _run(client: httpx.Client, cid: str, tasks: list[dict]) -> dict:
    response = client.post("/api/runs", json={"conversationId": cid, "title": "C", "tasks": tasks})
    assert response.status_code == 201, response.text
    return response.json()


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hansa", *args], capture_output=True, text=True, timeout=60
    )


def test_pause_holds_new_tasks_and_resume_continues(slow: Server) -> None:
    with slow.client() as client:
        cid = new_conversation(client)
        # A runs long enough for the CLI (a new Python process) to pause the run meanwhile
        run = _run(client, cid, waits("A", seconds=3.0) + waits("B", seconds=0.6))
        client.post(f"/api/runs/{run['id']}/approve")
        paused = _cli("control", "pause", run["id"], "--url", slow.url)
        again = client.post(f"/api/runs/{run['id']}/pause")
        events_until(
            client, cid, lambda e: e["type"] == "task_status" and e["data"]["status"] == "completed"
        )
        held = client.get(f"/api/runs/{run['id']}").json()
        resumed = client.post(f"/api/runs/{run['id']}/resume")
        finished = events_until(client, cid, run_done(run["id"]))
    assert paused.returncode == 0 and "paused" in paused.stdout
    assert again.status_code == 200 and again.json()["status"] == "paused", "a repeat is a no-op"
    assert held["status"] == "paused"
    assert held["groups"][1]["tasks"][0]["status"] == "open", "no new task started while paused"
    assert resumed.json()["status"] in ("running", "completed")
    assert finished[-1]["data"]["status"] == "completed"


def test_cancel_is_final_and_repeatable(slow: Server) -> None:
    with slow.client() as client:
        cid = new_conversation(client)
        run = _run(client, cid, waits("A", "B", seconds=0.5))
        client.post(f"/api/runs/{run['id']}/approve")
        first = client.post(f"/api/runs/{run['id']}/cancel")
        second = client.post(f"/api/runs/{run['id']}/cancel")
        resume = client.post(f"/api/runs/{run['id']}/resume")
        events = events_until(client, cid, run_done(run["id"]))
    assert first.json()["status"] == "cancelled" and second.json()["status"] == "cancelled"
    assert resume.status_code == 409, "terminal states are final"
    assert events[-1]["data"]["status"] == "cancelled"
    assert first.json()["groups"][1]["tasks"][0]["status"] == "cancelled"


def test_preempting_a_task_lets_the_run_continue(slow: Server) -> None:
    with slow.client() as client:
        cid = new_conversation(client)
        run = _run(client, cid, waits("A", "B", seconds=1.0))
        client.post(f"/api/runs/{run['id']}/approve")
        first = run["groups"][0]["tasks"][0]["id"]
        events_until(
            client,
            cid,
            lambda e: (
                e["type"] == "task_status"
                and e["taskId"] == first
                and e["data"]["status"] == "in_progress"
            ),
        )
        preempted = client.post(f"/api/tasks/{first}/preempt")
        events = events_until(client, cid, run_done(run["id"]))
        card = client.get(f"/api/runs/{run['id']}").json()
    assert preempted.json()["status"] == "cancelled"
    assert card["status"] == "completed"
    assert [g["tasks"][0]["status"] for g in card["groups"]] == ["cancelled", "completed"]
    completions = [
        e
        for e in events
        if e["type"] == "task_status"
        and e["taskId"] == first
        and e["data"]["status"] == "completed"
    ]
    assert completions == [], "the preempted task's late result was set aside"


def test_handoff_puts_a_human_in_charge(slow: Server) -> None:
    with slow.client() as client:
        cid = new_conversation(client)
        handed = client.post(f"/api/conversations/{cid}/handoff", json={"reason": "billing"})
        repeat = client.post(f"/api/conversations/{cid}/handoff")
        events = turn(client, cid, "hello?")
        log = events_until(client, cid, lambda e: e["type"] == "handoff")
    assert handed.status_code == 201 and handed.json()["status"] == "pending"
    assert repeat.status_code == 200 and repeat.json()["id"] == handed.json()["id"]
    assert log[-1]["data"]["reason"] == "billing"
    assert not any(e["type"] == "text_delta" for e in events), "the assistants stay quiet"
    assert any("human agent" in e["data"].get("text", "") for e in events if e["type"] == "status")


def test_double_texting_strategies(slow: Server) -> None:
    with slow.client() as client:
        cid = new_conversation(client)
        first = post(client, cid, "first question")
        rejected = client.post(
            f"/api/conversations/{cid}/messages",
            json={"content": "second", "multitaskStrategy": "reject"},
        )
        events_until(client, cid, lambda e: e["type"] == "session")
        interrupting = post(client, cid, "never mind, this instead", multitaskStrategy="interrupt")
        events = events_until(
            client, cid, lambda e: e["type"] == "done" and e["turnId"] == interrupting["turnId"]
        )
        bad = client.post(
            f"/api/conversations/{cid}/messages",
            json={"content": "x", "multitaskStrategy": "shout"},
        )
    assert rejected.status_code == 409
    dones = [(e["turnId"], e["data"]["status"]) for e in events if e["type"] == "done"]
    assert dones == [(first["turnId"], "cancelled"), (interrupting["turnId"], "completed")]
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    cut = next(i for i, e in enumerate(events) if e["type"] == "done")
    assert not [e for e in events[cut + 1 :] if e["turnId"] == first["turnId"]], (
        "the interrupted turn's worker wrote nothing after it was cancelled"
    )
    first_msgs = [
        e
        for e in events
        if e["turnId"] == first["turnId"]
        and e["type"] == "message"
        and e["data"]["kind"] == "assistant"
    ]
    assert first_msgs == [], "the interrupted turn wrote no answer"
    assert bad.status_code == 422
