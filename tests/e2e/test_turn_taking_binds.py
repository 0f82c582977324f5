"""Turn-taking binds and is explained, through the real server (issue 31 item 5): after
two external assistants claim a message, the one that deferred may not post its answer
(409 ``deferred``) while the winner may; a newer message frees it. The timeline says who
claimed (priority, confidence, why), who deferred to whom, who watched, who answers, and
why a rule fired, each condition with the value the fact had."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from apikeys import bearer, create_key

from harness import Server, events_until, post, running_server


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    env = {"HANSA_CLAIM_WINDOW_MS": "2500"}  # room for both claims in one window
    with running_server(tmp_path_factory.mktemp("turn-taking"), env=env) as server:
        yield server


def _window_open(client: httpx.Client, cid: str, turn_id: str) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        window = client.get(f"/api/conversations/{cid}").json()["metadata"].get("claimWindow")
        if window and window["turnId"] == turn_id:
            return
        time.sleep(0.02)
    raise AssertionError("the claim window never opened")


def _done(client: httpx.Client, cid: str, turn_id: str) -> list[dict[str, Any]]:
    return events_until(client, cid, lambda e: e["type"] == "done" and e["turnId"] == turn_id)


def test_the_deferred_bot_may_not_answer_and_the_timeline_says_why(keyed: Server) -> None:
    key = create_key(keyed, "acme")
    with keyed.client(headers=bearer(key)) as admin:
        tokens = {}
        for bot, name in (("logBot", "Log Bot"), ("errBot", "Error Bot")):
            assert admin.post("/api/agents", json={"id": bot, "displayName": name}).is_success
            tokens[bot] = admin.post(f"/api/agents/{bot}/tokens").json()["key"]
        rule = admin.post(
            "/api/rules",
            json={
                "name": "logs to the technical lead",
                "trigger": "message.received",
                "priority": 20,
                "conditions": {
                    "conditions": [
                        {"field": "message.content", "operator": "contains", "value": "logs"}
                    ]
                },
                "actions": [
                    {
                        "type": "route",
                        "params": {"agentId": "technicalLead", "confidence": 0.8, "reason": "logs"},
                    }
                ],
            },
        ).json()["id"]
        cid = admin.post("/api/conversations", json={}).json()["id"]
        admin.patch(
            f"/api/conversations/{cid}", json={"participants": ["chief", "logBot", "errBot"]}
        )
        posted = post(admin, cid, "The error is in the logs")
        _window_open(admin, cid, posted["turnId"])
        for bot, confidence in (("logBot", 0.9), ("errBot", 0.95)):
            with keyed.client(headers=bearer(tokens[bot])) as as_bot:
                claimed = as_bot.post(
                    f"/api/conversations/{cid}/claims",
                    json={
                        "turnId": posted["turnId"],
                        "priority": 30,
                        "confidence": confidence,
                        "justification": f"{bot} reads logs",
                    },
                )
                assert claimed.status_code == 202, claimed.text
        _done(admin, cid, posted["turnId"])
        answers = {}
        for bot in ("logBot", "errBot"):
            with keyed.client(headers=bearer(tokens[bot])) as as_bot:
                answers[bot] = as_bot.post(
                    f"/api/conversations/{cid}/messages", json={"content": f"{bot}: it is disk"}
                )
        timeline = admin.get(f"/api/conversations/{cid}/timeline").json()
        later = post(admin, cid, "Thanks, anything else?")
        _done(admin, cid, later["turnId"])
        with keyed.client(headers=bearer(tokens["logBot"])) as as_bot:
            freed = as_bot.post(f"/api/conversations/{cid}/messages", json={"content": "No."})
        admin.delete(f"/api/rules/{rule}")

    assert answers["errBot"].status_code == 202, answers["errBot"].text
    refused = answers["logBot"]
    assert refused.status_code == 409, refused.text
    error = refused.json()["error"]
    assert error["code"] == "deferred"
    assert error["details"] == {
        "turnId": posted["turnId"],
        "deferredTo": "errBot",
        "reason": "logBot reads logs",
    }
    assert freed.status_code == 202, "a newer message frees it"
    said = {e["kind"]: e["summary"] for e in timeline if e["turnId"] == posted["turnId"]}
    lines = [e["summary"] for e in timeline]
    assert said["rule_evaluated"] == (
        f'Rule {rule} fired on message.received: message.content contains "logs" '
        '(it was "The error is in the logs")'
    )
    assert (
        "Error Bot claimed the message (priority 30, confidence 0.95): errBot reads logs" in lines
    )
    assert (
        "Log Bot deferred to Error Bot, a stronger claim; it had claimed: logBot reads logs"
        in lines
    )
    assert any(
        line.startswith("Technical") and "deferred to Error Bot" in line for line in lines
    ), lines
    assert "Error Bot is answering this message" in lines, "by its name, not its key"
    assert said["assistant.action.respond"] == (
        "Error Bot answers (from outside, on its own): errBot reads logs"
    )
    assert any(
        line.startswith("Technical")
        and 'message.content contains "logs"' in line
        and "claimed the message (priority 20, confidence 0.8)" in line
        for line in lines
    ), lines
