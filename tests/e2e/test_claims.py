"""Claim/defer turn-taking through the real server: several rules claim a message, one
responds; external assistants claim within the window, and late claims are refused; an
agent's token claims as itself, an admin key for a named participant, a member not."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from apikeys import client as keyed_client
from apikeys import create_key, error_code

from harness import Server, events_until, new_conversation, post, running_server, turn


@pytest.fixture(scope="module")
def windowed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with running_server(
        tmp_path_factory.mktemp("claims"), env={"HANSA_CLAIM_WINDOW_MS": "500"}
    ) as server:
        yield server


def _route_rule(client: httpx.Client, word: str, agent: str, priority: int) -> str:
    body = {
        "name": f"{word} to {agent}",
        "priority": priority,
        "trigger": "message.received",
        "conditions": {
            "conditions": [
                {"field": "message.content", "operator": "words", "value": [word]},
            ]
        },
        "actions": [{"type": "route", "params": {"agentId": agent, "reason": f"{word} is mine"}}],
    }
    created = client.post("/api/rules", json=body)
    assert created.status_code == 201, created.text
    rule_id: str = created.json()["id"]
    return rule_id


def _of(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == kind]


def test_two_matching_rules_claim_and_one_responds(server: Server) -> None:
    with server.client() as client:
        rules = [
            _route_rule(client, "logs", "technicalLead", 20),
            _route_rule(client, "error", "webEngineer", 10),
        ]
        events = turn(client, new_conversation(client), "The error is in the logs")
        for rule_id in rules:
            client.delete(f"/api/rules/{rule_id}")

    claims = _of(events, "assistant.intent.claim")
    assert sorted(c["data"]["assistantKey"] for c in claims) == ["technicalLead", "webEngineer"]
    (defer,) = _of(events, "assistant.intent.defer")
    assert defer["data"]["assistantKey"] == "webEngineer"
    assert defer["data"]["deferredTo"] == "technicalLead"
    (respond,) = _of(events, "assistant.action.respond")
    justification = respond["data"]["justification"]
    assert respond["data"]["assistantKey"] == "technicalLead"
    assert justification["triggerRule"] == rules[0] and justification["conditions"][0]["matched"]
    (observe,) = _of(events, "assistant.action.observe")
    assert "chief" in observe["data"]["assistantKeys"]
    assert "technicalLead" not in observe["data"]["assistantKeys"]
    assert _of(events, "routing")[0]["data"]["agentId"] == "technicalLead"
    answers = [e for e in _of(events, "message") if e["data"]["kind"] == "assistant"]
    assert len(answers) == 1 and answers[0]["agentId"] == "technicalLead"


def _external(client: httpx.Client, *keys: str) -> str:
    cid = new_conversation(client)
    patched = client.patch(f"/api/conversations/{cid}", json={"participants": ["chief", *keys]})
    assert patched.status_code == 200, patched.text
    return cid


def _claim(client: httpx.Client, cid: str, turn_id: str, key: str, **more: Any) -> httpx.Response:
    body = {"turnId": turn_id, "assistantKey": key, "justification": f"{key} knows", **more}
    return client.post(f"/api/conversations/{cid}/claims", json=body)


def _window_open(client: httpx.Client, cid: str, posted: dict[str, Any]) -> None:
    """Wait until the turn opened its claim window (as an external assistant would learn
    of it: from the conversation)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        window = client.get(f"/api/conversations/{cid}").json()["metadata"].get("claimWindow")
        if window and window["turnId"] == posted["turnId"]:
            return
        time.sleep(0.02)
    raise AssertionError("the claim window never opened")


def test_an_external_claim_in_the_window_wins_and_a_late_one_is_refused(
    windowed: Server,
) -> None:
    with windowed.client() as client:
        rule = _route_rule(client, "invoice", "clientSuccess", 10)
        cid = _external(client, "billing-bot")
        posted = post(client, cid, "Where is my invoice?")
        _window_open(client, cid, posted)
        started = time.monotonic()
        inside = _claim(client, cid, posted["turnId"], "billing-bot", priority=50)
        claimed_after = time.monotonic() - started
        events = events_until(
            client, cid, lambda e: e["type"] == "done" and e["turnId"] == posted["turnId"]
        )
        second = post(client, cid, "And the next invoice?")
        _window_open(client, cid, second)
        time.sleep(0.7)
        late = _claim(client, cid, second["turnId"], "billing-bot", priority=50)
        client.delete(f"/api/rules/{rule}")

    assert claimed_after < 0.5 and inside.status_code == 202, inside.text
    (respond,) = [e for e in _of(events, "assistant.action.respond")]
    assert respond["data"]["assistantKey"] == "billing-bot" and respond["data"]["external"]
    assert [e["data"]["assistantKey"] for e in _of(events, "assistant.intent.defer")] == [
        "clientSuccess"
    ]
    assert not [e for e in _of(events, "message") if e["data"]["kind"] == "assistant"]
    assert late.status_code == 409 and late.json()["error"]["code"] == "claim_window_closed"


