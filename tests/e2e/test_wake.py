"""The worker is woken by the store after any commit that queued a job (decision 0025),
never by hand: with the worker polling once a minute, a message is answered, a session
steps to its limit and a schedule fires in seconds, each job queued by the commit before."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest

from harness import Server, new_conversation, poll_until, running_server, turn

SLOW_POLL = {"HANSA_POLL_SECONDS": "60", "HANSA_SESSION_DEFAULT_EVERY_SECONDS": "0"}
"""A session's steps without a cadence (the default one, 1 s, makes each next step a due
time, which the poll finds: this test is about the wake after a commit)."""
SOON = 15.0
"""Seconds: far below the poll, far above a scripted job's work."""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with running_server(tmp_path_factory.mktemp("wake"), env=SLOW_POLL) as s:
        yield s


@pytest.fixture
def client(server: Server) -> Iterator[httpx.Client]:
    with server.client(timeout=30) as c:
        yield c


def test_a_message_is_answered_without_waiting_for_the_poll(client: httpx.Client) -> None:
    cid = new_conversation(client)
    started = time.monotonic()
    events = turn(client, cid, "Hello there")
    assert events[-1]["type"] == "done" and events[-1]["data"]["status"] == "completed"
    assert time.monotonic() - started < SOON


def test_a_sessions_steps_each_queue_the_next_and_wake_it(client: httpx.Client) -> None:
    body = {"agentId": "growthLead", "goal": "Check the site", "maxSteps": 3}
    started = time.monotonic()
    made = client.post("/api/agent-sessions", json=body)
    assert made.status_code == 201, made.text
    path = f"/api/agent-sessions/{made.json()['id']}"
    ended = poll_until(client, path, lambda s: s["status"] != "running", seconds=SOON)
    assert ended["reason"] == "max_steps" and ended["step"] == 3
    assert time.monotonic() - started < SOON


def test_a_schedule_fired_now_fires_at_once(client: httpx.Client) -> None:
    cid = new_conversation(client)
    action = {"type": "message", "conversationId": cid, "content": "Status?"}
    made = client.post(
        "/api/schedules", json={"name": "Now", "cron": "0 3 * * *", "action": action}
    )
    assert made.status_code == 201, made.text
    sid = made.json()["id"]
    assert client.post(f"/api/schedules/{sid}/fire").status_code == 202
    poll_until(client, f"/api/schedules/{sid}", lambda s: s["fired"] == 1, seconds=SOON)
