"""A rule that can never work is refused when it is saved (issue 31 item 6): a
``state.transition`` the conversation's state table forbids from every state its trigger
can find the conversation in failed every matching turn (``invalid_transition``, "something
unexpected went wrong"); now POST and PATCH answer 422 naming the action's ``to``, and
nothing is written. A move that can happen is kept and works."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from harness import Server, new_conversation, running_server, turn

WORDS = {"field": "message.content", "operator": "contains", "value": "close it"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with running_server(tmp_path_factory.mktemp("rule_checks")) as s:
        yield s


@pytest.fixture
def client(server: Server) -> Iterator[httpx.Client]:
    with server.client() as c:
        yield c


def _rule(*actions: dict[str, Any], trigger: str = "message.received") -> dict[str, Any]:
    return {
        "name": "move",
        "trigger": trigger,
        "conditions": {"logic": "and", "conditions": [WORDS]},
        "actions": list(actions),
    }


def _move(to: str) -> dict[str, Any]:
    return {"type": "state.transition", "params": {"to": to}}


def _names(client: httpx.Client) -> list[str]:
    return [r["name"] for r in client.get("/api/rules").json() if r.get("source") == "api"]


@pytest.mark.parametrize(
    ("actions", "field"),
    [
        ([_move("agent_active")], "actions[0].params.to"),  # only a handoff leads there
        (
            [{"type": "message.send", "params": {"content": "Closing."}}, _move("archived"),
             _move("resolved")],
            "actions[2].params.to",  # archived is final
        ),
    ],
)  # fmt: skip
def test_a_move_no_message_can_make_is_refused_at_save(
    client: httpx.Client, actions: list[dict[str, Any]], field: str
) -> None:
    before = _names(client)
    refused = client.post("/api/rules", json=_rule(*actions))
    assert refused.status_code == 422, refused.text
    error = refused.json()["error"]
    assert error["details"]["field"] == field
    assert "would fail every time" in error["message"]
    assert _names(client) == before, "nothing was stored"


def test_a_patch_to_such_a_move_is_refused_and_the_rule_is_unchanged(
    client: httpx.Client,
) -> None:
    made = client.post("/api/rules", json=_rule(_move("resolved")))
    assert made.status_code == 201, made.text
    rule = made.json()
    patched = client.patch(f"/api/rules/{rule['id']}", json={"actions": [_move("agent_active")]})
    assert patched.status_code == 422, patched.text
    assert patched.json()["error"]["details"]["field"] == "actions[0].params.to"
    kept = client.get(f"/api/rules/{rule['id']}").json()
    assert kept["actions"] == rule["actions"] and kept["version"] == rule["version"]
    client.delete(f"/api/rules/{rule['id']}")


def test_a_move_that_can_happen_is_kept_and_works(client: httpx.Client) -> None:
    made = client.post("/api/rules", json=_rule(_move("resolved")))
    assert made.status_code == 201, made.text
    later = client.post(
        "/api/rules",
        json=_rule(_move("agent_active"), trigger="handoff.requested"),
    )
    assert later.status_code == 201, "a handoff's rule may find the conversation pending"
    cid = new_conversation(client)
    events = turn(client, cid, "thanks, please close it")
    assert events[-1]["data"]["status"] == "completed", events[-1]
    assert client.get(f"/api/conversations/{cid}").json()["state"] == "resolved"
    for r in (made.json(), later.json()):
        client.delete(f"/api/rules/{r['id']}")
