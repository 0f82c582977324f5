"""mcp.call's laws without a server: config.mcpServers' shape, and a tool's hints and schema
(as the catalog knows them) turned into reversibility and clarity."""

from __future__ import annotations

from typing import Any

import pytest

from hansa import errors
from hansa.domain.project import ProjectContext
from hansa.engine import laws
from hansa.engine.roster import default_roster
from hansa.tasks.connectors import mcp_config
from hansa.tasks.connectors.mcp_client import CATALOG, ToolFacts
from hansa.tasks.registry import default_registry

HTTP = {"name": "crm", "transport": "http", "url": "https://mcp.example.com/mcp"}
SCHEMA = {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}


@pytest.mark.parametrize(
    ("servers", "field"),
    [
        ({"name": "crm"}, "config.mcpServers"),
        ([{"name": "crm", "transport": "ftp"}], "config.mcpServers[0].transport"),
        ([{"name": "crm", "transport": "stdio", "command": "sh"}], "config.mcpServers"),
        ([{"name": "crm", "transport": "stdio", "env": {"A": "b"}}], "config.mcpServers"),
        ([{**HTTP, "url": "https://u:p@mcp.example.com/"}], "config.mcpServers[0].url"),
        ([{**HTTP, "extra": 1}], "config.mcpServers[0].extra"),
        ([HTTP, HTTP], "config.mcpServers[1].name"),
        ([{**HTTP, "name": "a b"}], "config.mcpServers[0].name"),
    ],
)
def test_a_bad_config_names_its_field(servers: Any, field: str) -> None:
    with pytest.raises(errors.InvalidInput) as caught:
        mcp_config.parse(servers)
    assert caught.value.details["field"] == field


def test_a_good_config_parses() -> None:
    stdio = {"name": "files", "transport": "stdio"}
    parsed = mcp_config.parse([HTTP, stdio])
    assert [s.transport for s in parsed] == ["http", "stdio"]
    operator = mcp_config.operator_servers(
        {"mcp_servers": {"files": {"command": "python", "args": ["s.py"]}}}
    )
    assert operator["files"].command == "python" and operator["files"].args == ["s.py"]
    assert mcp_config.unknown_stdio({"mcpServers": [HTTP, stdio]}, operator) is None
    assert mcp_config.unknown_stdio({"mcpServers": [HTTP, stdio]}, {}) == "files"
    assert mcp_config.unknown_stdio({"mcpServers": [HTTP]}, {}) is None


def test_a_bad_operator_server_is_a_config_error() -> None:
    with pytest.raises(errors.ConfigError):
        mcp_config.operator_servers({"mcp_servers": {"files": {"args": ["no command"]}}})


def test_a_stdio_server_gets_none_of_hansas_variables() -> None:
    env = {"FILES_TOKEN": "t", "HANSA_SECRET_KEY": "k", "hansa_database_url": "u",
           "DATABASE_URL": "u", "PGPASSWORD": "p"}  # fmt: skip
    (server,) = mcp_config.operator_servers(
        {"mcp_servers": {"files": {"command": "python", "env": env}}}
    ).values()
    assert mcp_config.child_environment(server) == {"FILES_TOKEN": "t"}


def _facts(name: str, read_only: bool | None, destructive: bool | None) -> ToolFacts:
    return ToolFacts(name, "", SCHEMA, read_only, destructive)


@pytest.mark.parametrize(
    ("read_only", "destructive", "confirm"),
    [(True, None, False), (True, False, False), (False, True, True), (None, None, True),
     (False, False, True)],
)  # fmt: skip
def test_only_a_read_only_hint_spares_the_confirmation(
    read_only: bool | None, destructive: bool | None, confirm: bool
) -> None:
    assert _facts("t", read_only, destructive).needs_confirmation is confirm


def _judge(
    config: dict[str, Any], tool: str, arguments: dict[str, Any], *, resolved: bool = True
) -> laws.Verdict:
    roster = {a.id: a for a in default_roster()}
    project = ProjectContext(project_id="p", config=config)
    params = {"server": "crm", "tool": tool, "arguments": arguments}
    return laws.judge(
        default_registry(), "mcp.call", params, roster["technicalLead"], project, resolved=resolved
    )


def test_the_laws_read_the_tools_hints_and_schema() -> None:
    config = {"mcpServers": [{**HTTP, "url": "https://unit.example.com/mcp"}]}
    cold = _judge(config, "lookup", {"id": "1"})
    assert not cold.reversible and not cold.invalid  # never listed: ask first, check later
    key = mcp_config.fingerprint(config["mcpServers"][0])
    CATALOG.keep(key, [_facts("lookup", True, None), _facts("drop", False, True)])
    assert _judge(config, "lookup", {"id": "1"}).reversible
    assert not _judge(config, "drop", {"id": "1"}).reversible
    assert not _judge(config, "lookup", {"id": "{{a.b}}"}, resolved=False).reversible
    wrong = _judge(config, "lookup", {"id": 1})
    assert wrong.invalid == ("arguments.id: 1 is not of type 'string'",)
    assert "did you mean 'lookup'" in _judge(config, "lookups", {}).invalid[0]
    assert "no MCP server called 'crm'" in _judge({}, "lookup", {"id": "1"}).invalid[0]


def test_an_agent_without_integrations_may_not_call() -> None:
    roster = {a.id: a for a in default_roster()}
    verdict = laws.judge(
        default_registry(),
        "mcp.call",
        {"server": "crm", "tool": "t"},
        roster["webEngineer"],
        ProjectContext(config={"mcpServers": [HTTP]}),
    )
    assert verdict.scope_refusal is not None and "integrations" in verdict.scope_refusal
