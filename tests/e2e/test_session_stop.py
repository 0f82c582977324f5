"""A session stopped, or its server killed, mid-step never leaves an unrecorded change
(issue 32 item 1, decision 0037; review seed 004 rows 13 and 39).

The stop lands at different points of a step: before the model answers, after a tool
ran but before the step commits, with no step in flight; and ``kill -9`` of the server
after a tool ran, with and without a stop, then a restart. Each time the step that acted
is recorded once, with its tool's events, and its tool's effect exists once.

Each test has a server of its own (a scripted model replays its script from the start in
each process). A step's frame answer takes seconds, so a stop or a kill lands while the
step is in flight; that the tool ran is read from the database, not guessed from a clock.
A stop during the step's commit freezes a worker on PostgreSQL inside that transaction
(``HANSA_STOP_AT=write.before_commit``), as ``test_faults.py`` does for a turn.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import psycopg

from harness import FAST, Server, events_until, poll_until, running_server, running_worker

AGENT = "clientSuccess"  # may call entity.create
DOCUMENT = "Orphan check"
FRAME = {"nextStep": "2", "state": {"filed": True}, "text": "Filed the orphan check."}


def _script(tmp: Path, steps: list[dict[str, Any]]) -> tuple[str, ...]:
    """The agent's scripted model, as ``hansa serve`` arguments (a file rewritten per server)."""
    script = tmp / "steps.json"
    script.write_text(json.dumps(steps))
    (tmp / "hansa.toml").write_text(f'[agents.{AGENT}]\nmodel = "scripted:{script}"\n')
    return ("--config", str(tmp / "hansa.toml"))


def _tool_then_slow_frame(seconds: float, call_id: str | None = None) -> list[dict[str, Any]]:
    """A step that creates the document, then takes ``seconds`` to answer its frame."""
    call: dict[str, Any] = {
        "name": "entity.create",
        "arguments": {"entityType": "document", "name": DOCUMENT},
    }
    if call_id is not None:
        call["id"] = call_id
    return [
        {"purpose": "session_step", "toolCalls": [call]},
        {
            "purpose": "session_step",
            "promptHas": [DOCUMENT],
            "delaySeconds": seconds,
            "text": json.dumps(FRAME),
        },
    ]


def _start(client: httpx.Client, **body: Any) -> dict[str, Any]:
    answer = client.post("/api/agent-sessions", json={"agentId": AGENT, "goal": "QA", **body})
    assert answer.status_code == 201, answer.text
    return dict(answer.json())


def _until(
    client: httpx.Client, sid: str, ok: Callable[[dict[str, Any]], bool], seconds: float = 60
) -> dict[str, Any]:
    return poll_until(client, f"/api/agent-sessions/{sid}", ok, seconds=seconds)


def _documents(server: Server) -> list[str]:
    """The ids of the live documents called ``DOCUMENT``, read from the database."""
    with sqlite3.connect(f"file:{server.db_path}?mode=ro", uri=True) as conn:
        found = conn.execute(
            "SELECT id FROM workspace_entities WHERE name = ? AND deleted_at IS NULL",
            (DOCUMENT,),
        )
        return [row[0] for row in found]


def _created(server: Server, seconds: float = 30) -> str:
    """The document's id once the step's tool made it (the step has not committed)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if found := _documents(server):
            (entity_id,) = found
            return entity_id
        time.sleep(0.05)
    raise AssertionError("the step's tool never created the document")


def _stop(client: httpx.Client, sid: str) -> dict[str, Any]:
    answer = client.post(f"/api/agent-sessions/{sid}/stop")
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def _ended(client: httpx.Client, session: dict[str, Any]) -> list[dict[str, Any]]:
    """The session's conversation, up to its end."""
    return events_until(
        client,
        session["conversationId"],
        lambda e: e["type"] == "session_status" and e["data"]["status"] == "stopped",
        timeout=60,
    )


def _told(events: list[dict[str, Any]]) -> list[str]:
    """What the conversation says about the step and the session, in order."""
    kinds = ("tool_call", "tool_result", "entity_patch", "session_step")
    return [
        f"session_status:{e['data']['status']}" if e["type"] == "session_status" else e["type"]
        for e in events
        if e["type"] in kinds or e["type"] == "session_status"
    ]


def _steps(client: httpx.Client, sid: str) -> list[dict[str, Any]]:
    answer = client.get(f"/api/agent-sessions/{sid}/steps")
    assert answer.status_code == 200, answer.text
    return list(answer.json())


