"""The typed agent state with a budget (issue 32 item 3) over the real server: typed
deltas, an assumption never deleted, the state reconciled at the turn's end to its share
of the window, carried as a counted section of the next prompt (``promptHas``), cut and
reported when the window is short, and cleared (and announced) when the conversation is
resolved."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from harness import Server, events_until, new_conversation, running_server, turn

WINDOW = 8_192
"""The scripted model's context window."""
BUDGET = int(WINDOW * 0.15)
"""The state's share of it (``agent_notes.STATE_SHARE``)."""
GOAL = "Make the client's shop load in under two seconds"
FACTS = [f"Client fact {i:02}: " + "the checkout page detail " * 4 for i in range(60)]
HYPOTHESIS = {"id": "a1", "hypothesis": "The client pays monthly", "confidence": 0.6}
NOTE = {
    "set": {"goal": GOAL, "clientMood": "impatient"},
    "append": {
        "facts": FACTS,
        "openQuestions": ["What is the client's budget?"],
        "assumptions": [HYPOTHESIS],
    },
}

SCRIPT: list[dict[str, Any]] = [
    # turn 1: a typed note, then an attempt to delete an assumption
    {"toolCalls": [{"name": "agent_state.update", "arguments": NOTE}]},
    {"toolCalls": [{"name": "agent_state.update", "arguments": {"unset": ["assumptions"]}}]},
    {"text": "Noted."},
    # turn 2: the reconciled state rides in the prompt, newest facts kept
    {
        "promptHas": [
            "your agent state, version 2",
            f"Goal: {GOAL}",
            "Open question: What is the client's budget?",
            "Assumption a1 (confidence 0.6): The client pays monthly",
            "Client fact 59",
        ],
        "promptLacks": ["Client fact 00", "clientMood"],
        "text": "A fast shop.",
    },
    # turn 3: a long message leaves the state less than its share: cut, the goal kept
    {"promptHas": [f"Goal: {GOAL}"], "promptLacks": ["Client fact 30:"], "text": "Understood."},
    # the resolve test
    {"toolCalls": [{"name": "agent_state.update", "arguments": {"set": {"goal": "Refund"}}}]},
    {"text": "Noted the refund."},
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("agent-state-budget")
    script = tmp / "clientSuccess.json"
    script.write_text(json.dumps(SCRIPT))
    (tmp / "hansa.toml").write_text(
        f'[agents.clientSuccess]\nmodel = "scripted:{script}"\n'
        "[agents.clientSuccess.model_settings]\nmax_tokens = 2000\n"
    )
    with running_server(tmp, extra_args=("--config", str(tmp / "hansa.toml"))) as s:
        yield s


@pytest.fixture
def client(server: Server) -> Iterator[httpx.Client]:
    with server.client() as c:
        yield c


def _of(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == kind]


def _usage(events: list[dict[str, Any]]) -> dict[str, Any]:
    (usage,) = _of(events, "context_usage")
    data: dict[str, Any] = usage["data"]
    return data


def _completed(events: list[dict[str, Any]]) -> bool:
    return bool(_of(events, "done")[0]["data"]["status"] == "completed")


def test_a_typed_state_is_reconciled_carried_counted_and_cut(client: httpx.Client) -> None:
    cid = new_conversation(client)

    first = turn(client, cid, "Note what the client wants for the client's shop")
    second = turn(client, cid, "What does the client want?")
    usage = _usage(second)
    # the third message leaves the state half of what it took: the window less what is
    # always sent, the packs and the state's half
    fixed = sum(v for k, v in usage["sections"].items() if k not in ("state", "history"))
    room = WINDOW - (fixed - usage["sections"]["message"]) - usage["sections"]["state"] // 2
    long = "About the client: " + "the client wants speed. " * ((room - 4) * 4 // 24)
    assert 1_000 < len(long) <= 20_000, f"the squeeze needs a message of {len(long)} chars"
    third = turn(client, cid, long)
    stored = client.get(
        f"/api/conversations/{cid}/agent-state", params={"agentId": "clientSuccess"}
    )

    noted, refused = _of(first, "tool_result")
    assert noted["data"]["ok"] and noted["data"]["result"]["state"]["facts"] == FACTS
    assert refused["data"]["error"]["code"] == "invalid_input"
    assert "never deleted" in refused["data"]["error"]["message"]
    announced = _of(first, "agent_state")
    assert [a["data"]["version"] for a in announced] == [1, 2], "changed, then reconciled"
    reconciled = announced[-1]["data"]["state"]
    assert announced[-1]["seq"] < _of(first, "done")[0]["seq"], "reconciled before done"
    assert reconciled["goal"] == GOAL and reconciled["assumptions"] == [HYPOTHESIS]
    assert "clientMood" not in reconciled, "a free note goes first"
    kept = reconciled["facts"]
    assert 0 < len(kept) < len(FACTS) and kept == FACTS[-len(kept) :], "the newest facts stay"

    assert _completed(second), "the prompt held the reconciled notes (promptHas)"
    assert 0 < usage["sections"]["state"] <= usage["budgets"]["state"] == BUDGET
    assert not [d for d in usage["dropped"] if d["section"] == "state"], "it fits whole"

    assert _completed(third), "the goal stayed in the prompt (promptHas)"
    squeezed = _usage(third)
    (cut,) = [d for d in squeezed["dropped"] if d["section"] == "state"]
    assert cut["what"].startswith("agent state v2: ") and cut["tokens"] > 0
    assert 0 < squeezed["sections"]["state"] < usage["sections"]["state"]
    assert squeezed["sections"]["state"] <= squeezed["budgets"]["state"] < BUDGET
    assert stored.json()["agentStates"][0]["state"] == reconciled, "cut in the prompt only"


def test_resolving_the_conversation_clears_the_agents_state(client: httpx.Client) -> None:
    cid = new_conversation(client)
    noted = turn(client, cid, "Note that the client wants a refund")
    handed = client.post(f"/api/conversations/{cid}/handoff", json={"reason": "refund"})
    hid = handed.json()["id"]
    client.post(f"/api/handoffs/{hid}/accept", json={"assignee": "Ana"})

    before = client.get(f"/api/conversations/{cid}/agent-state").json()["agentStates"]
    resolved = client.post(f"/api/handoffs/{hid}/resolve")
    after = client.get(f"/api/conversations/{cid}/agent-state").json()["agentStates"]
    version = before[0]["version"] + 1
    log = events_until(
        client, cid, lambda e: e["type"] == "agent_state" and e["data"]["version"] == version
    )

    assert _of(noted, "agent_state")[0]["data"]["state"] == {"goal": "Refund"}
    assert resolved.status_code == 200, resolved.text
    assert client.get(f"/api/conversations/{cid}").json()["state"] == "resolved"
    assert [(s["agentId"], s["state"]) for s in before] == [("clientSuccess", {"goal": "Refund"})]
    assert [(s["agentId"], s["version"], s["state"]) for s in after] == [
        ("clientSuccess", version, {})
    ]
    assert log[-1]["data"] == {"agentId": "clientSuccess", "version": version, "state": {}}
    assert log[-1]["turnId"] is None, "announced with the move, outside any turn"
