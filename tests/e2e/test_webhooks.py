"""webhook.call through the real server: an allowed local target works; every other
spelling of loopback, the metadata address and a redirect to a denied target are refused
before anything reaches them."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from datetime import datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from harness import Server, events_until, new_conversation, running_server


class Target:
    """A local HTTP server that counts what reaches it; ``redirect`` makes it answer 302."""

    def __init__(self, redirect: str | None = None) -> None:
        self.requests: list[tuple[str, str, dict[str, str]]] = []
        target = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length).decode() if length else ""
                target.requests.append((self.command, body, dict(self.headers)))
                if redirect:
                    self.send_response(302)
                    self.send_header("Location", redirect)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                payload = json.dumps({"received": self.command, "body": body}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = _answer  # noqa: N815

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(5)


@pytest.fixture(scope="module")
def targets() -> Iterator[dict[str, Target]]:
    denied = Target()
    allowed = Target()
    bouncer = Target(redirect=f"http://127.0.0.1:{denied.port}/secret")
    yield {"allowed": allowed, "denied": denied, "bouncer": bouncer}
    for t in (allowed, denied, bouncer):
        t.close()


@pytest.fixture(scope="module")
def closed_port() -> int:
    """An allowed port where nothing listens: every call to it fails to connect."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def hooked(
    tmp_path_factory: pytest.TempPathFactory, targets: dict[str, Target], closed_port: int
) -> Iterator[Server]:
    allow = ",".join(
        f"127.0.0.1:{port}"
        for port in (targets["allowed"].port, targets["bouncer"].port, closed_port)
    )
    with running_server(
        tmp_path_factory.mktemp("hooks"), env={"HANSA_OUTBOUND_ALLOW": allow}
    ) as server:
        yield server


def _call(
    client: httpx.Client, cid: str, url: str, method: str = "GET", **extra: Any
) -> httpx.Response:
    return client.post(
        "/api/assistant/execute",
        json={
            "conversationId": cid,
            "createdByAgentId": "notificationAgent",
            "taskType": "webhook.call",
            "parameters": {"url": url, "method": method, **extra},
        },
    )


def test_a_call_to_an_allowed_local_target_works(
    hooked: Server, targets: dict[str, Target]
) -> None:
    allowed = targets["allowed"]
    with hooked.client() as client:
        cid = new_conversation(client)
        got = _call(client, cid, f"http://127.0.0.1:{allowed.port}/hook")
        posted = _call(
            client,
            cid,
            f"http://127.0.0.1:{allowed.port}/hook",
            "POST",
            body={"event": "page_published"},
        )
        waiting = len(allowed.requests)
        confirmed = client.post(
            f"/api/tasks/{posted.json()['taskId']}/confirm",
            json={"parametersHash": posted.json()["parametersHash"]},
        )
        task = _settled(client, posted.json()["taskId"])
    assert got.status_code == 200 and got.json()["status"] == "completed"
    assert got.json()["details"]["statusCode"] == 200
    assert got.json()["details"]["body"]["received"] == "GET"
    assert posted.status_code == 202, "a POST cannot be taken back: it needs consent first"
    assert waiting == 1, "nothing was sent before the confirmation"
    assert confirmed.status_code == 200
    assert task["status"] == "completed" and task["result"]["statusCode"] == 200
    method, body, headers = allowed.requests[-1]
    assert method == "POST" and json.loads(body) == {"event": "page_published"}
    assert headers.get("Idempotency-Key") == f"hansa-{task['id']}"


def _settled(client: httpx.Client, task_id: str) -> dict:
    for _ in range(200):
        task = client.get(f"/api/tasks/{task_id}").json()
        if task["status"] in ("completed", "failed", "cancelled", "ambiguous"):
            return task
        threading.Event().wait(0.05)
    raise AssertionError(f"task {task_id} did not settle")


@pytest.mark.parametrize(
    "host",
    [
        "localhost",
        "[::ffff:127.0.0.1]",
        "2130706433",
        "0x7f000001",
        "127.1",
        "[::1]",
    ],
)
def test_loopback_in_other_spellings_is_refused(
    hooked: Server, targets: dict[str, Target], host: str
) -> None:
    allowed = targets["allowed"]
    before = len(allowed.requests)
    with hooked.client() as client:
        cid = new_conversation(client)
        response = _call(client, cid, f"http://{host}:{allowed.port}/hook")
    assert response.status_code == 200
    assert response.json()["status"] == "failed"
    assert response.json()["details"]["error"]["code"] == "outbound_denied"
    assert len(allowed.requests) == before, "nothing reached the server"


def test_the_metadata_address_is_refused(hooked: Server) -> None:
    with hooked.client() as client:
        cid = new_conversation(client)
        response = _call(client, cid, "http://169.254.169.254/latest/meta-data/")
    assert response.json()["status"] == "failed"
    assert response.json()["details"]["error"]["code"] == "outbound_denied"


def test_a_redirect_to_a_denied_target_is_refused(
    hooked: Server, targets: dict[str, Target]
) -> None:
    with hooked.client() as client:
        cid = new_conversation(client)
        response = _call(client, cid, f"http://127.0.0.1:{targets['bouncer'].port}/start")
    assert response.json()["status"] == "failed"
    assert response.json()["details"]["error"]["code"] == "outbound_denied"
    assert len(targets["bouncer"].requests) >= 1, "the allowed hop was made"
    assert targets["denied"].requests == [], "nothing reached the denied server"


def test_an_unreachable_target_is_retried_after_a_backoff_then_fails(
    hooked: Server, closed_port: int
) -> None:
    with hooked.client() as client:
        cid = new_conversation(client)
        response = _call(client, cid, f"http://127.0.0.1:{closed_port}/hook")
        task_id = response.json()["taskId"]
        task = _settled(client, task_id)
        events = events_until(
            client, cid, lambda e: e["taskId"] == task_id and e["data"].get("status") == "failed"
        )
    moves = [e for e in events if e["type"] == "task_status" and e["taskId"] == task_id]
    statuses = [e["data"]["status"] for e in moves]
    assert statuses == ["in_progress", "open", "in_progress", "open", "in_progress", "failed"]
    for retry, again in zip(moves, moves[1:], strict=False):
        if retry["data"]["status"] != "open":
            continue
        retry_at = datetime.fromisoformat(retry["data"]["retryAt"])
        assert retry_at - datetime.fromisoformat(retry["createdAt"]) >= timedelta(seconds=0.4)
        assert datetime.fromisoformat(again["createdAt"]) >= retry_at, "the backoff was kept"
    retried = [e for e in events if e["type"] == "thinking" and "Retrying" in e["data"]["summary"]]
    assert len(retried) == 2
    assert task["status"] == "failed" and task["attempts"] == 3
    assert task["scheduledAt"] is None, "no backoff is left once the task stopped"
    assert response.json()["details"]["error"]["code"] == "connection_failed"