def _recorded_once(
    client: httpx.Client, server: Server, session: dict[str, Any], entity_id: str
) -> list[dict[str, Any]]:
    """The step that made the document is recorded once, with its tool's events, and the
    document exists once; the conversation's events, for more checks."""
    events = _ended(client, session)
    (step,) = _steps(client, session["id"])
    assert step["tools"] == [{"name": "entity.create", "ok": True}]
    assert (step["step"], step["nextStep"], step["state"]) == ("1", "2", {"filed": True})
    (result,) = [e["data"] for e in events if e["type"] == "tool_result"]
    assert result["ok"] and result["result"]["entityId"] == entity_id
    patches = [e["data"]["entityId"] for e in events if e["type"] == "entity_patch"]
    assert patches == [entity_id]
    assert _documents(server) == [entity_id], "the document exists once"
    return events


def test_a_stop_after_a_tool_ran_lets_the_step_finish_and_records_it(tmp_path: Path) -> None:
    """The review's session S3: the step created the document, then its frame answer takes
    a while; a stop lands in between. The stop says ``stopping``; the step commits with
    its tool's events, then the session is ``stopped`` and takes no further step."""
    args = _script(tmp_path, _tool_then_slow_frame(seconds=3))
    with running_server(tmp_path, extra_args=args) as server, server.client() as client:
        session = _start(client, maxSteps=5)
        entity_id = _created(server)
        stopping = _stop(client, session["id"])
        assert (stopping["status"], stopping["reason"]) == ("stopping", "stopped")
        assert stopping["step"] == 0, "the step in flight is not recorded yet"
        for verb in ("pause", "resume"):
            refused = client.post(f"/api/agent-sessions/{session['id']}/{verb}")
            assert refused.status_code == 409, refused.text
        events = _recorded_once(client, server, session, entity_id)
        stopped = client.get(f"/api/agent-sessions/{session['id']}").json()
        assert (stopped["status"], stopped["reason"], stopped["step"]) == ("stopped", "stopped", 1)
        assert _stop(client, session["id"]) == stopped, "stopping a stopped session: a no-op"
        said = client.get(f"/api/conversations/{session['conversationId']}/messages").json()
    assert _told(events) == [
        "session_status:running",
        "session_status:stopping",
        "tool_call",
        "entity_patch",
        "tool_result",
        "session_step",
        "session_status:stopped",
    ], "the step's events commit with it, after the stop said it would finish"
    assert [m["content"] for m in said if m["kind"] == "assistant"] == [FRAME["text"]]


def test_a_stop_before_the_model_answers_records_the_step(tmp_path: Path) -> None:
    """The step's model takes seconds to answer; a stop lands meanwhile: the step is
    recorded (the stop does not throw it away), and no step follows it."""
    frame = {"purpose": "session_step", "delaySeconds": 6, "text": json.dumps(FRAME)}
    args = _script(tmp_path, [frame])
    with running_server(tmp_path, extra_args=args) as server, server.client() as client:
        session = _start(client, maxSteps=5)
        time.sleep(1.5)  # the first step is claimed at once; its answer takes 6 s
        stopping = _stop(client, session["id"])
        assert stopping["status"] == "stopping", "the step was in flight"
        events = _ended(client, session)
        steps = _steps(client, session["id"])
        stopped = client.get(f"/api/agent-sessions/{session['id']}").json()
    assert [(s["iteration"], s["nextStep"]) for s in steps] == [(1, "2")]
    assert (stopped["status"], stopped["step"], stopped["state"]) == ("stopped", 1, {"filed": True})
    assert _told(events) == [
        "session_status:running",
        "session_status:stopping",
        "session_step",
        "session_status:stopped",
    ]


def test_a_stop_with_no_step_in_flight_stops_at_once(tmp_path: Path) -> None:
    """Between steps (the next one waits a minute) there is nothing to finish: the stop
    says ``stopped``, and the waiting step never runs."""
    waits = {**FRAME, "delaySeconds": 60}
    args = _script(tmp_path, [{"purpose": "session_step", "text": json.dumps(waits)}])
    with running_server(tmp_path, extra_args=args) as server, server.client() as client:
        session = _start(client, maxSteps=5)
        _until(client, session["id"], lambda s: s["step"] == 1 and s["nextRunAt"] is not None)
        stopped = _stop(client, session["id"])
        events = _ended(client, session)
        assert (stopped["status"], stopped["reason"], stopped["step"]) == ("stopped", "stopped", 1)
        assert len(_steps(client, session["id"])) == 1
    assert _told(events) == ["session_status:running", "session_step", "session_status:stopped"]


