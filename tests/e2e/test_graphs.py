"""Prompt graphs over HTTP, through the real server: saved as immutable versions per tenant,
read back by version, refused with every problem listed (and nothing written) when invalid;
on SQLite and on PostgreSQL."""

from __future__ import annotations

import sqlite3
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import psycopg
import pytest
from apikeys import client, create_key, error_code

from harness import Server

TRIAGE: dict[str, Any] = {
    "name": "triage",
    "components": [
        {
            "id": "check",
            "type": "condition",
            "config": {"condition": {"field": "context.tier", "operator": "in", "value": ["gold"]}},
        },
        {
            "id": "vip",
            "type": "message.send",
            "config": {"content": "A specialist will call you."},
        },
        {
            "id": "usual",
            "type": "llm.invoke",
            "config": {"promptTemplate": "{{message.content}}"},
        },
        {"id": "pause", "type": "wait", "config": {"seconds": 1}},
    ],
    "edges": [
        {"from": "check", "to": "vip", "when": "true"},
        {"from": "check", "to": "usual", "when": "false"},
        {"from": "usual", "to": "pause"},
    ],
}

BROKEN: dict[str, Any] = {
    "name": "broken",
    "components": [
        {"id": "start", "type": "message.send", "config": {"text": "hi"}},
        {"id": "start", "type": "message.send", "config": {"text": "again"}},
        {"id": "odd", "type": "teleport", "config": {}},
        {"id": "think", "type": "llm.invoke", "config": {"promt": "typo"}},
        {"id": "a", "type": "wait", "config": {"seconds": 1}},
        {"id": "b", "type": "wait", "config": {"seconds": 1}},
    ],
    "edges": [
        {"from": "start", "to": "think"},
        {"from": "start", "to": "nowhere"},
        {"from": "a", "to": "b"},
        {"from": "b", "to": "a"},
    ],
}
BROKEN_CODES = {
    "duplicate_id",
    "unknown_type",
    "bad_config",
    "unknown_edge_end",
    "cycle",
    "unreachable",
}


def _ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


def _refused(response: httpx.Response) -> list[dict[str, Any]]:
    assert response.status_code == 422, response.text
    assert error_code(response) == "invalid_graph"
    problems: list[dict[str, Any]] = response.json()["error"]["details"]["problems"]
    return problems


def _sqlite_rows(server: Server) -> int:
    with sqlite3.connect(f"file:{server.db_path}?mode=ro", uri=True) as conn:
        count: int = conn.execute("SELECT count(*) FROM graphs").fetchone()[0]
    return count


@pytest.fixture(scope="module")
def keys(server: Server) -> dict[str, str]:
    """Keys of two tenants (the server leaves local mode with the first)."""
    return {
        "acme": create_key(server, "acme", "admin"),
        "acme_member": create_key(server, "acme", "member"),
        "globex": create_key(server, "globex", "admin"),
    }


def _versions_and_reads(c: httpx.Client) -> None:
    """What both databases must do alike: save, add a version, list, read by version."""
    first = _ok(c.post("/api/graphs", json=TRIAGE), 201)
    gid = first["id"]
    assert first["version"] == 1 and first["name"] == "triage"
    assert first["components"] == TRIAGE["components"]
    assert first["edges"][2] == {"from": "usual", "to": "pause", "when": None}
    assert first["createdAt"] and first["createdBy"]

    changed = {**TRIAGE, "name": "triage v2", "components": TRIAGE["components"][:3]}
    changed["edges"] = TRIAGE["edges"][:2]
    second = _ok(c.post(f"/api/graphs/{gid}/versions", json=changed), 201)
    assert (second["id"], second["version"], second["name"]) == (gid, 2, "triage v2")
    # a graph as read may be sent back as the next version: its read-only fields are ignored
    third = _ok(c.post(f"/api/graphs/{gid}/versions", json=second), 201)
    assert third["version"] == 3 and third["components"] == second["components"]

    other = _ok(c.post("/api/graphs", json={**TRIAGE, "name": "other"}), 201)
    listed = {g["id"]: g for g in _ok(c.get("/api/graphs"))}
    assert (listed[gid]["version"], listed[other["id"]]["version"]) == (3, 1)
    assert _ok(c.get(f"/api/graphs/{gid}"))["version"] == 3
    assert _ok(c.get(f"/api/graphs/{gid}", params={"version": 1})) == first
    assert _ok(c.get(f"/api/graphs/{gid}", params={"version": 2})) == second
    assert c.get(f"/api/graphs/{gid}", params={"version": 4}).status_code == 404
    assert c.get(f"/api/graphs/{gid}", params={"version": 0}).status_code == 422
    assert c.get("/api/graphs/nope").status_code == 404
    assert c.post("/api/graphs/nope/versions", json=TRIAGE).status_code == 404


