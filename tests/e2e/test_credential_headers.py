"""Every outbound header is a secret unless it is a plain one, and ``?code=`` is a secret
name (security review 2026-11-27, L1): ``X-Auth-Key``, ``Ocp-Apim-Subscription-Key``,
``X-Functions-Key``, ``Authentication`` and ``?code=`` were shown in ``GET /api/tasks/{id}``
and stored unsealed with ``HANSA_SECRET_KEY`` set."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from apikeys import bearer, create_key
from cryptography.fernet import Fernet

from harness import new_conversation, running_server

HEADERS = {
    "X-Auth-Key": "CANARY-XAUTHKEY",
    "Ocp-Apim-Subscription-Key": "CANARY-OCP",
    "X-Functions-Key": "CANARY-FUNC",
    "Authentication": "CANARY-AUTHN",
    "X-Session": "CANARY-SESSION",
}
CODE = "CANARY-CODE"


class _Listener(BaseHTTPRequestHandler):
    seen: list[dict[str, str]] = []

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        self.seen.append({**dict(self.headers), "path": self.path})
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b'{"ok": true}')

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass


@pytest.fixture
def listener() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Listener)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()


def test_credential_headers_are_masked_and_sealed(tmp_path: Path, listener: int) -> None:
    env = {
        "HANSA_OUTBOUND_ALLOW": f"127.0.0.1:{listener}",
        "HANSA_SECRET_KEY": Fernet.generate_key().decode(),
    }
    url = f"http://127.0.0.1:{listener}/hook?code={CODE}&page=2"
    with running_server(tmp_path, env=env) as server:
        key = create_key(server, "acme", "admin")
        with server.client(headers=bearer(key)) as c:
            cid = new_conversation(c)
            headers = {**HEADERS, "Accept": "application/json"}
            done = c.post(
                "/api/assistant/execute",
                json={
                    "conversationId": cid,
                    "createdByAgentId": "notificationAgent",
                    "taskType": "webhook.call",
                    "parameters": {"url": url, "method": "GET", "headers": headers},
                },
            )
            assert done.status_code == 200 and done.json()["status"] == "completed", done.text
            task = c.get(f"/api/tasks/{done.json()['taskId']}")
            timeline = c.get(f"/api/conversations/{cid}/timeline")
            graph = c.post(
                "/api/graphs",
                json={
                    "name": "g",
                    "components": [
                        {
                            "id": "s",
                            "type": "service.call",
                            "config": {"url": url.split("?")[0], "headers": {"X-Auth-Key": "x"}},
                        }
                    ],
                    "edges": [],
                },
            )
        stored = b"".join(p.read_bytes() for p in tmp_path.glob("hansa.db*") if p.is_file())
    (received,) = _Listener.seen[-1:]
    assert all(received[name] == value for name, value in HEADERS.items()), "they were sent"
    assert received["path"].endswith(f"code={CODE}&page=2")
    shown = task.json()["parameters"]
    assert shown["headers"] == {**{n: "***" for n in HEADERS}, "Accept": "application/json"}
    assert shown["url"].endswith("code=***&page=2")
    for canary in (*HEADERS.values(), CODE):
        assert canary not in task.text and canary not in timeline.text, canary
    for canary in HEADERS.values():
        assert canary.encode() not in stored, f"{canary} stored in clear"
    assert graph.status_code == 422, graph.text
    assert "credential" in graph.text
