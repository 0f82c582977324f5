"""bench/soak_memory.py's client: conversations followed over SSE, and streams churned.

A ``Conversation`` follows its own SSE stream; ``resume`` closes it and opens a new one from
the last id seen (``Last-Event-ID``), as a client whose connection dropped does.
``churn_one`` opens one more stream on a conversation and closes it one of four ways: SSE or
WebSocket, politely (the client's close) or abruptly (a TCP reset right after the
handshake, as a client that vanishes does, written on a raw socket so that no library
closes it properly behind our back).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import socket
import struct
import uuid
from urllib.parse import urlsplit

import aiohttp

TURN_TIMEOUT_SECONDS = 120.0


class Conversation:
    """A conversation driven over HTTP, its events read from its own SSE stream."""

    def __init__(self, client: aiohttp.ClientSession) -> None:
        self.client = client
        self.id = ""
        self.turns = 0
        self.last_seq = 0
        self._done: dict[str, asyncio.Event] = {}
        self._reader: asyncio.Task[None] | None = None

    async def open(self) -> None:
        async with self.client.post("/api/conversations", json={}) as response:
            response.raise_for_status()
            self.id = (await response.json())["id"]
        await self._follow()

    async def _follow(self) -> None:
        opened = asyncio.Event()
        self._reader = asyncio.create_task(self._read(opened), name=f"sse {self.id}")
        await opened.wait()

    async def _read(self, opened: asyncio.Event) -> None:
        headers = {"Last-Event-ID": str(self.last_seq)} if self.last_seq else {}
        path = f"/api/conversations/{self.id}/events"
        async with self.client.get(path, headers=headers) as source:
            source.raise_for_status()
            opened.set()
            async for line in source.content:
                if line.startswith(b"data:"):
                    ev = json.loads(line[5:])
                    self.last_seq = max(self.last_seq, ev["seq"])
                    if ev["type"] == "done":
                        self._done.setdefault(ev["turnId"], asyncio.Event()).set()

    async def resume(self) -> None:
        """Drop the stream and follow again from the last id seen."""
        await self.close()
        await self._follow()

    async def turn(self) -> None:
        path = f"/api/conversations/{self.id}/messages"
        body = {"content": f"Improve our SEO, step {self.turns}"}
        turn_id = await _post_once(self.client, path, body)
        done = self._done.setdefault(turn_id, asyncio.Event())
        await asyncio.wait_for(done.wait(), TURN_TIMEOUT_SECONDS)
        del self._done[turn_id]
        self.turns += 1

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            await asyncio.gather(self._reader, return_exceptions=True)
            self._reader = None


async def _post_once(client: aiohttp.ClientSession, path: str, body: dict[str, str]) -> str:
    """POST a message, again with the same Idempotency-Key when a pooled connection the server
    had just closed (keep-alive) drops it; its turn id."""
    headers = {"Idempotency-Key": uuid.uuid4().hex}
    for attempt in range(5):
        try:
            async with client.post(path, json=body, headers=headers) as response:
                response.raise_for_status()
                return str((await response.json())["turnId"])
        except (aiohttp.ClientOSError, aiohttp.ServerDisconnectedError):
            if attempt == 4:
                raise
            await asyncio.sleep(0.1 * (attempt + 1))
    raise AssertionError("unreachable")


async def churn_one(
    client: aiohttp.ClientSession, base_url: str, target: Conversation, how: int
) -> None:
    """Open a stream on ``target`` and close it: ``how`` 0 SSE politely, 1 SSE abruptly,
    2 WebSocket politely, 3 WebSocket abruptly."""
    after = f"?after={target.last_seq}"
    if how == 0:
        path = f"/api/conversations/{target.id}/events{after}"
        async with client.get(path) as source:
            source.raise_for_status()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(source.content.readany(), 0.05)
    elif how == 2:
        async with client.ws_connect(f"/api/conversations/{target.id}/ws{after}") as ws:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(ws.receive(), 0.05)
    else:
        websocket = how == 3
        kind = "ws" if websocket else "events"
        await _reset_after_handshake(base_url, f"/api/conversations/{target.id}/{kind}{after}")


async def _reset_after_handshake(base_url: str, path: str) -> None:
    """Send a stream's request on a raw socket, read the answer's head, then reset."""
    parts = urlsplit(base_url)
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    upgrade = path.split("?", 1)[0].endswith("/ws")
    head = f"GET {path} HTTP/1.1\r\nHost: {parts.netloc}\r\n"
    if upgrade:
        key = base64.b64encode(os.urandom(16)).decode()
        head += (
            "Upgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
        )
    writer.write((head + "\r\n").encode())
    await writer.drain()
    status = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
    expected = b" 101 " if upgrade else b" 200 "
    if expected not in status.split(b"\r\n", 1)[0]:
        raise RuntimeError(f"{path}: {status.splitlines()[0]!r}")
    sock: socket.socket = writer.get_extra_info("socket")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()  # SO_LINGER 0: the kernel answers with RST, not FIN
