"""A conversation's user through the real server (issue 31 item 1): given on create, merged
and forgotten with PATCH, refused whole when it is bad (the field named, nothing written);
its ``user.*`` facts route a VIP differently (a rule on ``user.tier``), fill a rule's
templates, and the agent's prompt carries the user pack."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from harness import Server, events_until, running_server, turn

ADA = {"id": "u-1", "displayName": "Ada", "email": "ada@vip.example", "tier": "vip", "seats": 12}
BOB = {"id": "u-2", "displayName": "Bob", "tier": "standard"}


def _open(client: httpx.Client, **body: Any) -> dict[str, Any]:
    created = client.post("/api/conversations", json=body)
    assert created.status_code == 201, created.text
    answer: dict[str, Any] = created.json()
    return answer


def _rule(client: httpx.Client, body: dict[str, Any]) -> str:
    created = client.post("/api/rules", json=body)
    assert created.status_code == 201, created.text
    return str(created.json()["id"])


def test_a_conversation_is_given_its_user_and_patch_changes_it(server: Server) -> None:
    with server.client() as client:
        convo = _open(client, title="with Ada", user=ADA)
        assert convo["user"] == ADA
        cid = convo["id"]
        assert client.get(f"/api/conversations/{cid}").json()["user"] == ADA
        plain = _open(client)
        assert plain["user"] is None
        merged = client.patch(
            f"/api/conversations/{cid}", json={"user": {"tier": "gold", "seats": None}}
        )
        assert merged.status_code == 200, merged.text
        assert merged.json()["user"] == {
            **{k: v for k, v in ADA.items() if k != "seats"},
            "tier": "gold",
        }
        named = client.patch(f"/api/conversations/{plain['id']}", json={"user": BOB})
        assert named.json()["user"] == BOB
        forgotten = client.patch(f"/api/conversations/{cid}", json={"user": None})
        assert forgotten.status_code == 200 and forgotten.json()["user"] is None
        listed = {c["id"]: c["user"] for c in client.get("/api/conversations").json()}
        assert listed[plain["id"]] == BOB and listed[cid] is None


BAD_USERS = [
    ({"displayName": "no id"}, "user.id"),  # (a PATCH merges it into a user who has one)
    ({"id": ""}, "user.id"),
    ({"id": 7}, "user.id"),
    ({"id": "u", "email": "not an address"}, "user.email"),
    ({"id": "u", "displayName": ""}, "user.displayName"),
    ({"id": "u", "plan.tier": "gold"}, "user.plan.tier"),
    ({"id": "u", "address": {"city": "Oslo"}}, "user.address"),
    ({"id": "u", "tags": [{"a": 1}]}, "user.tags"),
    ({"id": "u", "tags": list(range(51))}, "user.tags"),
    ({"id": "u", **{f"k{n}": n for n in range(60)}}, "user"),
    ({"id": "u", "note": "x" * 9000}, "user"),
    ("Ada", "user"),
]


@pytest.mark.parametrize(("user", "field"), BAD_USERS)
def test_a_bad_user_is_refused_naming_the_field_and_nothing_is_written(
    server: Server, user: Any, field: str
) -> None:
    with server.client() as client:
        before = len(client.get("/api/conversations").json())
        refused = client.post("/api/conversations", json={"title": "bad", "user": user})
        assert refused.status_code == 422, refused.text
        if isinstance(user, dict):
            assert refused.json()["error"]["details"]["field"] == field, refused.text
        assert len(client.get("/api/conversations").json()) == before
        cid = _open(client, user=BOB)["id"]
        if isinstance(user, dict) and "id" not in user:
            user = {**user, "id": ""}
        patched = client.patch(f"/api/conversations/{cid}", json={"title": "renamed", "user": user})
        assert patched.status_code == 422, patched.text
        kept = client.get(f"/api/conversations/{cid}").json()
        assert kept["user"] == BOB and kept["title"] is None, "nothing of the PATCH was written"


VIP_ROUTE = {
    "name": "VIP customers go to client success",
    "trigger": "message.received",
    "priority": 500,
    "conditions": {"conditions": [{"field": "user.tier", "operator": "eq", "value": "vip"}]},
    "actions": [
        {"type": "route", "params": {"agentId": "clientSuccess", "reason": "a VIP customer"}}
    ],
}
PHRASINGS = [
    "Can you help me with my account?",
    "Why is the site slow today?",
    "Please write a blog post about our spring sale",
]


def test_vip_customers_route_differently(server: Server) -> None:
    with server.client() as client:
        rule_id = _rule(client, VIP_ROUTE)
        try:
            vip = _open(client, user={**ADA, "tier": "vip"})["id"]
            regular = _open(client, user=BOB)["id"]
            nobody = _open(client)["id"]
            routed: dict[str, list[tuple[str, str | None]]] = {}
            seen: dict[str, list[Any]] = {}
            for cid in (vip, regular, nobody):
                for text in PHRASINGS:
                    events = turn(client, cid, text)
                    (routing,) = [e for e in events if e["type"] == "routing"]
                    (evaluated,) = [e for e in events if e["type"] == "rule_evaluated"]
                    mine = [f for f in evaluated["data"]["firings"] if f["ruleId"] == rule_id]
                    seen.setdefault(cid, []).append([f["conditions"][0]["actual"] for f in mine])
                    routed.setdefault(cid, []).append(
                        (routing["data"]["agentId"], routing["data"]["ruleId"])
                    )
        finally:
            client.delete(f"/api/rules/{rule_id}")
    assert routed[vip] == [("clientSuccess", rule_id)] * len(PHRASINGS)
    for cid in (regular, nobody):
        assert all(used != rule_id for _, used in routed[cid]), routed[cid]
    assert seen[vip] == [["vip"]] * 3, "the firing shows the actual user.tier"
    assert seen[regular] == seen[nobody] == [[]] * 3, "not matched: only counted"


def test_a_rules_templates_are_filled_from_the_user(server: Server) -> None:
    welcome = {
        "name": "welcome by name",
        "trigger": "conversation.created",
        "conditions": {
            "conditions": [
                {"field": "user.email", "operator": "ends_with", "value": "@vip.example"}
            ]
        },
        "actions": [
            {
                "type": "message.send",
                "params": {"content": "Welcome back, {{user.displayName}} ({{user.tier}})."},
            }
        ],
    }
    with server.client() as client:
        rule_id = _rule(client, welcome)
        try:
            cid = _open(client, user=ADA)["id"]
            said = events_until(
                client, cid, lambda e: e["type"] == "message" and "Welcome" in e["data"]["content"]
            )
        finally:
            client.delete(f"/api/rules/{rule_id}")
    assert said[-1]["data"]["content"] == "Welcome back, Ada (vip)."


def test_the_agents_prompt_carries_the_user_pack(tmp_path: Path) -> None:
    step = {
        "purpose": "reply",
        "text": "Hello Ada.",
        "promptHas": ["You are talking with Ada (id u-1, ada@vip.example).", "- tier: vip"],
    }
    script = tmp_path / "script.json"
    script.write_text(json.dumps([step]))
    with running_server(tmp_path, f"scripted:{script}") as server, server.client() as client:
        cid = _open(client, user=ADA)["id"]
        events = turn(client, cid, "Hi there")
    said = [e["data"]["content"] for e in events if e["type"] == "message"]
    assert "Hello Ada." in said, "the scripted step matched: the prompt held the user pack"
    usage = next(e for e in events if e["type"] == "context_usage")["data"]
    assert usage["sections"]["user"] > 0


def test_the_bridges_give_a_new_conversation_its_user(server: Server) -> None:
    """The OpenAI ``user`` field, AG-UI's ``forwardedProps.user`` and an Agent Protocol
    thread's ``metadata.user`` are the conversation's user (rules see ``user.*``)."""
    with server.client() as client:
        asked = client.post(
            "/v1/chat/completions",
            json={
                "model": "chief",
                "user": "oa-7",
                "messages": [{"role": "user", "content": "Hi"}],
            },
        )
        assert asked.status_code == 200, asked.text
        openai_cid = asked.headers["X-Hansa-Conversation-Id"]
        agui = {
            "threadId": "users-thread",
            "runId": "r1",
            "messages": [{"id": "m1", "role": "user", "content": "Hello"}],
            "state": {},
            "tools": [],
            "context": [],
            "forwardedProps": {"user": {"id": "ag-1", "tier": "vip"}},
        }
        with client.stream("POST", "/ag-ui/chief", json=agui) as streamed:
            assert streamed.status_code == 200
            agui_cid = streamed.headers["X-Hansa-Conversation-Id"]
            streamed.read()
        thread = client.post("/ap/threads", json={"metadata": {"user": {"id": "ap-1"}, "k": 1}})
        assert thread.status_code == 200, thread.text
        thread_id = thread.json()["thread_id"]
        patched = client.patch(
            f"/ap/threads/{thread_id}", json={"metadata": {"user": {"id": "ap-1", "tier": "gold"}}}
        )
        assert patched.status_code == 200, patched.text
        bad = client.post("/ap/threads", json={"metadata": {"user": {"tier": "gold"}}})
        users = {
            cid: client.get(f"/api/conversations/{cid}").json()["user"]
            for cid in (openai_cid, agui_cid)
        }
        ap_user = [
            c["user"]
            for c in client.get("/api/conversations").json()
            if (c["user"] or {}).get("id") == "ap-1"
        ]
    assert users[openai_cid] == {"id": "oa-7"}
    assert users[agui_cid] == {"id": "ag-1", "tier": "vip"}
    assert ap_user == [{"id": "ap-1", "tier": "gold"}]
    assert bad.status_code == 422 and bad.json()["error"]["details"]["field"] == "user.id"
