"""Agent sessions over the real server (seed 004): steps, control, limits, a crash.

Agents with a script of their own answer step frames as JSON; agents without one answer
every step with plain text (the session goes on to the following step, its state kept).
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from httpx_sse import connect_sse

from harness import (
    FAST,
    Server,
    events_until,
    hans_says,
    new_conversation,
    poll_until,
    post,
    running_server,
    turn,
)

Session = dict[str, Any]
WEBHOOK = {"url": "https://hooks.example.com/deploy", "method": "POST", "body": {"go": True}}


def _frame(next_step: str, n: int, text: str, *, done: bool = False) -> dict[str, Any]:
    body = {"nextStep": next_step, "state": {"checked": n}, "text": text, "done": done}
    return {"purpose": "session_step", "text": json.dumps(body)}


SCRIPTS: dict[str, list[dict[str, Any]]] = {
    # three steps to a goal: 1 -> 2 -> report, done
    "growthLead": [
        _frame("2", 1, "Checked the rankings."),
        _frame("report", 2, "Checked the backlinks."),
        _frame("report", 3, "Weekly SEO report sent.", done=True),
    ],
    # a step that uses tools first: one runs, one is out of the agent's scope
    "clientSuccess": [
        {
            "purpose": "session_step",
            "toolCalls": [
                {
                    "name": "entity.create",
                    "arguments": {"entityType": "document", "name": "SEO report"},
                },
                {"name": "delete_page", "arguments": {"page": "Pricing"}, "offered": False},
            ],
        },
        {
            "purpose": "session_step",
            "promptHas": ["SEO report", "scope_denied"],
            "text": json.dumps({"nextStep": "end", "text": "Filed the SEO report.", "done": True}),
        },
    ],
    # an irreversible tool in a step: nobody is there to confirm it, so it does not run
    "technicalLead": [
        {
            "purpose": "session_step",
            "toolCalls": [{"name": "webhook.call", "arguments": WEBHOOK}],
        },
        {
            "purpose": "session_step",
            "promptHas": ["needs_confirmation"],
            "text": json.dumps({"nextStep": "end", "text": "The deploy needs you.", "done": True}),
        },
    ],
    # slow steps (guidance arrives while one runs)
    "deliveryLead": [
        {"purpose": "session_step", "text": "tick", "delaySeconds": 0.6} for _ in range(10)
    ],
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("sessions")
    config = []
    for agent, steps in SCRIPTS.items():
        script = tmp / f"{agent}.json"
        script.write_text(json.dumps(steps))
        config.append(f'[agents.{agent}]\nmodel = "scripted:{script}"\n')
    (tmp / "hansa.toml").write_text("\n".join(config))
    with running_server(tmp, extra_args=("--config", str(tmp / "hansa.toml"))) as s:
        yield s


@pytest.fixture
def client(server: Server) -> Iterator[httpx.Client]:
    with server.client() as c:
        yield c


def _start(client: httpx.Client, agent: str, **body: Any) -> Session:
    response = client.post("/api/agent-sessions", json={"agentId": agent, "goal": "SEO", **body})
    assert response.status_code == 201, response.text
    return dict(response.json())


def _until(
    client: httpx.Client, sid: str, ok: Callable[[Session], bool], seconds: float = 30
) -> Session:
    return poll_until(client, f"/api/agent-sessions/{sid}", ok, seconds=seconds)


def _steps(client: httpx.Client, sid: str) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = []
    while True:
        page = client.get(f"/api/agent-sessions/{sid}/steps", params={"after": len(steps)})
        assert page.status_code == 200, page.text
        if not page.json():
            return steps
        steps += page.json()


def _gap_free(steps: list[dict[str, Any]]) -> None:
    assert [s["iteration"] for s in steps] == list(range(1, len(steps) + 1))


def test_a_session_steps_to_its_goal_and_says_so(client: httpx.Client) -> None:
    started = _start(client, "growthLead", state={"site": "aquaverter.ca"})
    assert started["status"] == "running" and started["step"] == 0
    assert started["nextStep"] == "1"
    done = _until(client, started["id"], lambda s: s["status"] == "completed")
    steps = _steps(client, started["id"])
    _gap_free(steps)
    assert [(s["step"], s["nextStep"]) for s in steps] == [
        ("1", "2"),
        ("2", "report"),
        ("report", "report"),
    ]
    assert [s["done"] for s in steps] == [False, False, True]
    assert done["state"] == {"checked": 3} and done["reason"] == "done"
    assert done["step"] == 3
    said = client.get(f"/api/conversations/{started['conversationId']}/messages").json()
    assert [m["content"] for m in said if m["kind"] == "assistant"] == [
        "Checked the rankings.",
        "Checked the backlinks.",
        "Weekly SEO report sent.",
    ]
    events = events_until(
        client, started["conversationId"], lambda e: e["data"].get("status") == "completed"
    )
    kinds = [e["type"] for e in events if e["type"].startswith("session_")]
    assert kinds == ["session_status", "session_step", "session_step", "session_step"] + [
        "session_status"
    ]


def test_a_step_uses_the_agents_tools_under_the_laws(client: httpx.Client) -> None:
    started = _start(client, "clientSuccess")
    sid, cid = started["id"], started["conversationId"]
    _until(client, sid, lambda s: s["status"] == "completed")
    (step,) = _steps(client, sid)
    assert step["tools"] == [
        {"name": "entity.create", "ok": True},
        {"name": "delete_page", "ok": False, "error": "scope_denied"},
    ]
    events = events_until(
        client, cid, lambda e: e["type"] == "session_status" and e["data"]["status"] == "completed"
    )
    shown = [e["type"] for e in events if e["type"].startswith(("tool_", "session_step"))]
    assert shown == ["tool_call", "tool_call", "tool_result", "tool_result", "session_step"]
    created = next(e for e in events if e["type"] == "tool_result" and e["data"]["ok"])
    entity_id = created["data"]["result"]["entityId"]
    entity = client.get(f"/api/workspace/entities/{entity_id}").json()
    assert (entity["kind"], entity["name"]) == ("document", "SEO report")
    patches = [e["data"] for e in events if e["type"] == "entity_patch"]
    assert [p["entityId"] for p in patches] == [entity_id]


def test_an_irreversible_tool_does_not_run_in_a_step(client: httpx.Client) -> None:
    started = _start(client, "technicalLead")
    done = _until(client, started["id"], lambda s: s["status"] == "completed")
    assert done["reason"] == "done"
    (step,) = _steps(client, started["id"])
    assert step["tools"] == [{"name": "webhook.call", "ok": False, "error": "needs_confirmation"}]
    events = events_until(
        client,
        started["conversationId"],
        lambda e: e["type"] == "session_status" and e["data"]["status"] == "completed",
    )
    (result,) = [e["data"] for e in events if e["type"] == "tool_result"]
    assert result["error"]["code"] == "needs_confirmation"
    assert not [e for e in events if e["type"] in ("run_status", "task_status", "operation")]


def test_guidance_goes_to_exactly_one_step(client: httpx.Client) -> None:
    started = _start(client, "deliveryLead", maxSteps=3)
    guided = client.post(
        f"/api/agent-sessions/{started['id']}/interrupt", json={"guidance": "Focus on pricing"}
    )
    assert guided.status_code == 200, guided.text
    _until(client, started["id"], lambda s: s["status"] == "stopped")
    steps = _steps(client, started["id"])
    assert [s["guidance"] for s in steps].count("Focus on pricing") == 1
    assert len(steps) == 3


def test_a_users_message_guides_the_next_step(client: httpx.Client) -> None:
    started = _start(client, "creativeLead", maxSteps=1000)
    sid, cid = started["id"], started["conversationId"]
    _until(client, sid, lambda s: s["step"] >= 2)
    post(client, cid, "Please cover the spring sale too")
    _until(client, sid, lambda s: s["guidance"] is None and s["step"] >= 4)
    assert client.post(f"/api/agent-sessions/{sid}/stop").json()["status"] == "stopped"
    guided = [s for s in _steps(client, sid) if s["guidance"]]
    assert [s["guidance"] for s in guided] == ["Please cover the spring sale too"]


def test_pause_resume_stop_and_limits(client: httpx.Client) -> None:
    started = _start(client, "creativeLead", maxSteps=1000)
    sid = started["id"]
    _until(client, sid, lambda s: s["step"] >= 3)
    paused = client.post(f"/api/agent-sessions/{sid}/pause").json()
    assert paused["status"] == "paused"
    time.sleep(0.3)  # a step in flight when it paused is recorded; then nothing more
    held = len(_steps(client, sid))
    time.sleep(0.5)
    assert len(_steps(client, sid)) == held, "no step starts while paused"
    assert client.post(f"/api/agent-sessions/{sid}/resume").json()["status"] == "running"
    _until(client, sid, lambda s: s["step"] >= held + 3)
    stopped = client.post(f"/api/agent-sessions/{sid}/stop").json()
    assert stopped["status"] == "stopped" and stopped["reason"] == "stopped"
    time.sleep(0.3)
    final = _steps(client, sid)
    _gap_free(final)
    assert len(final) == client.get(f"/api/agent-sessions/{sid}").json()["step"]
    again = client.post(f"/api/agent-sessions/{sid}/resume")
    assert again.status_code == 409 and again.json()["error"]["code"] == "conflict"

    limited = _start(client, "creativeLead", maxSteps=4)
    ended = _until(client, limited["id"], lambda s: s["status"] == "stopped")
    assert ended["reason"] == "max_steps" and len(_steps(client, limited["id"])) == 4
    timed = _start(client, "deliveryLead", maxRuntimeSeconds=0.5, maxSteps=1000)
    ended = _until(client, timed["id"], lambda s: s["status"] == "stopped")
    assert ended["reason"] == "max_runtime"


def test_bad_input_and_deletion(client: httpx.Client) -> None:
    unknown = client.post("/api/agent-sessions", json={"agentId": "nobody", "goal": "x"})
    assert unknown.status_code == 422
    too_many = client.post(
        "/api/agent-sessions", json={"agentId": "chief", "goal": "x", "maxSteps": 10**6}
    )
    assert too_many.status_code == 422
    assert client.get("/api/agent-sessions/nope").status_code == 404
    started = _start(client, "creativeLead", maxSteps=2)
    assert client.delete(f"/api/agent-sessions/{started['id']}").status_code == 204
    assert client.get(f"/api/agent-sessions/{started['id']}").status_code == 404
    listed = client.get("/api/agent-sessions", params={"agentId": "growthLead"}).json()
    assert listed and {s["agentId"] for s in listed} == {"growthLead"}


def test_the_session_stream_resumes_with_last_event_id(client: httpx.Client) -> None:
    started = _start(client, "creativeLead", maxSteps=4)
    sid = started["id"]
    _until(client, sid, lambda s: s["status"] == "stopped")
    path = f"/api/agent-sessions/{sid}/events"

    def read(headers: dict[str, str], count: int) -> list[Any]:
        seen: list[Any] = []
        with connect_sse(client, "GET", path, headers=headers) as source:
            for sse in source.iter_sse():
                seen.append((int(sse.id), json.loads(sse.data)))
                if len(seen) == count:
                    return seen
        return seen

    everything = read({}, 6)  # running, 4 steps, stopped
    assert [e["type"] for _, e in everything] == ["session_status"] + ["session_step"] * 4 + [
        "session_status"
    ]
    rest = read({"Last-Event-ID": str(everything[2][0])}, 3)
    assert rest == everything[3:]


def test_a_step_in_flight_when_the_server_is_killed_is_recorded_once(tmp_path: Path) -> None:
    """kill -9 while a step runs; the next server goes on from the step after the last
    recorded: every iteration once, no gap."""
    script = tmp_path / "slow.json"
    slow = {"purpose": "session_step", "text": "tick", "delaySeconds": 0.8}
    script.write_text(json.dumps([slow] * 40))
    (tmp_path / "hansa.toml").write_text(f'[agents.creativeLead]\nmodel = "scripted:{script}"\n')
    args = ("--config", str(tmp_path / "hansa.toml"))
    with running_server(tmp_path, extra_args=args, env=FAST) as doomed, doomed.client() as c:
        started = _start(c, "creativeLead", maxSteps=5)
        _until(c, started["id"], lambda s: s["step"] >= 2)
        os.kill(doomed.process.pid, signal.SIGKILL)
        doomed.process.wait(10)
    with running_server(tmp_path, extra_args=args, env=FAST) as server, server.client() as c:
        ended = _until(c, started["id"], lambda s: s["status"] == "stopped", seconds=60)
        steps = _steps(c, started["id"])
    assert ended["reason"] == "max_steps"
    _gap_free(steps)
    assert len(steps) == 5


def test_sessions_paused_waiting_and_running_survive_a_restart(tmp_path: Path) -> None:
    """kill -9 with one session paused, one waiting for its next step (delaySeconds) and one
    running; after the restart the paused one stays paused until resumed, the waiting one
    runs when due, the running one goes on: each to its limit, gap-free."""
    script = tmp_path / "waits.json"
    wait = {"nextStep": "2", "state": {}, "text": "see you soon", "done": False, "delaySeconds": 3}
    script.write_text(json.dumps([{"purpose": "session_step", "text": json.dumps(wait)}] * 10))
    config = f'[agents.deliveryLead]\nmodel = "scripted:{script}"\n'
    (tmp_path / "hansa.toml").write_text(config)
    args = ("--config", str(tmp_path / "hansa.toml"))
    with running_server(tmp_path, extra_args=args, env=FAST) as doomed, doomed.client() as c:
        paused = _start(c, "creativeLead", maxSteps=6)
        running = _start(c, "creativeLead", maxSteps=6)
        waiting = _start(c, "deliveryLead", maxSteps=2)
        _until(c, paused["id"], lambda s: s["step"] >= 1)
        assert c.post(f"/api/agent-sessions/{paused['id']}/pause").status_code == 200
        _until(c, waiting["id"], lambda s: s["step"] == 1 and s["nextRunAt"] is not None)
        os.kill(doomed.process.pid, signal.SIGKILL)
        doomed.process.wait(10)
    with running_server(tmp_path, extra_args=args, env=FAST) as server, server.client() as c:
        finished = _until(c, running["id"], lambda s: s["status"] == "stopped", seconds=60)
        assert finished["reason"] == "max_steps"
        held = c.get(f"/api/agent-sessions/{paused['id']}").json()
        assert held["status"] == "paused", "a paused session stays paused after a restart"
        assert c.post(f"/api/agent-sessions/{paused['id']}/resume").status_code == 200
        for session in (paused, waiting):
            ended = _until(c, session["id"], lambda s: s["status"] == "stopped", seconds=60)
            assert ended["reason"] == "max_steps"
        for session, count in ((paused, 6), (running, 6), (waiting, 2)):
            steps = _steps(c, session["id"])
            _gap_free(steps)
            assert len(steps) == count
        waited = _steps(c, waiting["id"])
    gap = datetime.fromisoformat(waited[1]["startedAt"]) - datetime.fromisoformat(
        waited[0]["finishedAt"]
    )
    assert gap.total_seconds() >= 3, "the second step waited for its due time"


def test_stop_during_a_step_records_it_and_nothing_more(client: httpx.Client) -> None:
    """A step in flight when the stop lands finishes and is recorded (``stopping``), one
    not yet started never runs (decision 0037; tests/e2e/test_session_stop.py times it)."""
    started = _start(client, "deliveryLead", maxSteps=10)
    sid = started["id"]
    _until(client, sid, lambda s: s["step"] >= 1)
    stopped = client.post(f"/api/agent-sessions/{sid}/stop").json()
    assert stopped["status"] in ("stopping", "stopped")
    in_flight = stopped["status"] == "stopping"
    ended = _until(client, sid, lambda s: s["status"] == "stopped")
    time.sleep(1.0)  # longer than a step (0.6 s): none starts after the stop
    assert len(_steps(client, sid)) == ended["step"] == stopped["step"] + in_flight
    assert ended["reason"] == "stopped"


def test_asking_in_chat_for_ongoing_work_starts_a_session(tmp_path: Path) -> None:
    """Seed 004 from the chat: "keep an eye on our SEO and report weekly" starts a session
    of the Growth Lead in the conversation; its first step runs now, the next a week on."""
    with running_server(tmp_path) as server, server.client() as c:
        cid = new_conversation(c)
        events = turn(c, cid, "Keep an eye on our SEO and report weekly")
        (started,) = c.get("/api/agent-sessions").json()
        ran = _until(c, started["id"], lambda s: s["step"] >= 1)
        asked = turn(c, cid, "How do I monitor my site?")
    assert started["agentId"] == "growthLead" and started["conversationId"] == cid
    assert started["everySeconds"] == 7 * 24 * 3600
    assert events[-1]["type"] == "done" and events[-1]["data"]["status"] == "completed"
    said = hans_says(events)
    assert len(said) == 1 and "check in every week" in said[0]
    assert ran["status"] == "running" and ran["nextRunAt"] is not None
    waited = datetime.fromisoformat(ran["nextRunAt"]) - datetime.fromisoformat(ran["updatedAt"])
    assert waited.total_seconds() >= 7 * 24 * 3600 - 1
    assert not [e for e in asked if e["type"] == "session_status"], "a question starts nothing"
