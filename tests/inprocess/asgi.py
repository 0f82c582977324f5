"""The real app in this process: ``create_app`` on SQLite in ``tmp_path``, driven over ASGI.

The e2e harness starts ``python -m hansa serve`` and talks HTTP; here the same app
runs inside the test's event loop, its lifespan started (database migrated, worker
running), and the test talks to it through ``httpx.ASGITransport``. Only the public
HTTP API is used, so these tests outlive rewrites of the engine's internals.

``ASGITransport`` returns a response once the app has sent all of it, which suits
every route but a live event stream: ``follow`` reads ``GET …/events`` frame by frame
from the ASGI app itself and hangs up once it has the event it waits for.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, MutableMapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import anyio
import httpx
from fastapi import FastAPI

from hansa.api.app import create_app
from hansa.models.base import ChatMessage, Model, ModelSettings, RequestParams
from hansa.models.function import FunctionModel
from hansa.settings import Settings

Event = dict[str, Any]
"""An event as the API sends it: ``{seq, type, conversationId, turnId, runId, …, data}``."""

WAIT_SECONDS = 10.0
"""The longest any wait here lasts; a healthy engine needs milliseconds."""

DRAFT_COPY = "Soft water for every home in Quebec.\nWe install and service softeners."
DRAFT_SEO = "Water softeners installed in Quebec by Aquaverter\nwater softeners, soft water"


def answer(messages: list[ChatMessage], settings: ModelSettings, params: RequestParams) -> str:
    """The default model's answers: a draft for a run's step, else a reply naming the request."""
    if params.purpose == "draft":
        own = "\n".join(m.content for m in messages if m.role == "system")  # instructions: last
        return DRAFT_SEO if "SEO brief" in own else DRAFT_COPY
    if params.purpose == "plan":
        return "{}"  # no usable plan: requests without a playbook get a plain answer
    asked = next((m.content for m in reversed(messages) if m.role == "user"), "")
    return f"FunctionModel replies to: {asked}"


def settings_for(tmp_path: Path, **overrides: Any) -> Settings:
    """Settings for an app on a fresh SQLite file, with short polls (as the e2e tests)."""
    values: dict[str, Any] = {
        "database_url": f"sqlite:///{tmp_path}/h.db",
        "model": "scripted",  # named only; the app is given its model object
        "poll_seconds": 0.05,
        "startup_retry_seconds": 0,
        "delta_flush_ms": 5,
        **overrides,
    }
    return Settings(**values)


@dataclass
class Hansa:
    """A started app and an HTTP client on it, with the steps tests repeat."""

    app: FastAPI
    client: httpx.AsyncClient

    async def ok(self, method: str, path: str, status: int = 200, **kwargs: Any) -> Any:
        """The JSON body of a request that must answer ``status``."""
        with anyio.fail_after(WAIT_SECONDS):
            response = await self.client.request(method, path, **kwargs)
        assert response.status_code == status, f"{method} {path}: {response.text}"
        return response.json()

    async def conversation(self, **body: Any) -> str:
        """A new conversation's id."""
        return str((await self.ok("POST", "/api/conversations", 201, json=body))["id"])

    async def wordpress_project(self) -> str:
        """A project whose context says WordPress, not connected: its changes land in the
        workspace, a choice made once for the project (``config.workspaceDrafts``)."""
        body = {
            "name": "Aquaverter",
            "domain": "aquaverter.ca",
            "cmsPlatform": "wordpress",
            "config": {"workspaceDrafts": True},
        }
        return str((await self.ok("POST", "/api/projects", 201, json=body))["id"])

    async def post(self, cid: str, content: str) -> dict[str, Any]:
        """Post a user message; ``{messageId, turnId, …}``."""
        path = f"/api/conversations/{cid}/messages"
        posted: dict[str, Any] = await self.ok("POST", path, 202, json={"content": content})
        return posted

    async def turn(self, cid: str, content: str) -> list[Event]:
        """Post a message and return its turn's events, through its ``done``."""
        posted = await self.post(cid, content)
        turn_id = posted["turnId"]
        events = await self.follow(
            cid, lambda e: e["type"] == "done" and e["turnId"] == turn_id, after=posted["seq"] - 1
        )
        return [e for e in events if e["turnId"] == turn_id]

    async def follow(
        self, cid: str, stop: Callable[[Event], bool], *, after: int = 0
    ) -> list[Event]:
        """Events after seq ``after``, read live, up to the first that ``stop`` accepts."""
        path = f"/api/conversations/{cid}/events"
        seen: list[Event] = []
        buffer = b""
        status = 0
        requested = False
        hung_up = anyio.Event()

        async def receive() -> dict[str, Any]:
            nonlocal requested
            if not requested:
                requested = True
                return {"type": "http.request", "body": b"", "more_body": False}
            await hung_up.wait()
            return {"type": "http.disconnect"}

        async def send(message: MutableMapping[str, Any]) -> None:
            nonlocal buffer, status
            if message["type"] == "http.response.start":
                status = message["status"]
            if message["type"] != "http.response.body" or hung_up.is_set():
                return
            buffer += message.get("body", b"")
            *frames, buffer = buffer.replace(b"\r\n", b"\n").split(b"\n\n")
            for frame in frames:
                data = [line[5:].strip() for line in frame.split(b"\n") if line[:5] == b"data:"]
                if data:  # not a keep-alive comment
                    seen.append(json.loads(b"\n".join(data)))
                    if stop(seen[-1]):
                        hung_up.set()
                        return
            if not message.get("more_body", False):
                hung_up.set()

        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "GET",
            "scheme": "http",
            "path": path,
            "raw_path": path.encode(),
            "query_string": urlencode({"after": after}).encode(),
            "root_path": "",
            "headers": [(b"host", b"hansa.test"), (b"accept", b"text/event-stream")],
            "client": ("127.0.0.1", 50000),
            "server": ("hansa.test", 80),
        }
        with anyio.fail_after(WAIT_SECONDS):
            async with anyio.create_task_group() as tg:
                tg.start_soon(self.app, scope, receive, send)
                await hung_up.wait()
                tg.cancel_scope.cancel()
        assert status == 200, f"GET {path}: {status} {buffer!r}"
        assert seen and stop(seen[-1]), f"the stream ended first; saw {[e['type'] for e in seen]}"
        return seen


@asynccontextmanager
async def running_app(
    tmp_path: Path, model: Model | None = None, **settings: Any
) -> AsyncIterator[Hansa]:
    """The app on SQLite in ``tmp_path`` with ``model`` (default: ``FunctionModel(answer)``),
    its lifespan started, and a client on it; stopped on exit."""
    app = create_app(settings_for(tmp_path, **settings), model=model or FunctionModel(answer))
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://hansa.test") as client:
            yield Hansa(app, client)


def of_type(events: list[Event], kind: str) -> list[Event]:
    """The events of one type."""
    return [e for e in events if e["type"] == kind]


def said(events: list[Event]) -> list[str]:
    """What the assistants said among ``events``."""
    return [
        e["data"]["content"] for e in of_type(events, "message") if e["data"]["kind"] == "assistant"
    ]


def sse_events(body: str) -> list[Event]:
    """The events of a whole Server-Sent Events body."""
    return [json.loads(line[5:]) for line in body.splitlines() if line.startswith("data:")]
