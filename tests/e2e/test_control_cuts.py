"""Control that stops work: a preempt or a cancel cuts the executing step of a reversible
task at once (its executor sees the cancellation); an irreversible call in flight is never
cut off midway."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from harness import Server, events_until, new_conversation, run_done, running_server, waits

LONG = 30.0
"""How long the cut steps would take if they ran out."""


class SlowTarget:
    """A local HTTP server whose answers take ``SLOW`` seconds; it counts finished answers."""

    SLOW = 1.5

    def __init__(self) -> None:
        self.started = threading.Event()
        self.finished = 0
        target = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length", 0)))
                target.started.set()
                time.sleep(SlowTarget.SLOW)
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.end_headers()
                self.wfile.write(b'{"ok": true}')
                target.finished += 1

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def target() -> Iterator[SlowTarget]:
    found = SlowTarget()
    yield found
    found.close()


@pytest.fixture(scope="module")
def server(target: SlowTarget, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    allow = target.url.split("/")[2]
    with running_server(
        tmp_path_factory.mktemp("cuts"), env={"HANSA_OUTBOUND_ALLOW": allow}
    ) as server:
        yield server


def _started(client: httpx.Client, cid: str, run: dict[str, Any]) -> str:
    client.post(f"/api/runs/{run['id']}/approve")
    first: str = run["groups"][0]["tasks"][0]["id"]
    events_until(
        client,
        cid,
        lambda e: (
            e["type"] == "task_status"
            and e["taskId"] == first
            and e["data"]["status"] == "in_progress"
        ),
    )
    return first


def _run(client: httpx.Client, cid: str, tasks: list[dict[str, Any]]) -> dict[str, Any]:
    created = client.post("/api/runs", json={"conversationId": cid, "title": "C", "tasks": tasks})
    assert created.status_code == 201, created.text
    run: dict[str, Any] = created.json()
    return run


def test_a_preempt_cuts_the_running_step_and_the_run_goes_on(server: Server) -> None:
    with server.client() as client:
        cid = new_conversation(client)
        run = _run(client, cid, waits("A", "B", seconds=LONG)[:1] + waits("B"))
        first = _started(client, cid, run)
        cut_at = time.monotonic()
        client.post(f"/api/tasks/{first}/preempt")
        events_until(client, cid, run_done(run["id"]))
        took = time.monotonic() - cut_at
        card = client.get(f"/api/runs/{run['id']}").json()

    assert took < LONG / 3, f"the run waited for the preempted step ({took:.1f} s)"
    assert card["status"] == "completed"
    assert [g["tasks"][0]["status"] for g in card["groups"]] == ["cancelled", "completed"]


def test_a_cancel_cuts_every_running_step(server: Server) -> None:
    with server.client() as client:
        cid = new_conversation(client)
        run = _run(client, cid, waits("A", seconds=LONG) + waits("A", seconds=LONG))
        _started(client, cid, run)
        ids = {t["id"] for t in run["groups"][0]["tasks"]}
        cut_at = time.monotonic()
        client.post(f"/api/runs/{run['id']}/cancel")
        cut: set[str] = set()

        def both_cut(e: dict[str, Any]) -> bool:
            if e["type"] == "task_status" and e["data"]["status"] == "cancelled":
                cut.add(e["taskId"])
            return cut == ids

        events_until(client, cid, both_cut)
        took = time.monotonic() - cut_at
        card = client.get(f"/api/runs/{run['id']}").json()

    assert took < LONG / 3, f"the cut steps ran on ({took:.1f} s)"
    assert card["status"] == "cancelled"
    assert {t["status"] for t in card["groups"][0]["tasks"]} == {"cancelled"}


def test_an_irreversible_call_in_flight_is_never_cut(
    server: Server, target: SlowTarget, tmp_path: Path
) -> None:
    hook = {
        "stepGroup": "A",
        "taskType": "webhook.call",
        "parameters": {"url": target.url, "method": "POST", "body": {"n": 1}},
        "createdByAgentId": "technicalLead",
    }
    with server.client() as client:
        cid = new_conversation(client)
        run = _run(client, cid, [hook])
        task = run["groups"][0]["tasks"][0]
        client.post(f"/api/runs/{run['id']}/approve")
        confirmed = client.post(
            f"/api/tasks/{task['id']}/confirm", json={"parametersHash": task["parametersHash"]}
        )
        assert confirmed.status_code == 200, confirmed.text
        assert target.started.wait(20)
        client.post(f"/api/tasks/{task['id']}/preempt")
        events_until(client, cid, run_done(run["id"]))

    assert target.finished == 1  # the call ran to its end; nothing was cut midway


def test_control_events_map_onto_the_operations(server: Server) -> None:
    with server.client() as client:
        cid = new_conversation(client)
        run = _run(client, cid, waits("A", "B", seconds=LONG)[:1] + waits("B"))
        first = _started(client, cid, run)
        paused = client.post("/api/control", json={"event": "stream.pause", "runId": run["id"]})
        resumed = client.post("/api/control", json={"event": "stream.resume", "runId": run["id"]})
        preempted = client.post("/api/control", json={"event": "stream.preempt", "taskId": first})
        events_until(client, cid, run_done(run["id"]))
        handed = client.post(
            "/api/control", json={"event": "stream.handoff", "conversationId": cid}
        )
        state = client.get(f"/api/conversations/{cid}").json()["state"]
        missing = client.post("/api/control", json={"event": "stream.cancel"})
        unknown = client.post("/api/control", json={"event": "stream.explode", "runId": "x"})

    assert paused.json()["status"] == "paused" and resumed.json()["status"] == "running"
    assert preempted.json() == {"event": "stream.preempt", "taskId": first, "status": "cancelled"}
    assert handed.status_code == 200 and handed.json()["status"] == "pending"
    assert state == "handoff_pending"
    assert missing.status_code == 422 and "needs runId" in missing.text
    assert unknown.status_code == 422


def test_control_events_are_taken_as_websocket_frames(server: Server) -> None:
    import json

    from websockets.sync.client import connect

    with server.client() as client:
        cid = new_conversation(client)
        run = _run(client, cid, waits("A", seconds=LONG))
        _started(client, cid, run)
    url = server.url.replace("http://", "ws://") + f"/api/conversations/{cid}/ws?after=0"
    answers: list[dict[str, Any]] = []
    with connect(url, open_timeout=10) as ws:
        for frame in (
            {"type": "stream.pause", "runId": run["id"]},
            {"type": "stream.cancel", "runId": run["id"]},
            {"type": "stream.explode"},
        ):
            ws.send(json.dumps(frame))
            while True:
                got = json.loads(ws.recv(timeout=30))
                if got.get("type") in ("control", "error"):
                    answers.append(got)
                    break
    with server.client() as client:
        status = client.get(f"/api/runs/{run['id']}").json()["status"]

    assert answers[0]["event"] == "stream.pause" and answers[0]["status"] == "paused"
    assert answers[1]["event"] == "stream.cancel" and answers[1]["status"] == "cancelled"
    assert answers[2]["type"] == "error"
    assert status == "cancelled"