def test_a_delete_during_a_step_still_tells_what_its_tool_did(tmp_path: Path) -> None:
    """A delete is a stop and a removal: the step in flight has no session to record
    itself in any more, but the conversation (which a delete keeps) still gets its tool's
    events when it commits."""
    args = _script(tmp_path, _tool_then_slow_frame(seconds=3))
    with running_server(tmp_path, extra_args=args) as server, server.client() as client:
        session = _start(client, maxSteps=5)
        entity_id = _created(server)
        assert client.delete(f"/api/agent-sessions/{session['id']}").status_code == 204
        events = events_until(
            client, session["conversationId"], lambda e: e["type"] == "tool_result", timeout=30
        )
        assert client.get(f"/api/agent-sessions/{session['id']}").status_code == 404
    patches = [e["data"]["entityId"] for e in events if e["type"] == "entity_patch"]
    assert patches == [entity_id]
    assert _documents(server) == [entity_id]


def _kill(server: Server) -> None:
    os.kill(server.process.pid, signal.SIGKILL)
    server.process.wait(10)


def test_kill_9_after_a_tool_ran_reruns_the_step_once_without_a_second_document(
    tmp_path: Path,
) -> None:
    """The server dies after the step's tool made the document, before the step commits.
    After the restart the step runs again; its model names the call anew (as a real
    model would), yet the call finds the document made before: one document, recorded."""
    args = _script(tmp_path, _tool_then_slow_frame(seconds=30))
    with running_server(tmp_path, extra_args=args, env=FAST) as doomed, doomed.client() as c:
        session = _start(c, maxSteps=1)
        entity_id = _created(doomed)
        _kill(doomed)
    args = _script(tmp_path, _tool_then_slow_frame(seconds=0, call_id="call_after_restart"))
    with running_server(tmp_path, extra_args=args, env=FAST) as server, server.client() as c:
        ended = _until(c, session["id"], lambda s: s["status"] == "stopped")
        assert (ended["reason"], ended["step"]) == ("max_steps", 1)
        events = events_until(
            c, session["conversationId"], lambda e: e["type"] == "session_step", timeout=30
        )
        (step,) = _steps(c, session["id"])
        (result,) = [e["data"] for e in events if e["type"] == "tool_result"]
    assert step["tools"] == [{"name": "entity.create", "ok": True}]
    assert result["toolCallId"] == "call_after_restart"
    assert result["result"]["entityId"] == entity_id
    assert _documents(server) == [entity_id], "the re-run made no second document"


def test_kill_9_before_the_model_answers_runs_the_step_once_after_the_restart(
    tmp_path: Path,
) -> None:
    """The server dies while the step's model is still answering: nothing was done, and
    after the restart the step runs once and is recorded."""
    frame = {"purpose": "session_step", "delaySeconds": 30, "text": json.dumps(FRAME)}
    args = _script(tmp_path, [frame])
    with running_server(tmp_path, extra_args=args, env=FAST) as doomed, doomed.client() as c:
        session = _start(c, maxSteps=1)
        time.sleep(1.5)  # the step is claimed at once; its answer takes 30 s
        _kill(doomed)
    args = _script(tmp_path, [{**frame, "delaySeconds": 0}])
    with running_server(tmp_path, extra_args=args, env=FAST) as server, server.client() as c:
        ended = _until(c, session["id"], lambda s: s["status"] == "stopped")
        steps = _steps(c, session["id"])
    assert (ended["reason"], ended["step"], ended["state"]) == ("max_steps", 1, {"filed": True})
    assert [(s["iteration"], s["nextStep"]) for s in steps] == [(1, "2")]


def test_kill_9_inside_the_steps_commit_records_the_step_once_after_the_restart(
    tmp_path: Path,
) -> None:
    """The server freezes inside the step's transaction (``write.before_commit``) and is
    killed there: nothing of the step committed, but its tool made the document. After the
    restart the step runs again, finds the document and is recorded once."""
    args = _script(tmp_path, _tool_then_slow_frame(seconds=0))
    freeze = {**FAST, "HANSA_STOP_AT": "write.before_commit"}
    with running_server(tmp_path, extra_args=args, env=freeze) as doomed, doomed.client() as c:
        session = _start(c, maxSteps=1)
        _frozen(doomed.process.pid)
        entity_id = _created(doomed)
        _kill(doomed)
    args = _script(tmp_path, _tool_then_slow_frame(seconds=0, call_id="call_after_restart"))
    with running_server(tmp_path, extra_args=args, env=FAST) as server, server.client() as c:
        ended = _until(c, session["id"], lambda s: s["status"] == "stopped")
        events = events_until(
            c, session["conversationId"], lambda e: e["type"] == "session_step", timeout=30
        )
        (step,) = _steps(c, session["id"])
    assert (ended["reason"], ended["step"]) == ("max_steps", 1)
    assert step["tools"] == [{"name": "entity.create", "ok": True}]
    assert [e["data"]["entityId"] for e in events if e["type"] == "entity_patch"] == [entity_id]
    assert [e["type"] for e in events].count("session_step") == 1
    assert _documents(server) == [entity_id], "one document, the one recorded"


