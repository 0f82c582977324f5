"""The MCP server at ``/mcp`` (issue 21 item 2), driven by the official MCP Python SDK's
streamable HTTP client against the real server: task types as tools under the laws, and
``ask_the_team`` as a turn."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import anyio
import httpx
import httpx2
import mcp_types as types
import pytest
from apikeys import bearer, create_key
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from harness import Server, running_server

T = TypeVar("T")


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, str]]:
    # a server of its own: a live key ends local mode
    with running_server(tmp_path_factory.mktemp("mcp")) as server:
        yield server, create_key(server, "acme", role="member")


def _session(keyed: tuple[Server, str | None], use: Callable[[ClientSession], Awaitable[T]]) -> T:
    server, key = keyed

    async def main() -> T:
        async with (
            httpx2.AsyncClient(headers=bearer(key) if key else {}, timeout=60) as http,
            streamable_http_client(f"{server.url}/mcp", http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return await use(session)

    return anyio.run(main)


def _call(keyed: tuple[Server, str], name: str, arguments: dict[str, Any]) -> types.CallToolResult:
    async def use(session: ClientSession) -> types.CallToolResult:
        return await session.call_tool(name, arguments)

    return _session(keyed, use)


def _get(keyed: tuple[Server, str], path: str) -> Any:
    server, key = keyed
    with server.client(headers=bearer(key)) as client:
        response = client.get(path)
    assert response.status_code == 200, response.text
    return response.json()


def _text(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


def test_the_tools_are_the_task_types_with_their_schemas_and_hints(
    keyed: tuple[Server, str],
) -> None:
    async def use(session: ClientSession) -> types.ListToolsResult:
        return await session.list_tools()

    tools = {t.name: t for t in _session(keyed, use).tools}
    task_types = _get(keyed, "/api/task-types")

    offered = {t["name"] for t in task_types if not t["graphNode"]}
    # names OpenAI and Anthropic accept when a client hands the tools to its model
    assert all(re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", name) for name in tools), sorted(tools)
    assert {t.title for n, t in tools.items() if n != "ask_the_team"} == offered
    dotted = {(n, t.title) for n, t in tools.items() if t.title and "." in t.title}
    assert (
        len(dotted) == 11
        and {
            ("entity_create", "entity.create"),
            ("webhook_call", "webhook.call"),
            ("agent_state_update", "agent_state.update"),
        }
        <= dotted
    )
    assert len(tools) == len(offered) + 1
    ticket, delete = tools["create_ticket"], tools["delete_page"]
    assert ticket.input_schema["required"] == ["title"]
    assert {"title", "agentId", "conversationId", "projectId"} <= set(
        ticket.input_schema["properties"]
    )
    assert ticket.annotations is not None and ticket.annotations.destructive_hint is False
    assert delete.annotations is not None and delete.annotations.destructive_hint is True
    assert delete.annotations.read_only_hint is False
    assert "confirmation" in (delete.description or "")
    assert tools["ask_the_team"].input_schema["required"] == ["message"]


def test_a_reversible_task_runs_and_is_recorded(keyed: tuple[Server, str]) -> None:
    result = _call(keyed, "create_ticket", {"title": "Broken footer", "priority": "high"})
    out = result.structured_content
    task = _get(keyed, f"/api/tasks/{out['taskId']}")
    card = _get(keyed, f"/api/runs/{out['runId']}")

    assert not result.is_error, _text(result)
    assert out["status"] == "completed" and out["details"]
    assert out["taskId"] in _text(result)
    assert task["status"] == "completed" and task["createdByAgentId"] == "chief"
    assert task["parameters"]["title"] == "Broken footer"
    assert task["conversationId"] == out["conversationId"]
    assert card["status"] == "completed"


def test_a_dotted_task_type_runs_by_its_tool_name_and_by_its_own(
    keyed: tuple[Server, str],
) -> None:
    made = _call(keyed, "entity_create", {"entityType": "goal", "name": "More leads"})
    dotted = _call(keyed, "entity.create", {"entityType": "risk", "name": "Slow site"})

    async def unknown(session: ClientSession) -> str:
        try:
            await session.call_tool("entity_creates", {"entityType": "goal", "name": "x"})
        except MCPError as exc:
            return str(exc)
        return "answered"

    assert _session(keyed, unknown) == "unknown tool 'entity_creates'"

    assert not made.is_error and not dotted.is_error, _text(made) + _text(dotted)
    tasks = [_get(keyed, f"/api/tasks/{r.structured_content['taskId']}") for r in (made, dotted)]
    assert [t["taskType"] for t in tasks] == ["entity.create", "entity.create"]
    assert [t["status"] for t in tasks] == ["completed", "completed"]


def test_the_laws_refuse_as_tool_errors(keyed: tuple[Server, str]) -> None:
    missing = _call(keyed, "create_ticket", {"priority": "low"})
    out_of_scope = _call(keyed, "create_product", {"name": "Mug", "price": "9.00"})
    unknown_agent = _call(keyed, "create_ticket", {"title": "x", "agentId": "nobody"})

    assert missing.is_error and "title" in _text(missing)
    assert missing.structured_content["error"]["code"] == "missing_parameters"
    assert missing.structured_content["error"]["details"]["missing"] == ["title"]
    assert out_of_scope.is_error
    assert out_of_scope.structured_content["error"]["code"] == "scope_denied"
    assert unknown_agent.is_error


def test_an_irreversible_task_awaits_confirmation_and_does_not_run(
    keyed: tuple[Server, str],
) -> None:
    result = _call(keyed, "delete_page", {"pageId": "42", "agentId": "webEngineer"})
    out = result.structured_content
    task = _get(keyed, f"/api/tasks/{out['taskId']}")

    assert not result.is_error, _text(result)
    assert out["status"] == "awaiting_confirmation"
    assert "confirmation" in _text(result) and out["taskId"] in _text(result)
    assert task["status"] == "awaiting_confirmation" and task["createdByAgentId"] == "webEngineer"
    assert task["result"] is None, "nothing ran"


def test_ask_the_team_runs_a_turn(keyed: tuple[Server, str]) -> None:
    result = _call(keyed, "ask_the_team", {"message": "Hi, who are you?"})
    out = result.structured_content
    cid = out["conversationId"]
    again = _call(keyed, "ask_the_team", {"message": "And now?", "conversationId": cid})
    stored = _get(keyed, f"/api/conversations/{cid}/messages")

    assert not result.is_error and out["finished"]
    said = [m["content"] for m in stored if m["kind"] == "assistant"]
    first = [m["content"] for m in out["messages"]]
    second = [m["content"] for m in again.structured_content["messages"]]
    assert said == first + second and first
    assert _text(result) == "\n\n".join(first)
    users = [m["content"] for m in stored if m["kind"] == "user"]
    assert users == ["Hi, who are you?", "And now?"]


def test_ask_the_team_gives_a_new_conversation_its_user(keyed: tuple[Server, str]) -> None:
    ada = {"id": "u-1", "displayName": "Ada", "tier": "vip"}
    result = _call(keyed, "ask_the_team", {"message": "Hello", "user": ada})
    refused = _call(keyed, "ask_the_team", {"message": "Hello", "user": {"tier": "vip"}})

    assert not result.is_error, _text(result)
    convo = _get(keyed, f"/api/conversations/{result.structured_content['conversationId']}")
    assert convo["user"] == ada
    assert refused.is_error and refused.structured_content["error"]["details"]["field"] == (
        "user.id"
    )


@pytest.mark.parametrize("key", [None, "hk_not-a-key"])
def test_without_a_valid_key_mcp_is_401(keyed: tuple[Server, str], key: str | None) -> None:
    server, _ = keyed
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    headers = {"Accept": "application/json, text/event-stream", **(bearer(key) if key else {})}
    response = httpx.post(f"{server.url}/mcp", json=request, headers=headers)

    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthenticated"
    assert response.headers["www-authenticate"].startswith("Bearer")


def test_get_is_405_the_server_keeps_no_stream(keyed: tuple[Server, str]) -> None:
    server, key = keyed
    headers = {"Accept": "text/event-stream", **bearer(key)}
    response = httpx.get(f"{server.url}/mcp", headers=headers, timeout=10)

    assert response.status_code == 405 and response.headers["allow"] == "POST"


def test_in_local_mode_no_key_is_needed(tmp_path: Path) -> None:
    async def use(session: ClientSession) -> types.CallToolResult:
        return await session.call_tool("create_ticket", {"title": "Local"})

    with running_server(tmp_path) as server:
        result = _session((server, None), use)

    assert not result.is_error and result.structured_content["status"] == "completed"


def test_an_agent_token_runs_tasks_as_its_agent_and_starts_no_turn(
    keyed: tuple[Server, str],
) -> None:
    server, _ = keyed
    with server.client(headers=bearer(create_key(server, "acme", role="admin"))) as admin:
        made = admin.post(
            "/api/agents",
            json={"id": "mcpBot", "displayName": "MCP bot", "capabilities": ["tickets"]},
        )
        token = admin.post("/api/agents/mcpBot/tokens", json={"name": "mcp"})
    assert made.status_code == 201 and token.status_code == 201, token.text
    bot = (server, str(token.json()["key"]))

    own = _call(bot, "create_ticket", {"title": "From the bot"})
    impostor = _call(bot, "create_ticket", {"title": "x", "agentId": "chief"})
    turn = _call(bot, "ask_the_team", {"message": "Hello"})

    assert not own.is_error and own.structured_content["status"] == "completed"
    assert _get(keyed, f"/api/tasks/{own.structured_content['taskId']}")["createdByAgentId"] == (
        "mcpBot"
    )
    assert impostor.is_error and impostor.structured_content["error"]["code"] == "forbidden"
    assert turn.is_error and turn.structured_content["error"]["code"] == "forbidden"
