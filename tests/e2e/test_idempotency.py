"""Idempotency-Key on POSTs: same key and body -> same response (work done once)."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx

from harness import Server, events_until, new_conversation, running_server, waits


def test_same_key_same_body_answers_the_same_once(server: Server) -> None:
    with server.client() as client:
        cid = new_conversation(client)
        headers = {"Idempotency-Key": "retry-42"}
        body = {"content": "Please improve our SEO traffic"}
        first = client.post(f"/api/conversations/{cid}/messages", json=body, headers=headers)
        before = server.row_counts()
        second = client.post(f"/api/conversations/{cid}/messages", json=body, headers=headers)
        after = server.row_counts()
        other = client.post(
            f"/api/conversations/{cid}/messages",
            json={"content": "something else"},
            headers=headers,
        )
        created = client.post("/api/projects", json={"name": "P"}, headers={"Idempotency-Key": "p"})
        again = client.post("/api/projects", json={"name": "P"}, headers={"Idempotency-Key": "p"})
        projects = client.get("/api/projects").json()
    assert first.status_code == 202 and second.status_code == 202
    assert second.json() == first.json()
    assert second.headers.get("idempotent-replayed") == "true"
    assert after["assistant_turns"] == before["assistant_turns"], "the work was done once"
    assert other.status_code == 422
    assert other.json()["error"]["code"] == "idempotency_key_reused"
    assert again.json()["id"] == created.json()["id"]
    assert [p["id"] for p in projects].count(created.json()["id"]) == 1
    assert len([p for p in projects if p["name"] == "P"]) == 1


def test_a_refused_request_is_refused_again_without_side_effects(server: Server) -> None:
    with server.client() as client:
        cid = new_conversation(client)
        headers = {"Idempotency-Key": "empty-1"}
        first = client.post(
            f"/api/conversations/{cid}/messages", json={"content": ""}, headers=headers
        )
        second = client.post(
            f"/api/conversations/{cid}/messages", json={"content": ""}, headers=headers
        )
    assert first.status_code == second.status_code == 422
    assert first.json() == second.json()


def test_a_request_refused_before_it_ran_can_be_retried(server: Server) -> None:
    deep: dict[str, Any] = {"leaf": 1}
    for _ in range(500):  # the review's M3 repro: a 500, then "still running" for ever
        deep = {"next": deep}
    with server.client() as client:
        cid = new_conversation(client)
        body = {
            "conversationId": cid,
            "title": "deep",
            "tasks": [waits("A")[0] | {"parameters": deep}],
        }
        answers = [
            client.post("/api/runs", json=body, headers={"Idempotency-Key": "deep-500"})
            for _ in range(3)
        ]
    assert [a.status_code for a in answers] == [400, 400, 400]
    assert {a.json()["error"]["code"] for a in answers} == {"json_too_deep"}


def test_a_chat_retried_after_its_timeout_gets_the_same_turn(tmp_path: Path) -> None:
    script = tmp_path / "slow.json"
    script.write_text(json.dumps({"delaySeconds": 3}))
    env = {"HANSA_CHAT_TIMEOUT_SECONDS": "0.5"}
    with running_server(tmp_path, f"scripted:{script}", env=env) as server:
        with server.client() as client:
            cid = new_conversation(client)
            body = {"conversationId": cid, "messages": [{"role": "user", "content": "Hello"}]}
            headers = {"Idempotency-Key": "chat-1"}
            first = client.post("/api/assistant/chat", json=body, headers=headers)
            retried = client.post("/api/assistant/chat", json=body, headers=headers)
            turns = server.row_counts()["assistant_turns"]
            done = events_until(client, cid, lambda e: e["type"] == "done", after=0, timeout=30)
    assert first.status_code == 202, first.text
    answer = first.json()
    assert answer["status"] == "running" and answer["conversationId"] == cid
    assert answer["turnId"] and answer["messageId"]
    assert retried.status_code == 202 and retried.json() == answer
    assert retried.headers.get("idempotent-replayed") == "true"
    assert turns == 1, "the retry did not post the message again"
    assert done[-1]["turnId"] == answer["turnId"] and done[-1]["data"]["status"] == "completed"


def _keep(server: Server, key: str, status: int, age: timedelta, response: str = "{}") -> None:
    """A key as an earlier process left it ``age`` ago (status 0: it never answered)."""
    stamp = (datetime.now(UTC) - age).replace(tzinfo=None).isoformat(sep=" ")
    with sqlite3.connect(server.db_path) as db:
        db.execute(
            "INSERT INTO idempotency_keys (tenant_id, key, request_hash, status_code, response,"
            " created_at) VALUES ('default', ?, ?, ?, ?, ?)",
            (key, "0" * 64, status, response if status else None, stamp),
        )


def _keys(server: Server) -> set[str]:
    with sqlite3.connect(server.db_path) as db:
        return {k for (k,) in db.execute("SELECT key FROM idempotency_keys")}


def test_abandoned_and_expired_keys_are_free_again_and_old_ones_are_swept(
    tmp_path: Path,
) -> None:
    with running_server(tmp_path) as server:
        _keep(server, "crashed", 0, timedelta(hours=1))  # its process died mid-request
        _keep(server, "running", 0, timedelta(seconds=5))
        _keep(server, "yesterday", 202, timedelta(days=2), '{"old": true}')
        _keep(server, "forgotten", 201, timedelta(days=3))
        with server.client() as client:
            cid = new_conversation(client)
            path = f"/api/conversations/{cid}/messages"

            def post(key: str) -> httpx.Response:
                return client.post(path, json={"content": "hi"}, headers={"Idempotency-Key": key})

            crashed, running, yesterday = post("crashed"), post("running"), post("yesterday")
        left = _keys(server)
    assert crashed.status_code == 202 and "turnId" in crashed.json()
    assert running.status_code == 422, "a young reservation still holds its key"
    assert running.json()["error"]["code"] == "idempotency_key_reused"
    assert yesterday.status_code == 202 and "turnId" in yesterday.json()
    assert "forgotten" not in left, "swept: past its time to live"
    assert {"crashed", "running", "yesterday"} <= left
