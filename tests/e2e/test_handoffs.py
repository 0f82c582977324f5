"""Human handoff, round trip, through the real server: a person takes the conversation,
writes, and gives it back; a handoff stops the turn in flight and pauses runs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from harness import Server, events_until, new_conversation, post, running_server, turn, waits


@pytest.fixture(scope="module")
def slow(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("handoffs")
    script = tmp / "script.json"
    script.write_text(json.dumps({"delaySeconds": 3.0}))
    with running_server(tmp, model=f"scripted:{script}") as server:
        yield server


def _ok(answer: httpx.Response, status: int = 200) -> dict[str, Any]:
    assert answer.status_code == status, answer.text
    found: dict[str, Any] = answer.json()
    return found


def _state(client: httpx.Client, cid: str) -> str:
    state: str = client.get(f"/api/conversations/{cid}").json()["state"]
    return state


def test_a_person_takes_the_conversation_and_gives_it_back(server: Server) -> None:
    with server.client() as client:
        cid = new_conversation(client)
        turn(client, cid, "Hello, I need help with my invoice")
        handed = _ok(
            client.post(
                f"/api/conversations/{cid}/handoff", json={"reason": "billing", "priority": "high"}
            ),
            201,
        )
        pending = _state(client, cid)
        hid = handed["id"]
        early = client.post(f"/api/handoffs/{hid}/messages", json={"content": "Hi"})
        accepted = _ok(client.post(f"/api/handoffs/{hid}/accept", json={"assignee": "Ana"}))
        active = _state(client, cid)
        quiet = turn(client, cid, "Are you there?")
        said = _ok(client.post(f"/api/handoffs/{hid}/messages", json={"content": "Ana here."}), 201)
        returned = _ok(client.post(f"/api/handoffs/{hid}/return"))
        idle = _state(client, cid)
        again = turn(client, cid, "Thanks, one more question")
        twice = client.post(f"/api/handoffs/{hid}/resolve")
        log = events_until(client, cid, lambda e: e["seq"] >= again[-1]["seq"])

    assert handed["status"] == "pending" and handed["priority"] == "high"
    assert [m["content"] for m in handed["snapshot"]["messages"]][0].startswith("Hello")
    assert pending == "handoff_pending" and early.status_code == 409
    assert accepted["status"] == "active" and accepted["assignee"] == "Ana"
    assert active == "agent_active" and idle == "idle" and returned["status"] == "returned"
    assert not [
        e
        for e in quiet
        if e["type"] in ("text_delta", "message") and e["data"].get("kind") == "assistant"
    ]
    assert said["author"] == "human" and said["content"] == "Ana here."
    assert any(e["type"] == "text_delta" for e in again), "the assistants answer again"
    assert twice.status_code == 409
    statuses = [e["data"]["status"] for e in log if e["type"] == "handoff_status"]
    assert statuses == ["active", "returned"]
    assert [e["seq"] for e in log] == list(range(1, len(log) + 1))


def test_a_handoff_stops_the_turn_in_flight_and_pauses_runs(slow: Server) -> None:
    with slow.client() as client:
        cid = new_conversation(client)
        run = _ok(
            client.post(
                "/api/runs",
                json={"conversationId": cid, "title": "R", "tasks": waits("A", seconds=5.0)},
            ),
            201,
        )
        client.post(f"/api/runs/{run['id']}/approve")
        posted = post(client, cid, "Tell me a long story")
        events_until(
            client,
            cid,
            lambda e: e["type"] == "thinking" and e["data"]["phase"] == "reply",
            after=posted["seq"],
        )
        handed = _ok(client.post(f"/api/conversations/{cid}/handoff", json={"reason": "x"}), 201)
        paused = client.get(f"/api/runs/{run['id']}").json()["status"]
        client.post(f"/api/handoffs/{handed['id']}/return")
        resumed = client.get(f"/api/runs/{run['id']}").json()["status"]
        later = turn(client, cid, "Back again")  # answered after the old turn's model ends
        after = events_until(client, cid, lambda e: e["seq"] >= later[-1]["seq"])

    done = next(e for e in after if e["type"] == "done" and e["turnId"] == posted["turnId"])
    assert done["data"]["status"] == "cancelled"
    handoff_seq = next(e["seq"] for e in after if e["type"] == "handoff")
    spoken = [
        e
        for e in after
        if e["seq"] > handoff_seq
        and e["turnId"] == posted["turnId"]
        and e["type"] in ("text_delta", "message")
    ]
    assert spoken == [], "no assistant text after the handoff"
    assert paused == "paused" and resumed == "running"
    assert handed["pausedRuns"] == [run["id"]]


def test_the_queue_is_ordered_by_priority_then_age(server: Server) -> None:
    with server.client() as client:
        made = []
        for priority in ("low", "urgent", "normal", "urgent"):
            cid = new_conversation(client)
            body = {"reason": priority, "priority": priority}
            made.append(_ok(client.post(f"/api/conversations/{cid}/handoff", json=body), 201))
        queue = client.get("/api/handoffs", params={"status": "pending"}).json()
        urgent = client.get("/api/handoffs", params={"priority": "urgent"}).json()

    mine = [h["id"] for h in queue if h["id"] in {m["id"] for m in made}]
    by_id = {m["id"]: m for m in made}
    assert [by_id[i]["priority"] for i in mine] == ["urgent", "urgent", "normal", "low"]
    assert mine[:2] == [made[1]["id"], made[3]["id"]], "equal priority: the older first"
    assert {h["priority"] for h in urgent} == {"urgent"}
