"""A step that meets a temporary problem shows "Retrying" while it waits out its backoff,
then the truth: failed, with the reason."""

from __future__ import annotations

import socket
from typing import Any

from playwright.sync_api import Page, expect

from harness import new_conversation


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


CLOSED = _closed_port()  # allowed, but nothing listens there: every call fails to connect
SERVER_ENV = {"HANSA_OUTBOUND_ALLOW": f"127.0.0.1:{CLOSED}"}

# Every text the task's badge showed, in order (the retry window is short).
WATCH_BADGES = """() => {
    window.__badges = [];
    new MutationObserver(() => {
        const badge = document.querySelector('.run-card .task .badge');
        const seen = window.__badges;
        if (badge && seen[seen.length - 1] !== badge.textContent) seen.push(badge.textContent);
    }).observe(document.body, {subtree: true, childList: true, characterData: true});
}"""


def test_a_retried_step_shows_retrying_then_fails_truthfully(
    page: Page, panel: Any, api: Any
) -> None:
    cid = new_conversation(api.client)
    task = {
        "stepGroup": "A",
        "taskType": "webhook.call",
        "createdByAgentId": "notificationAgent",
        "parameters": {"url": f"http://127.0.0.1:{CLOSED}/hook", "method": "GET"},
        "summary": "Tell the shop the page is live",
    }
    run = api.post("/api/runs", {"conversationId": cid, "title": "Notify", "tasks": [task]})
    panel.open(cid)
    card = page.locator(".run-card, .plan-card").first
    expect(card).to_be_visible()
    page.evaluate(WATCH_BADGES)
    api.post(f"/api/runs/{run['id']}/approve")

    run_card = page.locator(".run-card")
    expect(run_card.locator(".pill")).to_have_text("Failed")
    row = run_card.locator(".task").first
    expect(row.locator(".badge")).to_have_text("Failed")
    expect(panel.answer("could not be reached")).to_be_visible()  # Hans says why, in plain words
    badges = page.evaluate("window.__badges")
    assert badges.count("Retrying") == 2, badges  # two retries after the first attempt
    assert badges[-1] == "Failed"
