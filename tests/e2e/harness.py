"""Start the real server as a process and talk to it over HTTP, SSE and WebSocket."""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from httpx_sse import connect_sse

from hansa.client import Client, Posted

TABLES = (
    "tenants",
    "projects",
    "assistant_conversations",
    "assistant_messages",
    "assistant_agent_definitions",
    "assistant_turns",
    "events",
    "jobs",
    "llm_calls",
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    url: str
    db_path: Path
    process: subprocess.Popen[bytes]
    log_path: Path

    def client(self, **kwargs: Any) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=kwargs.pop("timeout", 60), **kwargs)

    def row_counts(self) -> dict[str, int]:
        with sqlite3.connect(f"file:{self.db_path}?mode=ro", uri=True) as conn:
            return {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)


@contextmanager
def running_server(
    tmp: Path,
    model: str = "scripted",
    *,
    env: dict[str, str] | None = None,
    extra_args: tuple[str, ...] = (),
    ready_seconds: float = 60,
    database_url: str | None = None,
    hansa: tuple[str, ...] = (sys.executable, "-m", "hansa"),
    cwd: Path | None = None,
) -> Iterator[Server]:
    """A ``hansa serve`` process (``hansa``: the command that runs it) on a free port."""
    port = free_port()
    db_path = tmp / "hansa.db"
    log_path = tmp / f"server-{port}.log"
    args = [
        *hansa,
        "serve",
        "--port",
        str(port),
        "--database-url",
        database_url or f"sqlite:///{db_path}",
        "--model",
        model,
        *extra_args,
    ]
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            args,
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, **(env or {})},
            cwd=cwd,
        )
    server = Server(f"http://127.0.0.1:{port}", db_path, proc, log_path)
    deadline = time.monotonic() + ready_seconds
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited {proc.returncode}:\n{log_path.read_text()}")
        try:
            if httpx.get(server.url + "/healthz", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            server.stop()
            raise RuntimeError(f"server not ready:\n{log_path.read_text()}")
        time.sleep(0.1)
    try:
        yield server
    finally:
        server.stop()


def api(client: httpx.Client) -> Client:
    """The public Python client (``hansa.client``) over the test's HTTP client: the e2e
    tests that need only the public API use it."""
    return Client(http=client)


def new_conversation(client: httpx.Client, **body: Any) -> str:
    return str(api(client).create_conversation(**body)["id"])


def wordpress_project(client: httpx.Client, **extra: Any) -> str:
    """A project whose context says WordPress, not connected: its changes land in the
    workspace, a choice made once for the project (``config.workspaceDrafts``)."""
    body = {
        "name": "Aquaverter",
        "domain": "aquaverter.ca",
        "cmsPlatform": "wordpress",
        "config": {"workspaceDrafts": True},
        **extra,
    }
    response = client.post("/api/projects", json=body)
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def execute_task(
    client: httpx.Client, cid: str, agent: str, task_type: str, params: dict[str, Any], **extra: Any
) -> dict[str, Any]:
    """``POST /api/assistant/execute``, which must complete; the task's details."""
    response = client.post(
        "/api/assistant/execute",
        json={
            "conversationId": cid,
            "createdByAgentId": agent,
            "taskType": task_type,
            "parameters": params,
            **extra,
        },
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["status"] == "completed", body
    return dict(body["details"])


def post(client: httpx.Client, cid: str, content: str, **extra: Any) -> Posted:
    return api(client).post_message(cid, content, **extra)


def stream(
    client: httpx.Client,
    cid: str,
    *,
    after: int = 0,
    last_event_id: int | None = None,
    turn_id: str | None = None,
    until_done: bool = True,
) -> list[dict[str, Any]]:
    """SSE events (with their SSE ids) until the ``done`` of ``turn_id`` (or the next ``done``)."""
    headers = {} if last_event_id is None else {"Last-Event-ID": str(last_event_id)}
    params: dict[str, Any] = {"after": after}
    if until_done and turn_id is None:
        params["until"] = "done"
    out: list[dict[str, Any]] = []
    path = f"/api/conversations/{cid}/events"
    with connect_sse(client, "GET", path, params=params, headers=headers) as source:
        assert source.response.status_code == 200
        for sse in source.iter_sse():
            if not sse.data:  # a keep-alive comment
                continue
            ev = json.loads(sse.data)
            assert sse.id == str(ev["seq"]) and sse.event == ev["type"]
            out.append(ev)
            if ev["type"] == "done" and (turn_id is None or ev["turnId"] == turn_id):
                break
    return out


def events_until(
    client: httpx.Client, cid: str, stop: Any, *, after: int = 0, timeout: float = 60
) -> list[dict[str, Any]]:
    """SSE events after ``after`` until ``stop(event)`` is true (inclusive)."""
    out: list[dict[str, Any]] = []
    path = f"/api/conversations/{cid}/events"
    deadline = time.monotonic() + timeout
    with connect_sse(client, "GET", path, params={"after": after}) as source:
        for sse in source.iter_sse():
            if time.monotonic() > deadline:
                raise TimeoutError(f"no matching event within {timeout} s; saw {len(out)}")
            if not sse.data:
                continue
            ev = json.loads(sse.data)
            out.append(ev)
            if stop(ev):
                break
    return out


def poll_until(
    client: httpx.Client, path: str, ok: Any, *, seconds: float = 30, every: float = 0.05
) -> dict[str, Any]:
    """GET ``path`` until ``ok(answer)``; the answer (fails with the last one at ``seconds``)."""
    deadline = time.monotonic() + seconds
    while True:
        answer: dict[str, Any] = client.get(path).json()
        if ok(answer):
            return answer
        assert time.monotonic() < deadline, f"{path} never got there: {answer}"
        time.sleep(every)


def run_done(run_id: str) -> Any:
    """A stop condition: the ``done`` that ends run ``run_id``."""
    return lambda ev: ev["type"] == "done" and ev["runId"] == run_id


def turn(client: httpx.Client, cid: str, content: str, **extra: Any) -> list[dict[str, Any]]:
    """Post a message and return the events of its turn, through its ``done`` (the public
    client's event stream, which resumes with ``Last-Event-ID`` if it drops)."""
    public = api(client)
    posted = public.post_message(cid, content, **extra)
    turn_id = posted["turnId"]
    events = public.events(cid, after=posted["seq"] - 1, until_done=turn_id)
    return [e for e in events if e["turnId"] == turn_id]


def hans_says(events: list[dict[str, Any]]) -> list[str]:
    """The assistant messages among ``events``."""
    return [
        e["data"]["content"]
        for e in events
        if e["type"] == "message" and e["data"]["kind"] == "assistant"
    ]


@contextmanager
def running_worker(
    tmp: Path,
    database_url: str,
    model: str = "scripted",
    *,
    env: dict[str, str] | None = None,
    extra_args: tuple[str, ...] = (),
) -> Iterator[subprocess.Popen[bytes]]:
    """A ``hansa worker`` process (no HTTP) on the shared database."""
    log_path = tmp / f"worker-{time.monotonic_ns()}.log"
    args = [
        sys.executable,
        "-m",
        "hansa",
        "worker",
        "--database-url",
        database_url,
        "--model",
        model,
        *extra_args,
    ]
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            args, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})}
        )
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)


FAST = {"HANSA_LEASE_SECONDS": "2", "HANSA_POLL_SECONDS": "0.2"}
"""Short leases and polls, for tests where workers die and others take over."""


def waits(*groups: str, seconds: float = 0.0) -> list[dict[str, Any]]:
    """Run tasks (the body of ``POST /api/runs``): one ``wait`` per group letter given."""
    return [
        {
            "stepGroup": g,
            "taskType": "wait",
            "parameters": {"seconds": seconds},
            "createdByAgentId": "schedulerAgent",
        }
        for g in groups
    ]
