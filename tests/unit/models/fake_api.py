"""A real HTTP server on 127.0.0.1 that plays a model provider's API from queued replies.

Tests queue what the provider answers (a JSON body, an error status, or a stream
of server-sent events), point the official SDK at ``server.url``, and read back
what the SDK sent (``server.requests``). Nothing leaves the machine.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Reply:
    """One answer: a JSON body with a status, or (``events`` set) an SSE stream."""

    status: int = 200
    body: Any = None
    events: list[tuple[str | None, Any]] | None = None
    """``(event name or None, data)`` pairs; data is JSON-encoded unless it is a str."""


@dataclass(frozen=True)
class Request:
    """What the SDK sent."""

    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class FakeAPI:
    """The server's state: replies still to give and requests received."""

    url: str = ""
    replies: deque[Reply] = field(default_factory=deque)
    requests: list[Request] = field(default_factory=list)

    def reply(self, *replies: Reply) -> None:
        """Queue ``replies``, given one per request in order."""
        self.replies.extend(replies)

    @property
    def last_body(self) -> Any:
        """The JSON body of the last request."""
        return self.requests[-1].body


def openai_chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    """One ``chat.completion.chunk`` of an OpenAI stream carrying ``delta``."""
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "gpt-4o-mini-2024-07-18",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def _handler(api: FakeAPI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = json.loads(self.rfile.read(length) or b"null")
            headers = {k.lower(): v for k, v in self.headers.items()}
            api.requests.append(Request(self.path, headers, body))
            if not api.replies:
                self._json(500, {"error": {"type": "fake", "message": "no reply queued"}})
                return
            reply = api.replies.popleft()
            if reply.events is None:
                self._json(reply.status, reply.body)
                return
            self.send_response(reply.status)
            self.send_header("content-type", "text/event-stream")
            self.end_headers()
            for event, data in reply.events:
                text = data if isinstance(data, str) else json.dumps(data)
                frame = (f"event: {event}\n" if event else "") + f"data: {text}\n\n"
                self.wfile.write(frame.encode())
                self.wfile.flush()

        def _json(self, status: int, body: Any) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep test output clean

    return Handler


@contextmanager
def serving() -> Iterator[FakeAPI]:
    """A started fake API on a free port; stopped on exit."""
    api = FakeAPI()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(api))
    server.daemon_threads = True
    api.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(
        target=server.serve_forever, args=(0.02,), name="fake-model-api", daemon=True
    )
    thread.start()
    try:
        yield api
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
