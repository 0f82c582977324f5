"""Another tenant's ids stay unknown ids on the paths the review found (security review
2026-11-27, L2 and L3): ``POST /ap/threads/{id}/runs`` with ``if_not_exists: create`` told
whether another tenant's conversation existed (409 "taken", else 200), and another tenant's
``projectId`` was accepted on ``POST /api/runs`` and ``/api/assistant/execute``. A thread id
a client chose is its tenant's alone: another tenant's client may choose it too, and gets a
thread of its own, as with a free UUID."""

from __future__ import annotations

import sqlite3
import uuid
from pathlib import Path
from typing import Any

import httpx
from apikeys import bearer, create_key

from harness import Server, new_conversation, running_server, waits

RUN = {
    "assistant_id": "chief",
    "input": {"messages": [{"role": "user", "content": "Hi"}]},
    "if_not_exists": "create",
}


def _counts(server: Server) -> dict[str, int]:
    tables = ("assistant_conversations", "assistant_messages", "assistant_runs", "assistant_tasks")
    with sqlite3.connect(f"file:{server.db_path}?mode=ro", uri=True) as conn:
        return {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}


def test_another_tenants_ids_are_unknown_ids(tmp_path: Path) -> None:
    with running_server(tmp_path) as server:
        a_admin, b = create_key(server, "ta", "admin"), create_key(server, "tb", "member")
        with server.client(headers=bearer(a_admin)) as a:
            a_conversation = new_conversation(a)  # an id Hansa issued
            a_project = a.post("/api/projects", json={"name": "A's"}).json()["id"]
        with server.client(headers=bearer(b)) as c:
            b_conversation = new_conversation(c)
            before = _counts(server)
            issued = c.post(f"/ap/threads/{a_conversation}/runs", json=RUN)
            unknown_issued = c.post("/ap/threads/01M8E4XTHQWY6RBG8CJ2ZXZZZZ/runs", json=RUN)
            run = c.post(
                "/api/runs",
                json={
                    "conversationId": b_conversation,
                    "projectId": a_project,
                    "title": "t",
                    "tasks": waits("A"),
                },
            )
            task_project = c.post(
                "/api/runs",
                json={
                    "conversationId": b_conversation,
                    "title": "t",
                    "tasks": [{**waits("A")[0], "projectId": a_project}],
                },
            )
            executed = c.post(
                "/api/assistant/execute",
                json={
                    "conversationId": b_conversation,
                    "projectId": a_project,
                    "createdByAgentId": "technicalLead",
                    "taskType": "create_ticket",
                    "parameters": {"title": "x"},
                },
            )
            after = _counts(server)
            fresh = c.post(f"/ap/threads/{uuid.uuid4()}/runs", json=RUN)
    # an id Hansa issued is never one a client may create: A's and an unknown one alike
    assert issued.status_code == unknown_issued.status_code == 422, issued.text
    assert issued.json()["error"] == unknown_issued.json()["error"]
    for refused in (run, task_project, executed):
        assert refused.status_code == 404, refused.text
        assert refused.json()["error"]["code"] == "not_found"
    assert after == before, "nothing was stored"
    assert fresh.status_code == 200, fresh.text


def _said(values: dict[str, Any]) -> list[str]:
    return [m["content"] for m in values["messages"]]


def _run(text: str, **extra: Any) -> dict[str, Any]:
    return {**RUN, "input": {"messages": [{"role": "user", "content": text}]}, **extra}


def _look(c: httpx.Client, tid: str) -> dict[str, Any]:
    """Everything the Agent Protocol shows of a thread."""
    runs = c.get(f"/ap/threads/{tid}/runs")
    assert runs.status_code == 200, runs.text
    return {
        "thread": c.get(f"/ap/threads/{tid}").json(),
        "state": c.get(f"/ap/threads/{tid}/state").json(),
        "history": c.post(f"/ap/threads/{tid}/history", json={}).json(),
        "runs": runs.json(),
        "one run": [c.get(f"/ap/threads/{tid}/runs/{r['run_id']}").json() for r in runs.json()],
    }


