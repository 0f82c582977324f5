"""Reading runs over HTTP, through the real server: ``GET /api/runs`` (filters, pages, one
tenant's runs only) and ``GET /api/runs/{id}/logs`` (the run's events in order, levelled,
filtered, paged; 404 for another tenant's run)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from apikeys import client, create_key, error_code

from harness import Server, events_until, new_conversation, run_done, running_server, waits

FAILING = [
    {
        "stepGroup": "A",
        "taskType": "create_ticket",
        "parameters": {"title": "Sibling finishes"},
        "createdByAgentId": "chief",
    },
    {
        "stepGroup": "A",
        "taskType": "webhook.call",
        "parameters": {"url": "http://169.254.169.254/latest", "method": "GET"},
        "createdByAgentId": "notificationAgent",
        "summary": "Fetch the instance settings",
    },
    {
        "stepGroup": "B",
        "taskType": "create_ticket",
        "parameters": {"title": "Never happens"},
        "createdByAgentId": "chief",
    },
]


@dataclass
class World:
    """Tenant A's runs (``done``: completed, ``pending``: awaiting approval, both in ``chat``;
    ``failed`` in ``other``), the events ``done``'s conversation streamed, and B's key."""

    server: Server
    a: str
    b: str
    chat: str
    other: str
    done: str
    pending: str
    failed: str
    streamed: list[dict[str, Any]]


def _run(c: httpx.Client, cid: str, title: str, tasks: list[dict[str, Any]]) -> str:
    body = {"conversationId": cid, "title": title, "tasks": tasks}
    response = c.post("/api/runs", json=body)
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def _finish(c: httpx.Client, cid: str, run_id: str) -> list[dict[str, Any]]:
    assert c.post(f"/api/runs/{run_id}/approve").status_code == 200
    return events_until(c, cid, run_done(run_id))


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with running_server(tmp_path_factory.mktemp("run-logs")) as server:
        a, b = create_key(server, "acme"), create_key(server, "globex")
        with client(server, a) as c:
            chat, other = new_conversation(c), new_conversation(c)
            done = _run(c, chat, "Two waits", waits("A", "B"))
            streamed = _finish(c, chat, done)
            failed = _run(c, other, "Fails", FAILING)
            _finish(c, other, failed)
            pending = _run(c, chat, "Not approved", waits("A"))
        yield World(server, a, b, chat, other, done, pending, failed, streamed)


def _get(w: World, path: str, key: str | None = None, **params: Any) -> httpx.Response:
    with client(w.server, key or w.a) as c:
        return c.get(path, params=params)


def _ok(response: httpx.Response) -> Any:
    assert response.status_code == 200, response.text
    return response.json()


def test_runs_are_listed_newest_first_with_filters(world: World) -> None:
    w = world
    listed = _ok(_get(w, "/api/runs"))
    assert [r["id"] for r in listed] == [w.pending, w.failed, w.done]
    card = _ok(_get(w, f"/api/runs/{w.done}"))
    first = listed[2]
    assert "groups" not in first and "thinking" not in first and "agents" not in first
    assert first == {k: v for k, v in card.items() if k in first}, "the card without its tasks"
    assert {"id", "conversationId", "title", "status", "createdAt", "metadata"} <= set(first)
    assert [r["id"] for r in _ok(_get(w, "/api/runs", conversationId=w.chat))] == [
        w.pending,
        w.done,
    ]
    assert [r["id"] for r in _ok(_get(w, "/api/runs", status="failed"))] == [w.failed]
    by_both = _get(w, "/api/runs", conversationId=w.chat, status="completed")
    assert [(r["id"], r["status"]) for r in _ok(by_both)] == [(w.done, "completed")]
    assert _ok(_get(w, "/api/runs", conversationId=w.other, status="running")) == []


def test_runs_come_page_by_page_after_a_run_id(world: World) -> None:
    w = world
    page1 = _ok(_get(w, "/api/runs", limit=2))
    page2 = _ok(_get(w, "/api/runs", limit=2, before=page1[-1]["id"]))
    assert [r["id"] for r in page1 + page2] == [w.pending, w.failed, w.done]
    assert len(page2) == 1, "a short page is the last"


@pytest.mark.parametrize(
    ("path", "params"),
    [
        ("/api/runs", {"status": "finished"}),
        ("/api/runs", {"limit": 0}),
        ("/api/runs", {"limit": 101}),
        ("/api/runs", {"before": "no-such-run"}),
        ("/api/runs/{done}/logs", {"level": "warning"}),
        ("/api/runs/{done}/logs", {"limit": 1001}),
    ],
)
def test_bad_filters_are_invalid_input(world: World, path: str, params: dict[str, Any]) -> None:
    response = _get(world, path.format(done=world.done), **params)
    assert response.status_code == 422 and error_code(response) == "invalid_input", response.text
    assert response.json()["error"]["details"]["field"] == next(iter(params))


def test_another_tenant_sees_none_of_the_runs_and_none_of_their_logs(world: World) -> None:
    w = world
    assert _ok(_get(w, "/api/runs", w.b)) == []
    assert _ok(_get(w, "/api/runs", w.b, conversationId=w.chat)) == []
    before = _get(w, "/api/runs", w.b, before=w.done)
    assert before.status_code == 422 and w.done not in before.text.replace(w.done, "", 1)
    for run_id in (w.done, w.failed):
        response = _get(w, f"/api/runs/{run_id}/logs", w.b)
        assert response.status_code == 404 and error_code(response) == "not_found"
    assert _get(w, "/api/runs/no-such-run/logs").status_code == 404


def test_the_log_is_every_event_of_the_run_in_order_levelled_and_worded(world: World) -> None:
    w = world
    log = _ok(_get(w, f"/api/runs/{w.done}/logs"))
    of_run = [e for e in w.streamed if e["runId"] == w.done]
    assert [e["seq"] for e in log] == [e["seq"] for e in of_run], "the event log is the log"
    assert [e["type"] for e in log] == [e["type"] for e in of_run]
    for entry, ev in zip(log, of_run, strict=True):
        assert set(entry) == {
            "seq",
            "at",
            "level",
            "type",
            "taskId",
            "nodeId",
            "agentId",
            "message",
            "data",
        }
        assert (entry["taskId"], entry["agentId"], entry["data"]) == (
            ev["taskId"],
            ev["agentId"],
            ev["data"],
        )
        assert entry["nodeId"] is None, "a plan's steps are no graph nodes"
        assert entry["message"]
    levels = {e["type"]: set() for e in log}
    for e in log:
        levels[e["type"]].add(e["level"])
    assert levels["task_status"] == {"info"} and levels["run_status"] == {"info"}
    assert levels.get("thinking", {"debug"}) == {"debug"}
    assert levels.get("text_delta", {"debug"}) == {"debug"}
    assert "error" not in {e["level"] for e in log}
    lines = [e["message"] for e in log]
    assert "task wait: in_progress → completed" in lines
    assert any(line.startswith("run completed") for line in lines)


def test_a_minimum_level_keeps_that_level_and_above(world: World) -> None:
    w = world
    everything = _ok(_get(w, f"/api/runs/{w.failed}/logs"))
    errors = _ok(_get(w, f"/api/runs/{w.failed}/logs", level="error"))
    info = _ok(_get(w, f"/api/runs/{w.failed}/logs", level="info"))
    assert errors == [e for e in everything if e["level"] == "error"]
    assert info == [e for e in everything if e["level"] != "debug"]
    assert any(e["level"] == "debug" for e in everything)
    failures = [(e["type"], e["data"].get("status")) for e in errors]
    assert ("task_status", "failed") in failures and ("run_status", "failed") in failures
    assert all(t in ("task_status", "run_status", "error") for t, _ in failures)
    webhook = next(e for e in errors if e["type"] == "task_status")
    assert webhook["message"] == "task webhook.call: in_progress → failed (outbound_denied)"
    assert webhook["agentId"] == "notificationAgent"


def test_the_log_comes_page_by_page_after_a_seq(world: World) -> None:
    w = world
    whole = _ok(_get(w, f"/api/runs/{w.done}/logs"))
    pages: list[list[dict[str, Any]]] = []
    after = 0
    while True:
        page = _ok(_get(w, f"/api/runs/{w.done}/logs", after=after, limit=3))
        pages.append(page)
        if len(page) < 3:
            break
        after = page[-1]["seq"]
    assert [e for p in pages for e in p] == whole
    assert all(len(p) == 3 for p in pages[:-1]) and len(pages) > 2
    errors = _ok(_get(w, f"/api/runs/{w.failed}/logs", level="error", limit=1))
    more = _get(w, f"/api/runs/{w.failed}/logs", level="error", after=errors[0]["seq"])
    assert len(errors) == 1 and len(_ok(more)) >= 1, "a filtered page reads on to fill itself"


def test_a_node_filter_on_a_plan_run_finds_nothing(world: World) -> None:
    assert _ok(_get(world, f"/api/runs/{world.done}/logs", nodeId="analyze")) == []
    assert _ok(_get(world, f"/api/runs/{world.pending}/logs", level="error")) == []


GRAPH = {
    "name": "two waits",
    "components": [
        {"id": "first", "type": "wait", "config": {"seconds": 0.05}},
        {"id": "second", "type": "wait", "config": {"seconds": 0.05}},
    ],
    "edges": [{"from": "first", "to": "second"}],
}


def test_a_node_filter_keeps_that_nodes_events_of_a_graph_run(world: World) -> None:
    key = create_key(world.server, "initech")  # a tenant of its own: the lists above stay
    with client(world.server, key) as c:
        cid = new_conversation(c)
        graph = c.post("/api/graphs", json=GRAPH)
        assert graph.status_code == 201, graph.text
        started = c.post(f"/api/graphs/{graph.json()['id']}/runs", json={"conversationId": cid})
        assert started.status_code == 201, started.text
        run_id = started.json()["id"]
        events_until(c, cid, run_done(run_id))
        whole = _ok(c.get(f"/api/runs/{run_id}/logs"))
        second = _ok(c.get(f"/api/runs/{run_id}/logs", params={"nodeId": "second"}))
        done = _ok(c.get(f"/api/runs/{run_id}/logs", params={"nodeId": "second", "level": "info"}))
    assert second == [e for e in whole if e["nodeId"] == "second"]
    assert second and all(e["taskId"] == second[0]["taskId"] for e in second)
    assert {e["nodeId"] for e in whole} == {None, "first", "second"}
    assert done[-1]["message"] == "task second: in_progress → completed"
    moves = [(e["nodeId"], e["data"]["status"]) for e in whole if e["type"] == "task_status"]
    assert moves.index(("first", "completed")) < moves.index(("second", "in_progress"))
