"""Failures and slow clients, through the real app in this process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
import sqlalchemy as sa

from hansa.api.routes.stream import WS_SEND_TIMED_OUT
from hansa.domain.job import JobKind
from hansa.domain.session import AgentSession, SessionStatus
from hansa.store import queue, sessions, tables
from inprocess.asgi import Hansa, running_app

pytestmark = pytest.mark.anyio


async def test_an_unexpected_error_answers_in_the_error_shape_and_frees_its_key(
    hansa: Hansa,
) -> None:
    calls = 0

    async def boom() -> None:
        nonlocal calls
        calls += 1
        raise RuntimeError("a bug")

    hansa.app.add_api_route("/api/boom", boom, methods=["POST"])
    routes = hansa.app.router.routes
    routes.insert(0, routes.pop())  # before the panel, mounted at /
    transport = httpx.ASGITransport(app=hansa.app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://hansa.test") as client:
        headers = {"Idempotency-Key": "boom-1"}
        first = await client.post("/api/boom", json={}, headers=headers)
        retried = await client.post("/api/boom", json={}, headers=headers)
    for response in (first, retried):
        assert response.status_code == 500
        assert response.json()["error"]["code"] == "internal_error"
        assert "a bug" not in response.text
    assert calls == 2, "the failed request's key was released: the retry ran again"


async def test_a_websocket_client_that_stops_reading_is_disconnected(tmp_path: Path) -> None:
    async with running_app(tmp_path, ws_send_timeout_seconds=0.3) as hansa:
        cid = await hansa.conversation()
        await hansa.turn(cid, "hello")  # events to replay at once
        closed: list[int] = []
        connected = False

        async def receive() -> dict[str, Any]:
            nonlocal connected
            if not connected:
                connected = True
                return {"type": "websocket.connect"}
            await anyio.sleep_forever()  # the client never says goodbye
            raise AssertionError

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "websocket.send":
                await anyio.sleep_forever()  # nor takes a frame
            if message["type"] == "websocket.close":
                closed.append(message["code"])

        scope = {
            "type": "websocket",
            "asgi": {"version": "3.0"},
            "scheme": "ws",
            "path": f"/api/conversations/{cid}/ws",
            "raw_path": f"/api/conversations/{cid}/ws".encode(),
            "query_string": b"",
            "root_path": "",
            "headers": [(b"host", b"hansa.test")],
            "client": ("127.0.0.1", 50000),
            "server": ("hansa.test", 80),
            "subprotocols": [],
        }
        with anyio.fail_after(5):  # without the send timeout: forever
            await hansa.app(scope, receive, send)
        assert closed == [WS_SEND_TIMED_OUT]


async def test_a_full_database_answers_503_with_retry_after_and_recovers(hansa: Hansa) -> None:
    """Review M8: SQLite's "database or disk is full" is an outage (503, Retry-After), not
    a 500; what was stored stays, and writes work again once there is room."""
    db = hansa.app.state.services.db
    cid = await hansa.conversation()
    pages = await db.write(lambda conn: conn.exec_driver_sql("PRAGMA page_count").scalar())
    await db.write(lambda conn: conn.exec_driver_sql(f"PRAGMA max_page_count={pages}"))
    path = f"/api/conversations/{cid}/messages"
    answers = []
    for n in range(40):  # each message is ~10 kB: the free pages run out quickly
        answers.append(await hansa.client.post(path, json={"content": f"{n} " + "x" * 10_000}))
        if answers[-1].status_code != 202:
            break
    refused = answers[-1]
    assert refused.status_code == 503, refused.text
    assert refused.json()["error"]["code"] == "database_unavailable"
    assert refused.json()["error"]["details"] == {"reason": "full"}
    assert int(refused.headers["Retry-After"]) > 0
    stored = await hansa.ok("GET", path)
    accepted = len(answers) - 1
    assert len([m for m in stored if m["kind"] == "user"]) == accepted, "nothing half-written"
    await db.write(lambda conn: conn.exec_driver_sql("PRAGMA max_page_count=1073741823"))
    await hansa.ok("POST", path, 202, json={"content": "room again"})


async def test_a_poison_job_ends_and_its_conversation_answers_the_next_message(
    hansa: Hansa,
) -> None:
    """Issue 15 item 4: a job whose handler fails outside its own care (here a payload that
    no longer parses) is retried, then failed with its error after ``max_attempts``; an
    ``error`` and a ``done`` reach its conversation, and the next message is answered."""
    services = hansa.app.state.services
    cid = await hansa.conversation()

    def poison(conn: Any) -> int:
        now = services.clock()
        payload = {"conversationId": cid}  # no turnId, no messageId: TurnJob cannot parse it
        return queue.enqueue(conn, "default", JobKind.TURN, payload, now, key=cid)

    poison_id = await services.db.write(poison)
    posted = await hansa.post(cid, "Are you there?")
    events = await hansa.follow(
        cid, lambda e: e["type"] == "done" and e["turnId"] == posted["turnId"]
    )
    gave_up = [e for e in events if e["type"] == "error" and e["data"]["code"] == "job_failed"]
    assert len(gave_up) == 1 and gave_up[0]["turnId"] is None
    kinds = [e["type"] for e in events]
    assert kinds.index("error") < kinds.index("routing"), "it ended before the next turn began"
    assert events[-1]["data"]["status"] == "completed"
    stored = await services.db.read(
        lambda conn: conn.execute(
            sa.select(tables.jobs.c.status, tables.jobs.c.attempts, tables.jobs.c.last_error).where(
                tables.jobs.c.id == poison_id
            )
        ).one()
    )
    assert stored.status == "failed" and stored.attempts == 3
    assert "ValidationError" in stored.last_error


async def test_a_poison_session_step_fails_its_session(hansa: Hansa) -> None:
    """A session step's job given up fails its session (reason ``job_failed``, with a
    ``session_status``): the session no longer stays ``running`` with no step to come."""
    services = hansa.app.state.services
    cid = await hansa.conversation()
    now = services.clock()
    session = AgentSession(
        id="ses_poison",
        tenant_id="default",
        agent_id="chief",
        conversation_id=cid,
        goal="watch the site",
        status=SessionStatus.RUNNING,
        iteration=0,
        step="start",
        state={},
        guidance=None,
        max_steps=10,
        max_runtime_seconds=None,
        next_run_at=None,
        reason=None,
        created_at=now,
        updated_at=now,
    )

    def poison(conn: Any) -> int:
        sessions.create(conn, session)
        payload = {"sessionId": session.id}  # no iteration: SessionStepJob cannot parse it
        return queue.enqueue(
            conn, "default", JobKind.SESSION_STEP, payload, now, key=f"session:{session.id}"
        )

    await services.db.write(poison)
    events = await hansa.follow(cid, lambda e: e["type"] == "session_status")

    assert events[-1]["data"] == {
        "sessionId": session.id,
        "status": "failed",
        "reason": "job_failed",
    }
    assert any(e["type"] == "error" and e["data"]["code"] == "job_failed" for e in events)
    stored = await services.db.read(lambda conn: sessions.get(conn, "default", session.id))
    assert stored.status is SessionStatus.FAILED and stored.reason == "job_failed"
