"""The panel's automation views (issue 17) in real Chromium against the real server: the
rules list (enable/disable, last firings) and the handoff queue with the human's view."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from playwright.sync_api import Locator, Page, expect

from harness import new_conversation, turn

WORDS = ["okapi"]
"""A word no other test writes, so only these tests' messages fire these rules."""


def _rule(api: Any, name: str, priority: int) -> dict[str, Any]:
    body = {
        "name": name,
        "priority": priority,
        "trigger": "message.received",
        "conditions": {
            "conditions": [{"field": "message.content", "operator": "words", "value": WORDS}]
        },
        "actions": [{"type": "context.update", "params": {"set": {"seen": name}}}],
    }
    rule: dict[str, Any] = api.post("/api/rules", body)
    return rule


def _rules_sheet(page: Page) -> Locator:
    page.get_by_role("button", name="Rules", exact=True).click()
    sheet = page.get_by_role("dialog", name="Rules")
    expect(sheet).to_be_visible()
    return sheet


def test_rules_list_toggles_a_rule_and_shows_its_firings(
    page: Page, panel, api, artifacts: Path
) -> None:
    kept = _rule(api, "okapi sightings are noted", 5)
    switched = _rule(api, "okapi sightings, switched off", 4)
    panel.open()

    # Every stored rule is listed with its trigger and priority; none has fired yet.
    sheet = _rules_sheet(page)
    rows = {r["id"]: sheet.locator(f".rule[data-rule-id='{r['id']}']") for r in (kept, switched)}
    for rule in (kept, switched):
        row = rows[rule["id"]]
        expect(row).to_contain_text(rule["name"])
        expect(row.locator(".rule-trigger")).to_have_text(rule["trigger"])
        expect(row).to_contain_text(f"priority {rule['priority']}")
        expect(row).to_contain_text("Never fired")
        expect(row.get_by_role("switch")).to_be_checked()
    listed = sheet.locator(".rule").evaluate_all("els => els.map(e => e.dataset.ruleId)")
    assert listed == [r["id"] for r in api.get("/api/rules")]

    # Turned off in the panel: off over HTTP too.
    sheet.get_by_role("switch", name=switched["name"]).click()
    expect(rows[switched["id"]]).to_have_attribute("data-enabled", "false")
    assert api.get(f"/api/rules/{switched['id']}")["enabled"] is False
    sheet.get_by_role("button", name="Close the rules").click()

    # A message fires the enabled rule only; its firing names the conversation.
    panel.send("An okapi walked past the window")
    panel.answer("okapi")
    cid = panel.conversation_id()
    fired = api.get(f"/api/rules/{kept['id']}/firings")
    assert [f["conversationId"] for f in fired] == [cid]
    assert api.get(f"/api/rules/{switched['id']}/firings") == []

    sheet = _rules_sheet(page)
    expect(rows[kept["id"]]).to_contain_text("Last fired")
    expect(rows[switched["id"]]).to_contain_text("Never fired")
    expect(rows[switched["id"]].get_by_role("switch")).not_to_be_checked()
    rows[kept["id"]].get_by_role("button", name="Last firings").click()
    firing = rows[kept["id"]].locator(".firing")
    expect(firing).to_have_count(len(fired))
    expect(firing.first).to_have_attribute("data-conversation-id", cid)
    expect(firing.first).to_contain_text(fired[0]["trigger"])
    expect(firing.first).to_contain_text("context.update")
    page.screenshot(path=str(artifacts / "rules_list.png"))

    # Its conversation opens from the firing.
    sheet.get_by_role("button", name="Close the rules").click()
    page.get_by_role("button", name="New conversation").click()
    expect(page.locator(".welcome")).to_be_visible()
    sheet = _rules_sheet(page)
    rows[kept["id"]].get_by_role("button", name="Last firings").click()
    rows[kept["id"]].locator(".firing").first.get_by_role("button").click()
    expect(sheet).to_be_hidden()
    assert panel.conversation_id() == cid
    expect(page.locator(".msg-user", has_text="An okapi walked past")).to_be_visible()

    for rule in (kept, switched):
        api.client.delete(f"/api/rules/{rule['id']}")


def _handoff(api: Any, reason: str, priority: str) -> tuple[str, dict[str, Any]]:
    cid = new_conversation(api.client, title=reason)
    turn(api.client, cid, f"Hello, I need help: {reason}")
    handoff: dict[str, Any] = api.post(
        f"/api/conversations/{cid}/handoff", {"reason": reason, "priority": priority}
    )
    return cid, handoff


