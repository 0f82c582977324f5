"""Every cursor and page size of every router is bounded: out of range is 4xx, never 500.

The routes are found in the server's own description (``/openapi.json``): each operation
with a query parameter that pages (``after``, ``before``, ``limit``, ``offset``…) is sent
huge, negative, fractional and non-numeric values, on objects that exist (a conversation,
a run, a rule, an agent session, an Agent Protocol thread), so a value that slipped past
the route's checks would reach the database. ``GET /api/runs/{id}/logs?after=<34 digits>``
answered 500 before its cursor was bounded (issue 27).
"""

from __future__ import annotations

from typing import Any

import pytest

from harness import Server, new_conversation, waits

PAGING = frozenset({"after", "before", "limit", "offset", "version", "cursor"})
"""Query parameters that page or point into a sequence."""
BAD = ["1" + "0" * 33, str(2**63), "-1", "-" + "9" * 40, "1.5", "x", ""]
"""Values no cursor or page size takes (an empty ``before`` is a valid, unknown run id)."""
EXPECTED = {
    ("/api/runs", "limit"),
    ("/api/runs/{run_id}/logs", "after"),
    ("/api/runs/{run_id}/logs", "limit"),
    ("/api/conversations/{conversation_id}/events", "after"),
    ("/api/rules/{rule_id}/firings", "limit"),
    ("/api/agent-sessions/{session_id}/steps", "after"),
    ("/api/agent-sessions/{session_id}/steps", "limit"),
    ("/ap/threads/{thread_id}/runs", "limit"),
    ("/ap/threads/{thread_id}/runs", "offset"),
}
"""Routes the test must find (so that a renamed parameter cannot make it pass vacuously)."""


def _ids(server: Server) -> dict[str, str]:
    """Real objects for the paths' ids; others get an id that does not exist."""
    with server.client() as client:
        cid = new_conversation(client)
        run = client.post(
            "/api/runs", json={"conversationId": cid, "title": "T", "tasks": waits("A")}
        )
        assert run.status_code == 201, run.text
        rule = client.post(
            "/api/rules",
            json={
                "name": "seen",
                "trigger": "message.received",
                "actions": [{"type": "context.update", "params": {"set": {"seen": True}}}],
            },
        )
        assert rule.status_code == 201, rule.text
        session = client.post("/api/agent-sessions", json={"agentId": "chief", "goal": "SEO"})
        assert session.status_code == 201, session.text
        thread = client.post("/ap/threads", json={})
        assert thread.status_code == 200, thread.text
    return {
        "conversation_id": cid,
        "run_id": run.json()["id"],
        "rule_id": rule.json()["id"],
        "session_id": session.json()["id"],
        "thread_id": thread.json()["thread_id"],
    }


def _paged(spec: dict[str, Any]) -> list[tuple[str, str]]:
    """``(path, parameter)`` of every GET with a paging query parameter."""
    found = []
    for path, operations in spec["paths"].items():
        for parameter in operations.get("get", {}).get("parameters", []):
            if parameter["in"] == "query" and parameter["name"] in PAGING:
                found.append((path, parameter["name"]))
    return found


def test_every_cursor_out_of_range_is_refused_not_a_server_error(server: Server) -> None:
    with server.client() as client:
        spec = client.get("/openapi.json").json()
    paged = _paged(spec)
    assert set(paged) >= EXPECTED, sorted(EXPECTED - set(paged))
    ids = _ids(server)
    failures = []
    with server.client(timeout=10) as client:
        for path, name in paged:
            url = path
            for key in path.split("{")[1:]:
                key = key.split("}")[0]
                url = url.replace(f"{{{key}}}", ids.get(key, "nope"))
            for value in BAD:
                if value == "" and name == "before":
                    continue
                answer = client.get(url, params={name: value})
                if not 400 <= answer.status_code < 500:
                    failures.append(f"{path}?{name}={value[:12]}: {answer.status_code}")
                elif not answer.headers["content-type"].startswith("application/json"):
                    failures.append(f"{path}?{name}={value[:12]}: not the error body")
                else:
                    assert set(answer.json()["error"]) == {"code", "message", "details"}
        assert client.get("/healthz").status_code == 200
    assert not failures, failures


@pytest.mark.parametrize("after", ["1" + "0" * 33, "-1", "x"])
def test_a_run_log_cursor_out_of_range_is_422(server: Server, after: str) -> None:
    with server.client() as client:
        cid = new_conversation(client)
        run = client.post(
            "/api/runs", json={"conversationId": cid, "title": "T", "tasks": waits("A")}
        )
        answer = client.get(f"/api/runs/{run.json()['id']}/logs", params={"after": after})
        assert answer.status_code == 422, answer.text
        assert answer.json()["error"]["details"]["errors"][0]["field"] == "after"
        largest = client.get(f"/api/runs/{run.json()['id']}/logs", params={"after": 2**62})
        assert largest.status_code == 200 and largest.json() == []
