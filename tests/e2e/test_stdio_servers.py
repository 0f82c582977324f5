"""Stdio MCP servers are the operator's alone (security review 2026-11-27, M2 and L5).

With ``HANSA_MCP_STDIO=1`` a tenant admin could run any command as the server's user and
read ``HANSA_SECRET_KEY`` and the database; in local mode a cross-site GET of
``mcp-tools`` started a configured command. Now a command is written only in the server's
``hansa.toml``, a project only names one, the process gets none of Hansa's variables, and a
GET never starts one."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from apikeys import bearer, create_key
from cryptography.fernet import Fernet

from harness import Server, new_conversation, running_server

SCRIPT = str(Path(__file__).with_name("mcp_env_server.py"))
EVIL = {"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}


@dataclass
class Operated:
    server: Server
    starts: Path

    def started(self) -> int:
        return len(self.starts.read_text().splitlines()) if self.starts.exists() else 0


def _config(tmp: Path, starts: Path) -> Path:
    config = tmp / "hansa.toml"
    env = {"STARTS": str(starts), "HANSA_SECRET_KEY": "leak", "DATABASE_URL": "leak"}
    config.write_text(
        "[mcp_servers.env]\n"
        f"command = {json.dumps(sys.executable)}\n"
        f"args = [{json.dumps(SCRIPT)}]\n"
        "env = { " + ", ".join(f"{k} = {json.dumps(v)}" for k, v in env.items()) + " }\n"
    )
    return config


@pytest.fixture
def operated(tmp_path: Path) -> Iterator[Operated]:
    starts = tmp_path / "starts.txt"
    env = {"HANSA_SECRET_KEY": Fernet.generate_key().decode(), "HANSA_MCP_STDIO": "1"}
    args = ("--config", str(_config(tmp_path, starts)))
    with running_server(tmp_path, env=env, extra_args=args) as server:
        yield Operated(server, starts)


def test_a_tenant_admin_picks_the_operators_server_and_it_gets_no_secrets(
    operated: Operated,
) -> None:
    server = operated.server
    admin = create_key(server, "tb", "admin")
    steal = {"name": "x", "transport": "stdio", "command": sys.executable, "args": ["s.py"]}
    with server.client(headers=bearer(admin)) as c:
        own_command = c.post("/api/projects", json={"name": "X", "config": {"mcpServers": [steal]}})
        unknown = {"name": "other", "transport": "stdio"}
        not_offered = c.post(
            "/api/projects", json={"name": "Y", "config": {"mcpServers": [unknown]}}
        )
        picked = {"name": "env", "transport": "stdio"}
        made = c.post("/api/projects", json={"name": "Z", "config": {"mcpServers": [picked]}})
        assert made.status_code == 201, made.text
        project = made.json()["id"]
        listed = c.post(f"/api/projects/{project}/mcp-tools")
        called = c.post(
            "/api/assistant/execute",
            json={
                "conversationId": new_conversation(c),
                "projectId": project,
                "createdByAgentId": "technicalLead",
                "taskType": "mcp.call",
                "parameters": {"server": "env", "tool": "environment", "arguments": {}},
            },
        )
    for refused in (own_command, not_offered):
        assert refused.status_code == 422, refused.text
        assert refused.json()["error"]["details"]["field"] == "config.mcpServers"
    assert "operator" in own_command.json()["error"]["message"]
    assert operated.started() >= 1, "the operator's server ran"
    (entry,) = listed.json()["servers"]
    assert entry["error"] is None and [t["name"] for t in entry["tools"]] == ["environment"]
    assert called.status_code == 200, called.text
    names = json.loads(called.json()["details"]["text"])
    assert "STARTS" in names, "the operator's own variables reach it"
    assert not [n for n in names if n.startswith("HANSA_") or n == "DATABASE_URL"], names


def test_a_get_never_starts_a_process(tmp_path: Path) -> None:
    starts = tmp_path / "starts.txt"
    args = ("--config", str(_config(tmp_path, starts)))
    with running_server(tmp_path, extra_args=args) as server, server.client() as local:
        operated = Operated(server, starts)
        servers = [{"name": "env", "transport": "stdio"}]
        made = local.post("/api/projects", json={"name": "P", "config": {"mcpServers": servers}})
        assert made.status_code == 201, made.text
        tools = f"/api/projects/{made.json()['id']}/mcp-tools"
        cross_site = local.get(tools, headers=EVIL)
        plain_get = local.get(tools)
        cross_post = local.post(tools, headers=EVIL)
        assert operated.started() == 0, "no GET, and no cross-site POST, started it"
        listed = local.post(tools)
        assert operated.started() == 1
        after = local.get(tools)
    assert cross_site.status_code == 200, cross_site.text
    for answer in (cross_site, plain_get):
        (entry,) = answer.json()["servers"]
        assert entry["tools"] == [] and entry["error"]["code"] == "not_listed", entry
    assert cross_post.status_code == 403
    assert listed.json()["servers"][0]["error"] is None
    (entry,) = after.json()["servers"]
    assert [t["name"] for t in entry["tools"]] == ["environment"], "the last listing is shown"
