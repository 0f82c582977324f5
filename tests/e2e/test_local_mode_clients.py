"""Local mode against the clients that must send some key (issue 33 item 3): the official
``openai`` client (an empty key fails in the client), ``langgraph-sdk`` with
``LANGSMITH_API_KEY`` in the environment, an MCP client with a placeholder bearer. In local
mode an unknown key is ignored, not refused; once a key exists, it is refused as before."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import httpx2
import openai
import pytest
from apikeys import create_key, error_code
from langgraph_sdk import get_sync_client
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from openai import OpenAI

from harness import Server, running_server

PLACEHOLDERS = ("sk-local", "not-needed", "hk_" + "x" * 43)


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server on loopback that never had a key (no test here makes one)."""
    with running_server(tmp_path_factory.mktemp("local-clients")) as s:
        yield s


@pytest.mark.parametrize("placeholder", PLACEHOLDERS)
def test_the_openai_client_connects_with_a_placeholder_key(local: Server, placeholder: str) -> None:
    with OpenAI(base_url=f"{local.url}/v1", api_key=placeholder, max_retries=0) as client:
        models = [m.id for m in client.models.list()]
        answer = client.chat.completions.create(
            model="chief", messages=[{"role": "user", "content": "Hello there"}]
        )

    assert "chief" in models
    assert answer.choices[0].message.content


def test_langgraph_sdk_connects_with_langsmith_api_key_set(
    local: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LANGSMITH_API_KEY", "lsv2_pt_0123456789abcdef")  # the SDK sends it
    with get_sync_client(url=f"{local.url}/ap") as client:
        assistants = client.assistants.search(limit=100)
        thread = client.threads.create()
        values = client.runs.wait(
            thread["thread_id"],
            "chief",
            input={"messages": [{"role": "user", "content": "Hi, who are you?"}]},
        )

    assert assistants[0]["assistant_id"] == "chief"
    assert isinstance(values, dict)
    assert [m for m in values["messages"] if m["type"] == "ai"], values


def test_an_mcp_client_connects_with_a_placeholder_bearer(local: Server) -> None:
    async def main() -> list[str]:
        headers = {"Authorization": "Bearer placeholder"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=60) as http,
            streamable_http_client(f"{local.url}/mcp", http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return [t.name for t in (await session.list_tools()).tools]

    assert "ask_the_team" in anyio.run(main)


def test_an_ignored_key_keeps_local_modes_browser_rules(local: Server) -> None:
    port = local.url.rsplit(":", 1)[1]
    placeholder = {"Authorization": "Bearer sk-local"}
    with local.client(headers=placeholder) as c:
        me = c.get("/api/me")
        rebound = c.get("/api/me", headers={"Host": f"attacker.example:{port}"})
        cross = c.post("/api/conversations", json={}, headers={"Origin": "http://evil.example"})
        by_api_key = c.get("/api/me", headers={"Authorization": "", "X-Api-Key": "anything"})

    assert me.status_code == 200 and me.json()["principal"]["kind"] == "local"
    assert by_api_key.status_code == 200, by_api_key.text
    assert rebound.status_code == 403 and error_code(rebound) == "origin_denied"
    assert cross.status_code == 403 and error_code(cross) == "origin_denied"


def test_once_a_key_exists_an_unknown_key_is_refused(tmp_path: Path) -> None:
    with running_server(tmp_path) as server:
        key = create_key(server, "acme")
        with (
            OpenAI(base_url=f"{server.url}/v1", api_key="sk-local", max_retries=0) as placeholder,
            pytest.raises(openai.AuthenticationError) as refused,
        ):
            placeholder.models.list()
        with OpenAI(base_url=f"{server.url}/v1", api_key=key, max_retries=0) as own:
            ids = [m.id for m in own.models.list()]
        with get_sync_client(url=f"{server.url}/ap", api_key="lsv2_pt_0123") as client:
            with pytest.raises(httpx.HTTPStatusError) as ap_refused:
                client.assistants.search()

    assert "not valid" in str(refused.value)
    assert "chief" in ids
    assert ap_refused.value.response.status_code == 401
