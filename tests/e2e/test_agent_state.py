"""The agent-state scratchpad (issue 19 item 6) over the real server: a tool's delta is
stored with its result and announced, the next prompt carries it, a route reads and
clears it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from harness import Server, events_until, new_conversation, running_server, turn

NOTE = {"set": {"clientWants": "a faster site"}, "append": {"questions": ["Budget?"]}}
TOO_BIG = {"set": {"blob": "x" * 17_000}}

SCRIPT: list[dict[str, Any]] = [
    {"toolCalls": [{"name": "agent_state.update", "arguments": NOTE}]},
    {"text": "Noted."},
    # the next turn's prompt carries the notes
    {"promptHas": ["your agent state, version 1", "a faster site"], "text": "A faster site."},
    {"toolCalls": [{"name": "agent_state.update", "arguments": TOO_BIG}]},
    {"text": "That was too much to note."},
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("agent-state")
    script = tmp / "clientSuccess.json"
    script.write_text(json.dumps(SCRIPT))
    (tmp / "hansa.toml").write_text(f'[agents.clientSuccess]\nmodel = "scripted:{script}"\n')
    with running_server(tmp, extra_args=("--config", str(tmp / "hansa.toml"))) as s:
        yield s


@pytest.fixture
def client(server: Server) -> Iterator[httpx.Client]:
    with server.client() as c:
        yield c


def _of(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == kind]


def test_notes_are_kept_carried_into_the_next_prompt_read_and_cleared(
    client: httpx.Client,
) -> None:
    cid = new_conversation(client)

    first = turn(client, cid, "Note what the client wants: a faster site")
    second = turn(client, cid, "What does the client want?")
    third = turn(client, cid, "Note everything about the client account")

    (result,) = _of(first, "tool_result")
    (announced,) = _of(first, "agent_state")
    state = {"clientWants": "a faster site", "questions": ["Budget?"]}
    assert result["data"]["ok"] and result["data"]["result"] == {"version": 1, "state": state}
    assert announced["data"] == {"agentId": "clientSuccess", "version": 1, "state": state}
    assert announced["seq"] == result["seq"] + 1, "written with the result that caused it"
    assert _of(second, "done")[0]["data"]["status"] == "completed", "the prompt had the notes"
    (refused,) = _of(third, "tool_result")
    assert refused["data"]["error"]["code"] == "agent_state_too_large"
    assert _of(third, "agent_state") == [], "a refused delta changes nothing"

    everyone = client.get(f"/api/conversations/{cid}/agent-state").json()
    assert [(s["agentId"], s["version"], s["state"]) for s in everyone["agentStates"]] == [
        ("clientSuccess", 1, state)
    ]
    nobody = client.get(f"/api/conversations/{cid}/agent-state", params={"agentId": "chief"})
    assert nobody.json()["agentStates"] == [
        {"conversationId": cid, "agentId": "chief", "version": 0, "state": {}, "updatedAt": None}
    ]

    cleared = client.delete(f"/api/conversations/{cid}/agent-state/clientSuccess")
    assert cleared.status_code == 200, cleared.text
    assert (cleared.json()["version"], cleared.json()["state"]) == (2, {})
    log = events_until(
        client, cid, lambda e: e["type"] == "agent_state" and e["data"]["version"] == 2
    )
    assert log[-1]["data"] == {"agentId": "clientSuccess", "version": 2, "state": {}}
    after = client.get(f"/api/conversations/{cid}/agent-state", params={"agentId": "clientSuccess"})
    assert after.json()["agentStates"][0]["state"] == {}


def test_clearing_needs_a_state_and_a_conversation_of_ones_own(client: httpx.Client) -> None:
    cid = new_conversation(client)

    none_yet = client.delete(f"/api/conversations/{cid}/agent-state/chief")
    unknown = client.get("/api/conversations/no-such-conversation/agent-state")

    assert none_yet.status_code == 404 and none_yet.json()["error"]["code"] == "not_found"
    assert unknown.status_code == 404