def test_kill_9_while_stopping_finishes_the_step_after_the_restart(tmp_path: Path) -> None:
    """A stop lands after the tool ran (``stopping``), then the server dies before the step
    commits. After the restart the step runs again (it acted: it is not dropped), finds
    its document, is recorded, and only then is the session stopped."""
    args = _script(tmp_path, _tool_then_slow_frame(seconds=30))
    with running_server(tmp_path, extra_args=args, env=FAST) as doomed, doomed.client() as c:
        session = _start(c, maxSteps=5)
        entity_id = _created(doomed)
        assert _stop(c, session["id"])["status"] == "stopping"
        _kill(doomed)
    args = _script(tmp_path, _tool_then_slow_frame(seconds=0, call_id="call_after_restart"))
    with running_server(tmp_path, extra_args=args, env=FAST) as server, server.client() as c:
        events = _recorded_once(c, server, session, entity_id)
        stopped = c.get(f"/api/agent-sessions/{session['id']}").json()
    assert (stopped["status"], stopped["reason"], stopped["step"]) == ("stopped", "stopped", 1)
    assert _told(events)[-4:] == ["entity_patch", "tool_result", "session_step"] + [
        "session_status:stopped"
    ]
    assert "session_status:stopping" in _told(events)


def _frozen(pid: int, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "T":
            return
        time.sleep(0.05)
    raise AssertionError("the worker never reached its stop point")


def test_a_stop_during_the_steps_commit_on_postgres(pg_url: str, tmp_path: Path) -> None:
    """The worker freezes inside the step's commit, the session's row locked. The stop
    waits for the row until PostgreSQL ends the frozen transaction, finds the step's job
    started and says ``stopping``; another worker takes the step over, runs it again (its
    document found, not made twice), records it and stops the session. The frozen worker,
    resumed, writes nothing."""
    args = _script(tmp_path, _tool_then_slow_frame(seconds=0))
    freeze = {
        **FAST,
        "HANSA_STOP_AT": "write.before_commit",
        "HANSA_DB_IDLE_IN_TRANSACTION_SECONDS": "1",
    }
    api = running_server(
        tmp_path, database_url=pg_url, extra_args=("--workers", "0", *args), env=FAST
    )
    with api as server, server.client() as client:
        with running_worker(tmp_path, pg_url, env=freeze, extra_args=args) as frozen:
            session = _start(client, maxSteps=5)
            _frozen(frozen.pid)
            try:
                stopping = _stop(client, session["id"])
                assert (stopping["status"], stopping["step"]) == ("stopping", 0)
                with running_worker(tmp_path, pg_url, env=FAST, extra_args=args):
                    events = _ended(client, session)
                    os.kill(frozen.pid, signal.SIGCONT)
                    time.sleep(3)  # the frozen worker wakes up and tries to commit
            finally:
                os.kill(frozen.pid, signal.SIGCONT)
        assert _ended(client, session) == events, "nothing was written after the takeover"
        (step,) = _steps(client, session["id"])
        stopped = client.get(f"/api/agent-sessions/{session['id']}").json()
    with psycopg.connect(pg_url) as conn:
        documents = conn.execute(
            "SELECT id FROM workspace_entities WHERE name = %s", (DOCUMENT,)
        ).fetchall()
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert step["tools"] == [{"name": "entity.create", "ok": True}]
    (result,) = [e["data"] for e in events if e["type"] == "tool_result"]
    assert [(result["result"]["entityId"],)] == documents, "one document, the one recorded"
    assert (stopped["status"], stopped["reason"], stopped["step"]) == ("stopped", "stopped", 1)
    assert _told(events) == [
        "session_status:running",
        "session_status:stopping",
        "tool_call",
        "entity_patch",
        "tool_result",
        "session_step",
        "session_status:stopped",
    ]
