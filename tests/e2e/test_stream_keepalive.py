"""Keep-alives on the bridges' streams (issue 33 item 8): ``/v1``, ``/ap`` and ``/ag-ui``
send an SSE comment after each ``HANSA_SSE_KEEPALIVE_SECONDS`` of silence while a slow model
works, as ``/api`` streams do, and the third-party clients (``openai``, ``langgraph-sdk``,
``ag-ui-protocol``'s models) read the streams whole all the same.

The model takes 6 s per answer, spread over its chunks (about 0.4 s apart); the keep-alive is
0.1 s, so each gap holds a few comments.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from ag_ui import core
from apikeys import bearer, create_key
from langgraph_sdk import get_sync_client
from openai import OpenAI
from pydantic import TypeAdapter

from harness import Server, running_server

EVENTS: TypeAdapter[core.Event] = TypeAdapter(core.Event)


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, str]]:
    tmp = tmp_path_factory.mktemp("keepalive")
    script = tmp / "slow.json"
    script.write_text(json.dumps({"delaySeconds": 6}))
    env = {"HANSA_SSE_KEEPALIVE_SECONDS": "0.1"}
    with running_server(tmp, model=f"scripted:{script}", env=env) as server:
        yield server, create_key(server, "acme")


def _lines(server: Server, key: str, path: str, body: dict[str, Any]) -> list[str]:
    """Every line of the stream, as sent."""
    with (
        server.client(headers=bearer(key), timeout=60) as client,
        client.stream("POST", path, json=body) as response,
    ):
        assert response.status_code == 200, response.read()
        return list(response.iter_lines())


def _pings_before_text(lines: list[str], text_marker: str) -> int:
    """The comment lines sent before the first line carrying the answer's text."""
    first = next(i for i, line in enumerate(lines) if text_marker in line)
    return sum(1 for line in lines[:first] if line.startswith(":"))


def test_openai_streams_send_keepalives_and_the_client_reads_them_whole(
    keyed: tuple[Server, str],
) -> None:
    server, key = keyed
    body = {"model": "chief", "stream": True, "messages": [{"role": "user", "content": "Ping?"}]}
    lines = _lines(server, key, "/v1/chat/completions", body)
    with OpenAI(base_url=f"{server.url}/v1", api_key=key, max_retries=0) as client:
        stream = client.chat.completions.create(
            model="chief", stream=True, messages=[{"role": "user", "content": "Still there?"}]
        )
        said = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)

    assert _pings_before_text(lines, "Here is how") >= 1
    assert "data: [DONE]" in lines
    assert said.startswith('Here is how I would approach "Still there?"')


def test_agent_protocol_streams_send_keepalives_and_langgraph_sdk_reads_them_whole(
    keyed: tuple[Server, str],
) -> None:
    server, key = keyed
    body = {
        "assistant_id": "chief",
        "input": {"messages": [{"role": "user", "content": "Ping?"}]},
        "stream_mode": ["messages-tuple", "values"],
    }
    lines = _lines(server, key, "/ap/runs/stream", body)
    with get_sync_client(url=f"{server.url}/ap", api_key=key) as client:
        parts = list(
            client.runs.stream(
                None,
                "chief",
                input={"messages": [{"role": "user", "content": "Still there?"}]},
                stream_mode="values",
            )
        )

    assert _pings_before_text(lines, "Here is how") >= 1
    assert parts[0].event == "metadata" and parts[-1].event == "end"
    last = [p for p in parts if p.event == "values"][-1]
    said = [m["content"] for m in last.data["messages"] if m["type"] == "ai"]
    assert said[-1].startswith('Here is how I would approach "Still there?"')


def test_agui_streams_send_keepalives_and_every_event_is_still_agui(
    keyed: tuple[Server, str],
) -> None:
    server, key = keyed
    body = {
        "threadId": "slow-thread",
        "runId": "run-1",
        "messages": [{"id": "m1", "role": "user", "content": "Ping?"}],
    }
    lines = _lines(server, key, "/ag-ui/chief", body)
    events = [
        EVENTS.validate_json(line.removeprefix("data: ")) for line in lines if line[:5] == "data:"
    ]

    assert _pings_before_text(lines, "TEXT_MESSAGE_CONTENT") >= 1
    assert isinstance(events[0], core.RunStartedEvent)
    assert isinstance(events[-1], core.RunFinishedEvent)
    said = "".join(e.delta for e in events if isinstance(e, core.TextMessageContentEvent))
    assert said.startswith('Here is how I would approach "Ping?"')


def test_a_keepalive_stands_alone_between_events(
    keyed: tuple[Server, str],
) -> None:
    """A comment is a keep-alive, never part of an event: each one stands alone between
    blank lines."""
    server, key = keyed
    body = {"model": "chief", "stream": True, "messages": [{"role": "user", "content": "Hi"}]}
    lines = _lines(server, key, "/v1/chat/completions", body)
    assert any(line.startswith(":") for line in lines)
    for i, line in enumerate(lines):
        if line.startswith(":"):
            assert i == 0 or lines[i - 1] == "", lines[i - 1 : i + 1]
