"""The panel explains turn-taking (issue 31 item 5) in real Chromium against the real server:
under the turn, its thinking list tells who claimed the message (priority, confidence,
why), who deferred to whom, who watched, who answers, and why a rule fired with the actual
value of each condition; live, and again after a reload."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from playwright.sync_api import Page, expect

SERVER_ENV = {"HANSA_CLAIM_WINDOW_MS": "3000"}  # room for both claims in one window

RULE = {
    "name": "log talk goes to the technical lead",
    "trigger": "message.received",
    "priority": 20,
    "conditions": {
        "conditions": [{"field": "message.content", "operator": "contains", "value": "okapi logs"}]
    },
    "actions": [
        {
            "type": "route",
            "params": {"agentId": "technicalLead", "confidence": 0.8, "reason": "logs"},
        }
    ],
}


def _window_open(api: Any, cid: str, turn_id: str) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if (api.get(f"/api/conversations/{cid}")["metadata"].get("claimWindow") or {}).get(
            "turnId"
        ) == turn_id:
            return
        time.sleep(0.02)
    raise AssertionError("the claim window never opened")


def test_the_thinking_list_tells_who_claimed_deferred_and_why_a_rule_fired(
    page: Page, panel: Any, api: Any, artifacts: Path
) -> None:
    for bot, name in (("logBot", "Log Bot"), ("errBot", "Error Bot")):
        api.post("/api/agents", {"id": bot, "displayName": name})
    rule = api.post("/api/rules", RULE)
    cid = api.post("/api/conversations", {"title": "turn-taking"})["id"]
    api.client.patch(
        f"/api/conversations/{cid}", json={"participants": ["chief", "logBot", "errBot"]}
    )
    panel.open(cid)
    posted = api.post(
        f"/api/conversations/{cid}/messages", {"content": "The okapi logs show an error"}
    )
    _window_open(api, cid, posted["turnId"])
    for bot, confidence in (("logBot", 0.9), ("errBot", 0.95)):
        api.post(
            f"/api/conversations/{cid}/claims",
            {
                "turnId": posted["turnId"],
                "assistantKey": bot,
                "priority": 30,
                "confidence": confidence,
                "justification": f"{bot} reads logs",
            },
        )
    expected = [
        f'Rule {rule["id"]} fired on message.received: message.content contains "okapi logs" '
        '(it was "The okapi logs show an error")',
        "Technical Lead",  # its claim from the rule, with the rule's condition
        "Error Bot claimed the message (priority 30, confidence 0.95): errBot reads logs",
        "Log Bot deferred to Error Bot, a stronger claim; it had claimed: logBot reads logs",
        "watched without answering: no rule of theirs matched",
        "Error Bot answers (from outside, on its own): errBot reads logs",
    ]

    def check() -> None:
        toggle = page.locator(".thinking-toggle").filter(has_text="Thinking").last
        expect(toggle).to_be_visible()
        if toggle.get_attribute("aria-expanded") != "true":
            toggle.click()
        listed = page.locator(".thinking-list").last
        expect(listed).to_be_visible()
        for line in expected:
            expect(listed).to_contain_text(line)
        entries = listed.locator(".thinking-entry").all_inner_texts()
        technical = [e for e in entries if e.startswith("Technical")]
        assert any(
            'message.content contains "okapi logs"' in e and "deferred" not in e for e in technical
        ), entries

    check()  # live
    page.screenshot(path=str(artifacts / "turn-taking-live.png"))
    page.reload()
    page.wait_for_selector(".agent[data-agent='chief'][aria-checked='true']")
    check()  # replayed
    api.client.delete(f"/api/rules/{rule['id']}")
