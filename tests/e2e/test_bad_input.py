"""Every bad input gets its error in the API.md shape and writes nothing."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from harness import Server, new_conversation

Call = Callable[[httpx.Client, str], httpx.Response]

CASES: list[tuple[str, Call, int, str]] = [
    ("unknown conversation", lambda c, _: c.get("/api/conversations/nope"), 404, "not_found"),
    (
        "message to unknown conversation",
        lambda c, _: c.post("/api/conversations/nope/messages", json={"content": "hi"}),
        404,
        "not_found",
    ),
    (
        "events of unknown conversation",
        lambda c, _: c.get("/api/conversations/nope/events"),
        404,
        "not_found",
    ),
    (
        "timeline of unknown conversation",
        lambda c, _: c.get("/api/conversations/nope/timeline"),
        404,
        "not_found",
    ),
    ("unknown project", lambda c, _: c.get("/api/projects/nope"), 404, "not_found"),
    (
        "conversation in unknown project",
        lambda c, _: c.post("/api/conversations", json={"projectId": "nope"}),
        404,
        "not_found",
    ),
    (
        "empty content",
        lambda c, cid: c.post(f"/api/conversations/{cid}/messages", json={"content": ""}),
        422,
        "invalid_input",
    ),
    (
        "blank content",
        lambda c, cid: c.post(f"/api/conversations/{cid}/messages", json={"content": " \n\t"}),
        422,
        "invalid_input",
    ),
    (
        "missing content",
        lambda c, cid: c.post(f"/api/conversations/{cid}/messages", json={}),
        422,
        "validation_error",
    ),
    (
        "content of the wrong type",
        lambda c, cid: c.post(f"/api/conversations/{cid}/messages", json={"content": ["x"]}),
        422,
        "validation_error",
    ),
    (
        "malformed JSON",
        lambda c, cid: c.post(
            f"/api/conversations/{cid}/messages",
            content=b'{"content": "hi"',
            headers={"content-type": "application/json"},
        ),
        422,
        "malformed_json",
    ),
    (
        "body over 1 MiB",
        lambda c, cid: c.post(
            f"/api/conversations/{cid}/messages", json={"content": "x" * (1024 * 1024 + 10)}
        ),
        413,
        "body_too_large",
    ),
    (
        "unknown active agent",
        lambda c, cid: c.post(
            f"/api/conversations/{cid}/messages", json={"content": "hi", "activeAgentId": "ghost"}
        ),
        422,
        "invalid_input",
    ),
    (
        "project without a name",
        lambda c, _: c.post("/api/projects", json={"name": ""}),
        422,
        "validation_error",
    ),
    *[
        (
            f"Last-Event-ID {name}",
            lambda c, cid, value=value: c.get(
                f"/api/conversations/{cid}/events", headers={"Last-Event-ID": value}
            ),
            400,
            "bad_request",
        )
        for name, value in [
            ("not a number", "x"),
            ("of 5,000 digits", "9" * 5_000),
            ("² (a digit to isdigit, not to int)", b"\xb2"),
            ("past 2^62", str(2**63)),
            ("negative", "-1"),
        ]
    ],
    *[
        (
            f"after {name}",
            lambda c, cid, value=value: c.get(
                f"/api/conversations/{cid}/events", params={"after": value}
            ),
            400,
            "bad_request",
        )
        for name, value in [("past 2^62", str(2**63)), ("negative", "-1"), ("a word", "x")]
    ],
    (
        "a NUL character in a message",
        lambda c, cid: c.post(f"/api/conversations/{cid}/messages", json={"content": "a\u0000b"}),
        400,
        "nul_character",
    ),
    (
        "a NUL character in the path",
        lambda c, _: c.get("/api/conversations/a%00b"),
        400,
        "nul_character",
    ),
    (
        "JSON nested 500 deep",
        lambda c, cid: c.post("/api/runs", json=_run(cid, parameters=_nested(500))),
        400,
        "json_too_deep",
    ),
    (
        "JSON nested 33 deep in a message",
        lambda c, cid: c.post(
            f"/api/conversations/{cid}/messages",
            json={"content": "hi", "projectContext": _nested(32)},
        ),
        400,
        "json_too_deep",
    ),
    (
        "a projectContext over its limit",
        lambda c, cid: c.post(
            f"/api/conversations/{cid}/messages",
            json={"content": "hi", "projectContext": {"notes": "x" * 40_000}},
        ),
        422,
        "invalid_input",
    ),
    (
        "a project id wider than its column",
        lambda c, _: c.post("/api/conversations", json={"projectId": "p" * 37}),
        422,
        "validation_error",
    ),
    (
        "a task's project id wider than its column",
        lambda c, cid: c.post("/api/runs", json=_run(cid, projectId="p" * 37)),
        422,
        "validation_error",
    ),
    (
        "an agent id wider than its column",
        lambda c, cid: c.post(
            "/api/assistant/execute",
            json={
                "conversationId": cid,
                "createdByAgentId": "a" * 65,
                "taskType": "wait",
                "parameters": {"seconds": 0},
            },
        ),
        422,
        "validation_error",
    ),
    (
        "a chat's conversation id wider than its column",
        lambda c, _: c.post(
            "/api/assistant/chat",
            json={"conversationId": "c" * 37, "messages": [{"role": "user", "content": "hi"}]},
        ),
        422,
        "validation_error",
    ),
]


def _nested(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = {"next": value}
    return value


def _run(cid: str, parameters: Any = None, **task: Any) -> dict[str, Any]:
    step = {
        "stepGroup": "A",
        "taskType": "wait",
        "parameters": parameters or {"seconds": 0},
        "createdByAgentId": "schedulerAgent",
        **task,
    }
    return {"conversationId": cid, "title": "t", "tasks": [step]}


@pytest.mark.parametrize(("name", "call", "status", "code"), CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_refused_and_writes_nothing(
    server: Server, name: str, call: Call, status: int, code: str
) -> None:
    with server.client() as client:
        cid = new_conversation(client)
        before = server.row_counts()
        response = call(client, cid)
        after = server.row_counts()
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["code"] == code
    assert isinstance(error["message"], str) and error["message"]
    assert after == before


def test_chunked_body_over_the_limit_is_refused(server: Server) -> None:
    def chunks():
        for _ in range(20):
            yield b"x" * (64 * 1024)

    with server.client() as client:
        cid = new_conversation(client)
        before = server.row_counts()
        response = client.post(
            f"/api/conversations/{cid}/messages",
            content=chunks(),
            headers={"content-type": "application/json"},
        )
        after = server.row_counts()
    assert response.status_code == 413
    assert after == before


def test_server_is_healthy_after_bad_input(server: Server) -> None:
    with server.client() as client:
        client.post("/api/conversations/nope/messages", content=b"{")
        assert client.get("/healthz").json() == {"status": "ok"}


def test_a_project_may_not_be_patched_to_null(server: Server) -> None:
    with server.client() as client:
        made = client.post("/api/projects", json={"name": "Aquaverter", "domain": "a.example"})
        pid = made.json()["id"]
        refused = [
            client.patch(f"/api/projects/{pid}", json={field: None}) for field in ("name", "config")
        ]
        cleared = client.patch(f"/api/projects/{pid}", json={"domain": None})
        kept = client.get(f"/api/projects/{pid}").json()
    for response in refused:
        assert response.status_code == 422, response.text
        assert response.json()["error"]["code"] == "validation_error"
    assert cleared.status_code == 200, "a field that may be empty may be null"
    assert (kept["name"], kept["domain"]) == ("Aquaverter", None)


def test_a_long_summary_is_cut_for_the_run_title_only(server: Server) -> None:
    summary = "Wait a moment " * 25  # 350 characters: the title column holds 200
    with server.client() as client:
        cid = new_conversation(client)
        done = client.post(
            "/api/assistant/execute",
            json={
                "conversationId": cid,
                "createdByAgentId": "schedulerAgent",
                "taskType": "wait",
                "parameters": {"seconds": 0},
                "summary": summary,
            },
        )
        assert done.status_code == 200, done.text
        card = client.get(f"/api/runs/{done.json()['runId']}").json()
        task = client.get(f"/api/tasks/{done.json()['taskId']}").json()
    assert len(card["title"]) == 200 and card["title"].endswith("…")
    assert task["summary"] == summary


@pytest.mark.parametrize("after", [str(2**63), "x", "-1"])
def test_a_websocket_with_a_bad_cursor_is_refused_with_the_error(
    server: Server, after: str
) -> None:
    with server.client() as client:
        cid = new_conversation(client)
    url = server.url.replace("http://", "ws://") + f"/api/conversations/{cid}/ws?after={after}"
    with pytest.raises(InvalidStatus) as refused:
        with connect(url, open_timeout=10):
            pass
    assert refused.value.response.status_code == 400
    error = json.loads(refused.value.response.body)["error"]
    assert error["code"] == "bad_request" and "2^62" in error["message"]


def test_a_stream_from_the_largest_cursor_opens(server: Server) -> None:
    with server.client() as client:
        cid = new_conversation(client)
        path = f"/api/conversations/{cid}/events"
        with client.stream("GET", path, params={"after": 2**62}) as response:
            assert response.status_code == 200
        assert client.get("/healthz").json() == {"status": "ok"}
