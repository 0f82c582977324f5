"""Pages of the built-in CMS hold HTML written by agents and models; opened in a real
browser from Hansa's own origin, none of it may run."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Browser, expect

from harness import Server

HOSTILE = (
    "<p id=script>untouched</p><p id=handler>untouched</p>"
    "<script>document.getElementById('script').textContent = 'ran'</script>"
    "<img src=missing.png onerror=\"document.getElementById('handler').textContent = 'ran'\">"
)


def test_a_stored_page_runs_no_script(browser: Browser, api: Any, server: Server) -> None:
    cid = api.post("/api/conversations")["id"]
    created = api.post(
        "/api/assistant/execute",
        {
            "conversationId": cid,
            "createdByAgentId": "webEngineer",
            "taskType": "create_page",
            "parameters": {"title": "Offers <i>now</i>", "slug": "offers", "contentHtml": HOSTILE},
        },
    )
    assert created["status"] == "completed", created

    context = browser.new_context()  # its own: the blocked script's console error is expected
    try:
        page = context.new_page()
        page.goto(server.url + created["details"]["url"])
        expect(page.locator("#script")).to_have_text("untouched")
        expect(page.locator("#handler")).to_have_text("untouched")
        assert page.title() == "Offers <i>now</i>", "the title is text, not markup"
    finally:
        context.close()