def test_a_graph_is_saved_versioned_listed_and_read(server: Server, keys: dict[str, str]) -> None:
    with client(server, keys["acme"]) as c:
        _versions_and_reads(c)
    with client(server, keys["acme_member"]) as member:  # members write graphs too
        made = _ok(member.post("/api/graphs", json=TRIAGE), 201)
    assert made["createdBy"].startswith("user:")


def test_another_tenants_graph_is_not_found(server: Server, keys: dict[str, str]) -> None:
    with client(server, keys["acme"]) as a:
        gid = _ok(a.post("/api/graphs", json={**TRIAGE, "name": "acme only"}), 201)["id"]
    with client(server, keys["globex"]) as b:
        assert b.get(f"/api/graphs/{gid}").status_code == 404
        assert b.get(f"/api/graphs/{gid}", params={"version": 1}).status_code == 404
        # 404 before the body is looked at, so an invalid body tells nothing either
        assert b.post(f"/api/graphs/{gid}/versions", json=TRIAGE).status_code == 404
        assert b.post(f"/api/graphs/{gid}/versions", json={}).status_code == 404
        assert "acme only" not in b.get("/api/graphs").text
    with client(server, keys["acme"]) as a:
        assert _ok(a.get(f"/api/graphs/{gid}"))["version"] == 1


def test_an_invalid_graph_is_refused_with_every_problem_and_nothing_is_written(
    server: Server, keys: dict[str, str]
) -> None:
    with client(server, keys["acme"]) as c:
        gid = _ok(c.post("/api/graphs", json=TRIAGE), 201)["id"]
        before, rows = c.get("/api/graphs").json(), _sqlite_rows(server)
        created = _refused(c.post("/api/graphs", json=BROKEN))
        versioned = _refused(c.post(f"/api/graphs/{gid}/versions", json=BROKEN))
        not_a_graph = _refused(c.post("/api/graphs", json={"nodes": []}))
        after = c.get("/api/graphs").json()
        newest = _ok(c.get(f"/api/graphs/{gid}"))

    assert {p["code"] for p in created} == BROKEN_CODES
    assert created == versioned
    cycle = next(p for p in created if p["code"] == "cycle")
    assert cycle["nodes"] == ["a", "b"]
    assert {p["node"] for p in created if p["code"] == "unreachable"} == {"a", "b"}
    assert any(p.get("field") == "components[3].config.promt" for p in created)
    assert [p["field"] for p in not_a_graph] == ["nodes", "name", "components"]
    assert after == before and newest["version"] == 1
    assert _sqlite_rows(server) == rows


def test_agents_may_not_touch_graphs(server: Server, keys: dict[str, str]) -> None:
    with client(server, keys["acme"]) as admin:
        bot = {"id": "graphBot", "displayName": "G", "capabilities": ["wait"]}
        _ok(admin.post("/api/agents", json=bot), 201)
        token = _ok(admin.post("/api/agents/graphBot/tokens"), 201)["key"]
    with client(server, token) as agent:
        assert agent.get("/api/graphs").status_code == 403
        assert agent.post("/api/graphs", json=TRIAGE).status_code == 403


def test_a_retried_create_saves_once(server: Server, keys: dict[str, str]) -> None:
    with client(server, keys["acme"]) as c:
        rows = _sqlite_rows(server)
        headers = {"Idempotency-Key": "graph-once"}
        one = _ok(c.post("/api/graphs", json=TRIAGE, headers=headers), 201)
        two = _ok(c.post("/api/graphs", json=TRIAGE, headers=headers), 201)
    assert one == two and _sqlite_rows(server) == rows + 1


def test_graphs_on_postgresql(api: Server, pg_url: str) -> None:
    def count() -> int:
        with psycopg.connect(pg_url) as conn:
            found = conn.execute("SELECT count(*) FROM graphs").fetchone()
        assert found is not None
        return int(found[0])

    with api.client() as c:
        _versions_and_reads(c)
        gid = _ok(c.post("/api/graphs", json=TRIAGE), 201)["id"]
        rows = count()
        assert {p["code"] for p in _refused(c.post("/api/graphs", json=BROKEN))} == BROKEN_CODES
        _refused(c.post(f"/api/graphs/{gid}/versions", json=BROKEN))
        assert count() == rows

        def add(_: int) -> int:
            with api.client() as mine:
                version: int = _ok(mine.post(f"/api/graphs/{gid}/versions", json=TRIAGE), 201)[
                    "version"
                ]
            return version

        with ThreadPoolExecutor(8) as pool:
            versions = sorted(pool.map(add, range(8)))
        newest = _ok(c.get(f"/api/graphs/{gid}"))
    assert versions == list(range(2, 10)), "concurrent versions are numbered one after another"
    assert newest["version"] == 9
