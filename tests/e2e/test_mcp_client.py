"""Hansa as an MCP client (issue 21 item 1): a project's MCP servers (a local one started
by the test, over stdio and over streamable HTTP) offer their tools as ``mcp.call`` under
the four laws, through the real server."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from apikeys import bearer, create_key

from harness import Server, free_port, new_conversation, poll_until, running_server

HERE = Path(__file__).parent
SERVER_SCRIPT = str(HERE / "mcp_records_server.py")
LEAD = "technicalLead"  # holds "integrations"


@dataclass
class World:
    server: Server
    key: str
    project: str
    calls: dict[str, Path]
    """The calls each MCP server saw, by server name (one JSON line per call)."""

    def client(self) -> httpx.Client:
        return self.server.client(headers=bearer(self.key), timeout=60)

    def seen(self, name: str) -> list[dict[str, Any]]:
        path = self.calls[name]
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines() if line]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    tmp = tmp_path_factory.mktemp("mcp_client")
    port, dead = free_port(), free_port()
    calls = {"stdio": tmp / "stdio.jsonl", "http": tmp / "http.jsonl"}
    mcp = subprocess.Popen(
        [sys.executable, SERVER_SCRIPT, "http", str(port)],
        env={"RECORDS_CALLS": str(calls["http"]), "PATH": "/usr/bin:/bin"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_for_port(port)
        allow = f"127.0.0.1:{port},127.0.0.1:{dead}"
        config = tmp / "hansa.toml"  # stdio servers are the operator's, named in its config
        config.write_text(
            "[mcp_servers.stdio]\n"
            f"command = {json.dumps(sys.executable)}\n"
            f'args = [{json.dumps(SERVER_SCRIPT)}, "stdio"]\n'
            f"env = {{ RECORDS_CALLS = {json.dumps(str(calls['stdio']))} }}\n"
        )
        with running_server(
            tmp, env={"HANSA_OUTBOUND_ALLOW": allow}, extra_args=("--config", str(config))
        ) as server:
            servers = [
                {"name": "stdio", "transport": "stdio"},
                {"name": "http", "transport": "http", "url": f"http://127.0.0.1:{port}/mcp"},
                {
                    "name": "gone",
                    "transport": "http",
                    "url": f"http://127.0.0.1:{dead}/mcp",
                    "timeoutSeconds": 5,
                },
            ]
            with server.client() as local:
                response = local.post(
                    "/api/projects", json={"name": "Records", "config": {"mcpServers": servers}}
                )
            assert response.status_code == 201, response.text
            key = create_key(server, "default", role="admin")  # ends local mode
            yield World(server, key, response.json()["id"], calls)
    finally:
        mcp.terminate()
        mcp.wait(10)


def _wait_for_port(port: int) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            httpx.post(f"http://127.0.0.1:{port}/mcp", timeout=1)
            return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise RuntimeError("the MCP server did not start")


def _tools(world: World) -> dict[str, Any]:
    with world.client() as client:  # a POST starts the stdio server; a GET never does
        response = client.post(f"/api/projects/{world.project}/mcp-tools")
    assert response.status_code == 200, response.text
    return {s["name"]: s for s in response.json()["servers"]}


def _execute(world: World, agent: str, tool: str, arguments: dict[str, Any], server: str):  # type: ignore[no-untyped-def]
    with world.client() as client:
        cid = new_conversation(client)
        return client.post(
            "/api/assistant/execute",
            json={
                "conversationId": cid,
                "projectId": world.project,
                "createdByAgentId": agent,
                "taskType": "mcp.call",
                "parameters": {"server": server, "tool": tool, "arguments": arguments},
            },
        )


def test_the_tools_of_each_server_are_listed_with_their_hints(world: World) -> None:
    servers = _tools(world)
    assert list(servers) == ["stdio", "http", "gone"]
    for name in ("stdio", "http"):
        assert servers[name]["error"] is None
        tools = {t["name"]: t for t in servers[name]["tools"]}
        assert set(tools) == {"lookup", "delete_record", "touch"}
        assert tools["lookup"]["readOnlyHint"] is True
        assert tools["lookup"]["needsConfirmation"] is False
        assert tools["delete_record"]["destructiveHint"] is True
        assert tools["delete_record"]["needsConfirmation"] is True
        assert tools["touch"]["needsConfirmation"] is True  # no hints: destructive by default
        assert tools["lookup"]["inputSchema"]["required"] == ["record_id"]
    gone = servers["gone"]
    assert gone["tools"] == [] and gone["error"]["code"] == "mcp_unreachable", gone


@pytest.mark.parametrize("server", ["stdio", "http"])
def test_a_read_only_call_runs_and_returns_the_tools_answer(world: World, server: str) -> None:
    _tools(world)
    response = _execute(world, LEAD, "lookup", {"record_id": "r1"}, server)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["status"] == "completed"
    assert json.loads(body["details"]["text"]) == {"id": "r1", "name": "Alice"}
    assert {"tool": "lookup", "arguments": {"record_id": "r1"}} in world.seen(server)


@pytest.mark.parametrize("server", ["stdio", "http"])
def test_bad_arguments_are_refused_by_the_law_of_clarity(world: World, server: str) -> None:
    _tools(world)
    before = len(world.seen(server))
    response = _execute(world, LEAD, "lookup", {"record_id": 7}, server)
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert "arguments.record_id" in error["message"] and "string" in error["message"]
    assert error["details"]["law"] == "clarity"
    missing = _execute(world, LEAD, "delete_record", {"record_id": "r2"}, server)
    assert missing.status_code == 422, missing.text
    assert "'reason' is a required property" in missing.json()["error"]["message"]
    unknown = _execute(world, LEAD, "lookups", {"record_id": "r2"}, server)
    assert unknown.status_code == 422 and "did you mean 'lookup'" in unknown.text
    assert len(world.seen(server)) == before  # nothing was called


@pytest.mark.parametrize("server", ["stdio", "http"])
def test_a_destructive_tool_waits_for_confirmation(world: World, server: str) -> None:
    _tools(world)
    arguments = {"record_id": "r2", "reason": "asked by the client"}
    response = _execute(world, LEAD, "delete_record", arguments, server)
    assert response.status_code == 202, response.text
    held = response.json()
    assert held["status"] == "awaiting_confirmation"
    assert not [c for c in world.seen(server) if c["tool"] == "delete_record"]
    with world.client() as client:
        confirmed = client.post(
            f"/api/tasks/{held['taskId']}/confirm",
            json={"parametersHash": held["parametersHash"]},
        )
        assert confirmed.status_code == 200, confirmed.text

        task = poll_until(
            client,
            f"/api/tasks/{held['taskId']}",
            lambda t: t["status"] in ("completed", "failed"),
        )
    assert task["status"] == "completed", task
    assert {"tool": "delete_record", "arguments": arguments} in world.seen(server)


def test_an_agent_without_the_capability_is_refused(world: World) -> None:
    _tools(world)
    response = _execute(world, "webEngineer", "lookup", {"record_id": "r1"}, "http")
    assert response.status_code == 403, response.text
    assert response.json()["error"]["code"] == "scope_denied"
    assert "integrations" in response.json()["error"]["message"]


def test_a_tenant_may_not_configure_a_stdio_server(world: World) -> None:
    stdio = {"name": "x", "transport": "stdio", "command": "sh", "args": ["-c", "true"]}
    unknown = {"name": "x", "transport": "stdio"}  # not one the operator configured
    with world.client() as client:
        for servers in ([stdio], [unknown]):
            refused = client.post(
                "/api/projects", json={"name": "X", "config": {"mcpServers": servers}}
            )
            assert refused.status_code == 422, refused.text
            assert refused.json()["error"]["details"]["field"] == "config.mcpServers"
            patched = client.patch(
                f"/api/projects/{world.project}", json={"config": {"mcpServers": servers}}
            )
            assert patched.status_code == 422, patched.text
        bad = {"name": "y", "transport": "http", "url": "ftp://example.com/mcp"}
        shape = client.post("/api/projects", json={"name": "Y", "config": {"mcpServers": [bad]}})
        assert shape.status_code == 422, shape.text
        assert shape.json()["error"]["details"]["field"] == "config.mcpServers[0].url"
