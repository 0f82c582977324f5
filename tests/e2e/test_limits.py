"""Limits over the real server (security review H3, M5): no message stalls the event loop,
and each limit answers 429 ``rate_limited`` with ``Retry-After`` (or its own code)."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest
from apikeys import bearer, create_key
from websockets.exceptions import ConnectionClosedError, InvalidStatus
from websockets.sync.client import ClientConnection, connect

from harness import Server, events_until, new_conversation, post, running_server


@pytest.fixture(scope="module")
def limited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """Local mode, small limits, and a model that takes 2 s for each reply."""
    tmp = tmp_path_factory.mktemp("limited")
    script = tmp / "slow.json"
    script.write_text(json.dumps({"delaySeconds": 2}))
    env = {
        "HANSA_MAX_QUEUED_TURNS": "2",
        "HANSA_RATE_LIMIT_PER_MINUTE": "3",  # local mode is exempt
        "HANSA_EXECUTE_TIMEOUT_SECONDS": "1",
        "HANSA_MAX_BODY_BYTES": "4096",
        "HANSA_MAX_PROJECT_CONTEXT_BYTES": "512",
    }
    with running_server(tmp, f"scripted:{script}", env=env) as server:
        yield server


def _ws(server: Server, cid: str, query: str = "") -> str:
    return server.url.replace("http://", "ws://") + f"/api/conversations/{cid}/ws{query}"


def _posted(server: Server) -> tuple[int, int]:
    """What posting a message writes: user messages and turns. The first turn is being
    answered meanwhile (the worker is woken by the commit), so its events and messages
    may grow between two reads and are not counted."""
    with sqlite3.connect(f"file:{server.db_path}?mode=ro", uri=True) as conn:
        users = "SELECT count(*) FROM assistant_messages WHERE kind = 'user'"
        return (
            conn.execute(users).fetchone()[0],
            conn.execute("SELECT count(*) FROM assistant_turns").fetchone()[0],
        )


def _retry_after(response: httpx.Response) -> int:
    assert response.status_code == 429, response.text
    assert response.json()["error"]["code"] == "rate_limited"
    return int(response.headers["Retry-After"])


# H3: the answer parsers ran quadratic (or worse) regular expressions on the event loop
ADVERSARIAL = [
    "Please create a new webpage called Services 1. a" + " " * 19_900 + "b",  # the review's
    "a, " + " " * 19_980 + "x",  # the label splitter: hours
    "yes" + " " * 19_990 + "x",
    "1. a" + " " * 19_990 + "b",
    "language: a" + " " * 19_980 + "x",
]


def test_health_answers_at_once_while_adversarial_messages_are_parsed(server: Server) -> None:
    slowest = 0.0
    stop = threading.Event()

    def probe() -> None:
        nonlocal slowest
        with server.client(timeout=30) as c:
            while not stop.is_set():
                started = time.perf_counter()
                assert c.get("/healthz").status_code == 200
                slowest = max(slowest, time.perf_counter() - started)
                time.sleep(0.005)

    with server.client() as client:
        cid = new_conversation(client)
        prober = threading.Thread(target=probe, name="healthz probe")
        prober.start()
        try:
            for text in ADVERSARIAL:  # the first opens a plan; the others answer its questions
                turn_id = post(client, cid, text)["turnId"]
                events_until(
                    client, cid, lambda e, t=turn_id: e["type"] == "done" and e["turnId"] == t
                )
        finally:
            stop.set()
            prober.join()
    # generous for a loaded machine; each message stalled the loop for seconds to hours
    assert slowest < 0.5, f"/healthz took {slowest:.3f} s"


def test_a_conversation_holds_a_bounded_number_of_unfinished_turns(limited: Server) -> None:
    with limited.client() as client:
        cid = new_conversation(client)
        first = post(client, cid, "one")
        post(client, cid, "two")
        before = _posted(limited)
        refused = client.post(f"/api/conversations/{cid}/messages", json={"content": "three"})
        after = _posted(limited)
        with connect(_ws(limited, cid, "?after=999")) as ws:
            ws.send(json.dumps({"type": "message", "content": "three, again"}))
            by_socket = json.loads(ws.recv(timeout=10))
        interrupting = client.post(
            f"/api/conversations/{cid}/messages",
            json={"content": "never mind, this", "multitaskStrategy": "interrupt"},
        )
        assert interrupting.status_code == 202, "interrupting frees the queue: not limited"
        events_until(client, cid, lambda e: e["turnId"] == first["turnId"] and e["type"] == "done")
    assert _retry_after(refused) == 5
    assert refused.json()["error"]["details"] == {"unfinishedTurns": 2}
    assert before == (2, 2), "two user messages and their turns"
    assert after == before, "the refused message wrote nothing"
    assert by_socket["type"] == "error"
    assert by_socket["error"]["code"] == "rate_limited" and by_socket["error"]["retryAfter"] == 5


def test_live_streams_are_limited_per_conversation_and_per_tenant(tmp_path: Path) -> None:
    env = {"HANSA_MAX_SUBSCRIBERS_PER_CONVERSATION": "2", "HANSA_MAX_SUBSCRIBERS_PER_TENANT": "3"}
    with running_server(tmp_path, env=env) as server, server.client() as client:
        a, b, c = (new_conversation(client) for _ in range(3))
        with ExitStack() as streams:
            first_a = _open(streams, server, a)
            _open(streams, server, a)
            third_a = client.get(f"/api/conversations/{a}/events")
            with pytest.raises(InvalidStatus) as by_socket:
                connect(_ws(server, a), open_timeout=10)
            with connect(_ws(server, b)):  # a WebSocket counts as a stream too
                tenant_full = client.get(f"/api/conversations/{c}/events")
            first_a.close()  # its slot comes back once the server sees it gone
            reopened = _eventually_open(server, a)
            reopened.close()
    assert _retry_after(third_a) >= 1
    assert "this conversation" in third_a.json()["error"]["message"]
    assert by_socket.value.response.status_code == 429
    assert _retry_after(tenant_full) >= 1
    assert "this tenant" in tenant_full.json()["error"]["message"]


def test_a_sessions_streams_take_its_conversations_slots(tmp_path: Path) -> None:
    env = {"HANSA_MAX_SUBSCRIBERS_PER_CONVERSATION": "2"}
    with running_server(tmp_path, env=env) as server, server.client() as client:
        cid = new_conversation(client)
        body = {"agentId": "growthLead", "goal": "SEO", "conversationId": cid, "maxSteps": 1}
        sid = client.post("/api/agent-sessions", json=body).json()["id"]
        with ExitStack() as streams:
            _open(streams, server, cid, f"/api/agent-sessions/{sid}/events")
            _open(streams, server, cid)
            full = client.get(f"/api/agent-sessions/{sid}/events")
            with pytest.raises(InvalidStatus) as by_socket:
                connect(
                    server.url.replace("http://", "ws://") + f"/api/agent-sessions/{sid}/ws",
                    open_timeout=10,
                )
    assert full.status_code == 429 and "this conversation" in full.json()["error"]["message"]
    assert by_socket.value.response.status_code == 429


def _open(streams: ExitStack, server: Server, cid: str, path: str | None = None) -> httpx.Response:
    client = streams.enter_context(server.client())
    path = path or f"/api/conversations/{cid}/events"
    response = streams.enter_context(client.stream("GET", path))
    assert response.status_code == 200, response.read()
    return response


def _eventually_open(server: Server, cid: str) -> httpx.Response:
    deadline = time.monotonic() + 10
    with server.client() as client:
        while True:
            response = client.send(
                client.build_request("GET", f"/api/conversations/{cid}/events"), stream=True
            )
            if response.status_code == 200 or time.monotonic() > deadline:
                assert response.status_code == 200, "the closed stream's slot never came back"
                return response
            response.close()
            time.sleep(0.1)


def test_each_key_may_make_a_bounded_number_of_requests_a_minute(tmp_path: Path) -> None:
    with running_server(tmp_path, env={"HANSA_RATE_LIMIT_PER_MINUTE": "5"}) as server:
        acme, beta = create_key(server, "acme"), create_key(server, "beta")
        with server.client(headers=bearer(acme)) as client:
            allowed = [client.get("/api/conversations").status_code for _ in range(5)]
            refused = client.get("/api/conversations")
            health = client.get("/healthz")
        with server.client(headers=bearer(beta)) as other:
            theirs = other.get("/api/conversations")
            # the bridges count against the same allowance: the Agent Protocol, OpenAI chat
            bridged = [other.get("/ap/assistants/chief").status_code for _ in range(2)]
            bridged += [other.get("/v1/models").status_code for _ in range(2)]
            past = [other.get(path) for path in ("/ap/assistants/chief", "/v1/models")]
            unkeyed = [httpx.get(server.url + path) for path in ("/v1/models", "/ap/threads/x")]
        with pytest.raises(InvalidStatus) as by_socket:
            connect(_ws(server, "any", f"?access_token={acme}"), open_timeout=10)
    assert allowed == [200] * 5
    assert 1 <= _retry_after(refused) <= 12, "5 a minute: one more within 12 s"
    assert bridged == [200] * 4 and all(_retry_after(r) >= 1 for r in past)
    assert [r.status_code for r in unkeyed] == [401, 401], "a server with keys needs one there"
    assert health.status_code == 200, "health does not count"
    assert theirs.status_code == 200, "another key has its own allowance"
    assert by_socket.value.response.status_code == 429


def test_local_mode_has_no_request_rate_limit(limited: Server) -> None:
    with limited.client() as client:
        assert [client.get("/api/conversations").status_code for _ in range(10)] == [200] * 10


def test_execute_answers_with_the_task_to_follow_once_its_wait_times_out(limited: Server) -> None:
    with limited.client() as client:
        cid = new_conversation(client)
        started = time.monotonic()
        answered = client.post(
            "/api/assistant/execute",
            json={
                "conversationId": cid,
                "createdByAgentId": "schedulerAgent",
                "taskType": "wait",
                "parameters": {"seconds": 3},
            },
        )
        waited = time.monotonic() - started
        task_id = answered.json()["taskId"]
        deadline = time.monotonic() + 20
        while (task := client.get(f"/api/tasks/{task_id}").json())["status"] != "completed":
            assert time.monotonic() < deadline, task
            time.sleep(0.2)
    assert answered.status_code == 202, answered.text
    assert answered.json()["status"] == "in_progress"
    assert waited < 2.5, "answered after HANSA_EXECUTE_TIMEOUT_SECONDS, not after the task"


def test_websocket_frames_obey_the_limits_of_a_posted_message(limited: Server) -> None:
    with limited.client() as client:
        cid = new_conversation(client)
        too_large = client.post(f"/api/conversations/{cid}/messages", json={"content": "x" * 5000})
    frames = {
        "json_too_deep": {"type": "message", "content": "hi", "projectContext": _nested(40)},
        "validation_error": {"type": "message", "content": ["x"]},
        "nul_character": {"type": "message", "content": "a\u0000b"},
        "invalid_input": {"type": "message", "content": "hi", "projectContext": {"n": "x" * 600}},
    }
    with connect(_ws(limited, cid)) as ws:
        answers = {}
        for code, frame in frames.items():
            ws.send(json.dumps(frame))
            answers[code] = _reply(ws)["error"]["code"]
        ws.send(json.dumps({"type": "message", "content": "a fine message"}))
        accepted = _reply(ws)
    with connect(_ws(limited, cid, "?after=999")) as ws:
        ws.send(json.dumps({"type": "message", "content": "x" * 5000}))
        with pytest.raises(ConnectionClosedError) as closed:
            ws.recv(timeout=10)
    assert too_large.status_code == 413
    assert answers == {code: code for code in frames}
    assert accepted["type"] == "accepted" and accepted["turnId"]
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009, "message too big"


def _reply(ws: ClientConnection) -> dict[str, Any]:
    """The next frame that answers ours (events of the conversation may come between)."""
    while True:
        frame: dict[str, Any] = json.loads(ws.recv(timeout=10))
        if frame["type"] in ("error", "accepted"):
            return frame


def _nested(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = [value]
    return value