def test_a_thread_id_another_tenants_client_chose_is_free_for_this_one(tmp_path: Path) -> None:
    """L2's residue: B gets 200 and a thread of its own for an id A's client chose, as for a
    free UUID, and neither thread shows anything of the other's."""
    with running_server(tmp_path) as server:
        a_key, b_key = create_key(server, "ta", "admin"), create_key(server, "tb", "member")
        a_thread, a_made = str(uuid.uuid4()), str(uuid.uuid4())  # ids A's client chose
        with server.client(headers=bearer(a_key)) as a:
            opened = a.post("/ap/threads", json={"thread_id": a_thread, "metadata": {"of": "a"}})
            assert opened.status_code == 200, opened.text
            a_said = a.post(f"/ap/threads/{a_thread}/runs/wait", json=_run("A's own words"))
            assert a_said.status_code == 200, a_said.text
            ran = a.post(f"/ap/threads/{a_made}/runs/wait", json=_run("A made this one"))
            assert ran.status_code == 200, ran.text
            a_before = _look(a, a_thread)
        with server.client(headers=bearer(b_key)) as b:
            unseen = b.get(f"/ap/threads/{a_thread}")  # B has no thread of that id yet
            b_said = b.post(f"/ap/threads/{a_thread}/runs/wait", json=_run("B's own words"))
            b_run = b.post(
                f"/ap/threads/{a_thread}/runs", json=_run("B again", if_not_exists="reject")
            )
            assert b_run.status_code == 200, b_run.text
            joined = b.get(f"/ap/threads/{a_thread}/runs/{b_run.json()['run_id']}/join")
            patched = b.patch(f"/ap/threads/{a_thread}", json={"metadata": {"of": "b"}})
            b_seen = _look(b, a_thread)
            a_run_via_b = b.get(f"/ap/threads/{a_thread}/runs/{a_before['runs'][0]['run_id']}")
            again = b.post("/ap/threads", json={"thread_id": a_thread})
            kept = b.post("/ap/threads", json={"thread_id": a_thread, "if_exists": "do_nothing"})
            b_created = b.post("/ap/threads", json={"thread_id": a_made})  # as POST /ap/threads
            with b.stream(  # and as a stream's run
                "POST",
                f"/ap/threads/{uuid.uuid4()}/runs/stream",
                json=_run("streamed", stream_mode=["values"]),
            ) as streamed:
                events = [line for line in streamed.iter_lines() if line.startswith("event:")]
            found = b.post("/ap/threads/search", json={"metadata": {"of": "b"}}).json()
            b_history = b.get("/api/conversations").json()
        with server.client(headers=bearer(a_key)) as a:
            a_after = _look(a, a_thread)
            a_made_after = a.get(f"/ap/threads/{a_made}").json()
    assert unseen.status_code == 404
    # B's thread: 200, named as B's client named it, B's words only
    assert b_said.status_code == 200, b_said.text
    assert b_said.headers["Content-Location"].startswith(f"/ap/threads/{a_thread}/runs/")
    assert _said(b_said.json())[0] == "B's own words"
    assert "A's own words" not in str(b_said.json())
    assert b_run.json()["thread_id"] == a_thread
    assert joined.status_code == 200 and "B again" in _said(joined.json())
    assert patched.status_code == 200 and patched.json()["metadata"] == {"of": "b"}
    assert b_seen["thread"]["thread_id"] == a_thread
    assert b_seen["state"]["checkpoint"]["thread_id"] == a_thread
    assert b_seen["history"][0]["checkpoint"]["thread_id"] == a_thread
    assert {r["thread_id"] for r in b_seen["runs"] + b_seen["one run"]} == {a_thread}
    assert len(b_seen["runs"]) == 2
    assert {r["run_id"] for r in b_seen["runs"]}.isdisjoint(r["run_id"] for r in a_before["runs"])
    b_words = _said(b_seen["thread"]["values"])
    assert b_words[0] == "B's own words" and "B again" in b_words
    assert not any("A's own" in w or "A made" in w for w in b_words)
    assert not any("A's own" in w for w in _said(b_seen["state"]["values"]))
    assert a_run_via_b.status_code == 404, "A's run is no run of B's thread"
    # the id is B's own now: 409 to create it again, as any thread of B's
    assert again.status_code == 409, again.text
    assert kept.status_code == 200 and kept.json()["metadata"] == {"of": "b"}
    assert b_created.status_code == 200 and b_created.json()["thread_id"] == a_made
    assert streamed.status_code == 200 and events[0] == "event: metadata"
    assert events[-1] == "event: end"
    assert [t["thread_id"] for t in found] == [a_thread]
    assert len(b_history) == 3, "B's conversations: its two threads and the streamed one"
    # A's threads are untouched
    assert a_after == a_before
    assert a_after["thread"]["metadata"] == {"of": "a"}
    assert _said(a_after["thread"]["values"])[0] == "A's own words"
    assert _said(a_made_after["values"])[0] == "A made this one"