def test_racing_claims_still_give_one_respond(windowed: Server, tmp_path: Path) -> None:
    with windowed.client() as client:
        cid = _external(client, "bot-a", "bot-b")
        posted = post(client, cid, "Anyone?")
        _window_open(client, cid, posted)
        answers: list[httpx.Response] = []

        def race(key: str) -> None:
            with windowed.client() as own:
                answers.append(_claim(own, cid, posted["turnId"], key, priority=5))

        threads = [threading.Thread(target=race, args=(k,)) for k in ("bot-a", "bot-b")]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        events = events_until(
            client, cid, lambda e: e["type"] == "done" and e["turnId"] == posted["turnId"]
        )

    assert sorted(a.status_code for a in answers) == [202, 202]
    assert len(_of(events, "assistant.intent.claim")) == 2
    (respond,) = _of(events, "assistant.action.respond")
    (defer,) = _of(events, "assistant.intent.defer")
    assert {respond["data"]["assistantKey"], defer["data"]["assistantKey"]} == {"bot-a", "bot-b"}


def test_an_agent_token_claims_as_itself_an_admin_for_it_and_a_member_not(
    tmp_path: Path,
) -> None:
    env = {"HANSA_CLAIM_WINDOW_MS": "3000"}  # room for every request below in one window
    with running_server(tmp_path, env=env) as server:
        admin_key, member_key = create_key(server, "acme"), create_key(server, "acme", "member")
        with keyed_client(server, admin_key) as admin:
            for agent in ("billingBot", "helperBot"):
                made = admin.post("/api/agents", json={"id": agent, "displayName": agent})
                assert made.status_code == 201, made.text
            token = admin.post("/api/agents/billingBot/tokens").json()["key"]
            cid = _external(admin, "billingBot", "helperBot")
            posted = post(admin, cid, "Where is my invoice?")
            _window_open(admin, cid, posted)
            turn_id = posted["turnId"]
            with keyed_client(server, member_key) as member:
                by_member = _claim(member, cid, turn_id, "billingBot")
            with keyed_client(server, token) as bot:
                as_another = _claim(bot, cid, turn_id, "helperBot")
                as_itself = bot.post(
                    f"/api/conversations/{cid}/claims", json={"turnId": turn_id, "priority": 50}
                )
            unnamed = admin.post(f"/api/conversations/{cid}/claims", json={"turnId": turn_id})
            for_it = _claim(admin, cid, turn_id, "helperBot", priority=10, justification="")
            events = events_until(
                admin, cid, lambda e: e["type"] == "done" and e["turnId"] == turn_id
            )

    assert by_member.status_code == 403 and error_code(by_member) == "forbidden"
    assert "member role may not claim" in by_member.json()["error"]["message"]
    assert as_another.status_code == 403 and error_code(as_another) == "forbidden"
    assert as_itself.status_code == 202, as_itself.text
    assert as_itself.json()["assistantKey"] == "billingBot"
    assert unnamed.status_code == 422 and unnamed.json()["error"]["details"]["field"] == (
        "assistantKey"
    )
    assert for_it.status_code == 202, for_it.text
    claimed = {e["data"]["assistantKey"]: e["data"] for e in _of(events, "assistant.intent.claim")}
    assert set(claimed) == {"billingBot", "helperBot"}, "the refused claims left no event"
    assert claimed["billingBot"]["justification"]["reason"] == "claimed over HTTP"
    assert "by operator user" in claimed["helperBot"]["justification"]["reason"]
    (respond,) = _of(events, "assistant.action.respond")
    assert respond["data"]["assistantKey"] == "billingBot" and respond["data"]["external"]
