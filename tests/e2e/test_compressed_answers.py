"""Outside answers are capped by what they decompress to (security review 2026-11-27, M1):
an allow-listed MCP server answering a gzip body of hundreds of MiB (a few hundred KB on
the wire) took Hansa from 167 MB to 1.7 GB. Here a local listener answers every request
with 64 MiB of JSON gzipped to about 64 KB, whatever the request asked for."""

from __future__ import annotations

import gzip
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from apikeys import bearer, create_key

from harness import Server, new_conversation, running_server

DECOMPRESSED = 64 * 1024 * 1024
BOMB = gzip.compress(b'{"x": "' + b"A" * DECOMPRESSED + b'"}', compresslevel=9)


class _Bomb(BaseHTTPRequestHandler):
    def _answer(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        self.rfile.read(length)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Encoding", "gzip")  # though Hansa asks for identity
        self.send_header("Content-Length", str(len(BOMB)))
        self.end_headers()
        self.wfile.write(BOMB)

    do_GET = do_POST = _answer

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass


@pytest.fixture(scope="module")
def bomb() -> Iterator[int]:
    listener = ThreadingHTTPServer(("127.0.0.1", 0), _Bomb)
    thread = threading.Thread(target=listener.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(listener.server_address[1])
    finally:
        listener.shutdown()
        listener.server_close()


def _peak_rss_kb(server: Server) -> int:
    status = Path(f"/proc/{server.process.pid}/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM")))


def _probe(server: Server, until: threading.Event, seen: list[float]) -> threading.Thread:
    def watch() -> None:
        with server.client(timeout=30) as c:
            while not until.is_set():
                started = time.perf_counter()
                assert c.get("/healthz").status_code == 200
                seen.append(time.perf_counter() - started)
                time.sleep(0.005)

    thread = threading.Thread(target=watch, name="healthz probe")
    thread.start()
    return thread


def test_mcp_and_webhook_answers_stop_at_the_cap(tmp_path: Path, bomb: int) -> None:
    assert len(BOMB) < 200_000
    env = {"HANSA_OUTBOUND_ALLOW": f"127.0.0.1:{bomb}"}
    with running_server(tmp_path, env=env) as server:
        admin, member = create_key(server, "tb", "admin"), create_key(server, "tb", "member")
        with server.client(headers=bearer(admin)) as c:
            servers = [{"name": "b", "transport": "http", "url": f"http://127.0.0.1:{bomb}/mcp"}]
            made = c.post("/api/projects", json={"name": "B", "config": {"mcpServers": servers}})
            assert made.status_code == 201, made.text
        before = _peak_rss_kb(server)
        done, latencies = threading.Event(), list[float]()
        prober = _probe(server, done, latencies)
        with server.client(headers=bearer(member), timeout=60) as c:
            started = time.monotonic()
            listed = [c.get(f"/api/projects/{made.json()['id']}/mcp-tools") for _ in range(3)]
            took = time.monotonic() - started
            cid = new_conversation(c)
            called = c.post(
                "/api/assistant/execute",
                json={
                    "conversationId": cid,
                    "createdByAgentId": "notificationAgent",
                    "taskType": "webhook.call",
                    "parameters": {"url": f"http://127.0.0.1:{bomb}/hook", "method": "GET"},
                },
            )
        done.set()
        prober.join()
        grown_mb = (_peak_rss_kb(server) - before) / 1024
    for response in listed:
        assert response.status_code == 200, response.text
        (entry,) = response.json()["servers"]
        assert entry["tools"] == [] and entry["error"] is not None, entry
        assert "larger than 1048576 bytes" in entry["error"]["message"], entry["error"]
    assert took < 15, f"three listings took {took:.1f} s"
    assert called.status_code == 200, called.text
    assert called.json()["status"] == "failed"
    assert called.json()["details"]["error"]["code"] == "response_too_large", called.json()
    assert grown_mb < 100, f"peak RSS grew {grown_mb:.0f} MB for a {len(BOMB)}-byte answer"
    assert latencies and max(latencies) < 0.5, max(latencies)
