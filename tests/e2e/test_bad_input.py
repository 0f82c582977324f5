"""Every bad input gets its error in the API.md shape and writes nothing."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

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
    (
        "bad Last-Event-ID",
        lambda c, cid: c.get(f"/api/conversations/{cid}/events", headers={"Last-Event-ID": "x"}),
        422,
        "invalid_input",
    ),
]


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
