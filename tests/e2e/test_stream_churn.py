"""Streams opened and closed many times leave nothing behind (issue 35 item 2).

SSE and WebSocket subscribers that close politely and ones that vanish (a TCP reset right
after the handshake): afterwards the process follows no conversation (``/metrics``:
``hansa_live_streams`` and ``hansa_followed_conversations`` back to 0) and the
per-conversation stream limit counts none of them (as many streams as it allows open again).
"""

from __future__ import annotations

import re
import socket
import struct
import time
from pathlib import Path
from urllib.parse import urlsplit

import httpx
from websockets.sync.client import connect

from harness import Server, new_conversation, running_server

PER_CONVERSATION = 2
CHURNED = 24


def _gauges(client: httpx.Client) -> dict[str, float]:
    text = client.get("/metrics").text
    found = re.findall(r"^(hansa_live_streams|hansa_followed_conversations) (\S+)$", text, re.M)
    return {name: float(value) for name, value in found}


def _wait_for_gauges(client: httpx.Client, streams: int, followed: int) -> dict[str, float]:
    deadline = time.monotonic() + 30
    while True:
        seen = _gauges(client)
        want = {"hansa_live_streams": streams, "hansa_followed_conversations": followed}
        if seen == want:
            return seen
        assert time.monotonic() < deadline, f"gauges stayed at {seen}, expected {want}"
        time.sleep(0.05)


def _reset_after_handshake(server: Server, path: str) -> None:
    """Ask for a stream on a raw socket, read the answer's head, then reset the connection."""
    where = urlsplit(server.url)
    with socket.create_connection((where.hostname, where.port), timeout=30) as sock:
        head = f"GET {path} HTTP/1.1\r\nHost: {where.netloc}\r\n"
        if "/ws" in path:
            head += (
                "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
            )
        sock.sendall((head + "\r\n").encode())
        answer = b""
        while b"\r\n\r\n" not in answer:
            chunk = sock.recv(4096)
            assert chunk, f"{path}: the server closed first: {answer!r}"
            answer += chunk
        status = answer.split(b"\r\n", 1)[0]
        assert (b" 101 " if "/ws" in path else b" 200 ") in status, status
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))


def test_streams_that_close_or_vanish_leave_no_subscriber_behind(tmp_path: Path) -> None:
    env = {"HANSA_MAX_SUBSCRIBERS_PER_CONVERSATION": str(PER_CONVERSATION)}
    with running_server(tmp_path, env=env) as server, server.client() as client:
        cids = [new_conversation(client) for _ in range(3)]
        ws_base = server.url.replace("http://", "ws://")

        with client.stream("GET", f"/api/conversations/{cids[0]}/events") as held:
            assert held.status_code == 200
            _wait_for_gauges(client, streams=1, followed=1)  # the gauges do count

        for i in range(CHURNED):
            cid = cids[i % len(cids)]
            way = i % 4
            if way == 0:
                with client.stream("GET", f"/api/conversations/{cid}/events") as source:
                    assert source.status_code == 200
            elif way == 1:
                _reset_after_handshake(server, f"/api/conversations/{cid}/events")
            elif way == 2:
                with connect(f"{ws_base}/api/conversations/{cid}/ws", open_timeout=10):
                    pass
            else:
                _reset_after_handshake(server, f"/api/conversations/{cid}/ws")

        _wait_for_gauges(client, streams=0, followed=0)
        with (
            client.stream("GET", f"/api/conversations/{cids[1]}/events") as first,
            client.stream("GET", f"/api/conversations/{cids[1]}/events") as second,
        ):
            assert (first.status_code, second.status_code) == (200, 200)
            _wait_for_gauges(client, streams=PER_CONVERSATION, followed=1)