def test_a_person_accepts_a_handoff_writes_and_gives_it_back(
    page: Page, panel, api, artifacts: Path
) -> None:
    cid, handoff = _handoff(api, "a billing question", "normal")
    _, urgent = _handoff(api, "an urgent outage", "urgent")
    hid = handoff["id"]

    # The user's view says that no assistant will answer.
    panel.open(cid)
    held = page.locator("#held-notice")
    expect(held).to_be_visible()
    expect(held).to_contain_text("the assistants will not answer")
    expect(page.locator("#composer-to")).to_have_text("To the human colleague")

    # The queue: waiting handoffs in the server's order (priority, then age).
    page.get_by_role("button", name=re.compile("^Handoffs")).click()
    queue = page.get_by_role("dialog", name="Handoff queue")
    row = queue.locator(f".handoff[data-handoff-id='{hid}']")
    expect(row).to_contain_text("a billing question")
    expect(row).to_have_attribute("data-status", "pending")
    pending = [h["id"] for h in api.get("/api/handoffs?status=pending")]
    shown = queue.locator(".handoff[data-status='pending']").evaluate_all(
        "els => els.map(e => e.dataset.handoffId)"
    )
    assert shown == pending and shown.index(urgent["id"]) < shown.index(hid)
    expect(page.locator("#handoff-count")).to_have_text(str(len(pending)))
    page.screenshot(path=str(artifacts / "handoff_queue.png"))

    # Accepting needs a name, then opens the human's view of the conversation.
    queue.get_by_label(re.compile("Your name")).fill("")
    row.get_by_role("button", name="Accept").click()
    expect(queue.get_by_role("alert")).to_contain_text("name")
    queue.get_by_label(re.compile("Your name")).fill("Ana Berg")
    row.get_by_role("button", name="Accept").click()
    page.wait_for_url(re.compile(f"#h={hid}$"))
    view = page.locator("#human-view")
    expect(view).to_be_visible()
    expect(page.locator("#conversation-view")).to_be_hidden()
    expect(view).to_have_attribute("data-status", "active")
    expect(view.locator(".human-title")).to_have_text("a billing question")
    expect(view.locator(".msg-user")).to_contain_text("I need help: a billing question")
    expect(view.locator(".chip", has_text="Ana Berg took over")).to_be_visible()
    accepted = api.get(f"/api/handoffs/{hid}")
    assert accepted["status"] == "active" and accepted["assignee"] == "Ana Berg"

    # The person writes; the message is stored as the human's.
    box = view.get_by_label("Reply as Ana Berg")
    box.fill("Ana here, let me check your invoice")
    box.press("Enter")
    said = view.locator(".msg-human", has_text="Ana here, let me check")
    expect(said).to_be_visible()
    expect(said.locator(".msg-author")).to_have_text("Ana Berg")
    stored = [
        m for m in api.get(f"/api/conversations/{cid}/messages") if "Ana here" in m["content"]
    ]
    assert [m["author"] for m in stored] == ["human"]
    page.screenshot(path=str(artifacts / "human_view.png"))

    # The user's view shows the person's message and who holds the conversation.
    view.get_by_role("button", name="See it as the user does").click()
    expect(page.locator("#conversation-view")).to_be_visible()
    expect(page.locator("#feed .msg-human", has_text="Ana here")).to_be_visible()
    expect(held).to_contain_text("Ana Berg has this conversation")
    page.screenshot(path=str(artifacts / "handoff_user_view.png"))

    # Back in the human's view, the person gives the conversation back.
    page.go_back()
    expect(view).to_be_visible()
    view.get_by_role("button", name="Return to the assistants").click()
    expect(view).to_have_attribute("data-status", "returned")
    expect(view.get_by_role("button", name="Resolve")).to_be_disabled()
    expect(box).to_be_disabled()
    assert api.get(f"/api/handoffs/{hid}")["status"] == "returned"
    assert api.get(f"/api/conversations/{cid}")["state"] == "idle"
    view.get_by_role("button", name="See it as the user does").click()
    expect(held).to_be_hidden()
    expect(page.locator("#composer-to")).to_have_text(re.compile("^To Hans"))


def test_a_person_resolves_an_accepted_handoff(page: Page, panel, api) -> None:
    cid, handoff = _handoff(api, "a contract to sign", "high")
    hid = handoff["id"]
    api.post(f"/api/handoffs/{hid}/accept", {"assignee": "Bo"})
    panel.open()

    page.get_by_role("button", name=re.compile("^Handoffs")).click()
    queue = page.get_by_role("dialog", name="Handoff queue")
    row = queue.locator(f".handoff[data-handoff-id='{hid}']")
    expect(row).to_have_attribute("data-status", "active")
    expect(row).to_contain_text("Bo has it")
    row.get_by_role("button", name="Open").click()

    view = page.locator("#human-view")
    expect(view).to_have_attribute("data-status", "active")
    view.get_by_role("button", name="Resolve").click()
    expect(view).to_have_attribute("data-status", "resolved")
    expect(view.locator(".held-notice")).to_contain_text("Resolved")
    assert api.get(f"/api/handoffs/{hid}")["status"] == "resolved"
    assert api.get(f"/api/conversations/{cid}")["state"] == "resolved"
    for status in ("pending", "active"):
        assert hid not in [h["id"] for h in api.get(f"/api/handoffs?status={status}")]
