"""The run card's Undo (issue 16 item 3): asked first, then the run is rolled back live."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Page, expect

from harness import events_until, new_conversation, run_done


def test_undo_on_the_run_card_rolls_the_run_back(page: Page, panel, api, artifacts: Path) -> None:
    cid = new_conversation(api.client)
    params = {"title": "Spring sale", "slug": "spring-sale", "contentHtml": "<h1>Sale</h1>"}
    card = api.post(
        "/api/runs",
        {
            "conversationId": cid,
            "title": "Spring sale page",
            "tasks": [
                {
                    "stepGroup": "A",
                    "taskType": "create_page",
                    "parameters": params,
                    "createdByAgentId": "webEngineer",
                    "summary": "Create the Spring sale page",
                }
            ],
        },
    )
    panel.open(cid)
    page.locator(".plan-card").get_by_role("button", name="Approve", exact=True).click()
    events_until(api.client, cid, run_done(card["id"]))
    page_id = api.get(f"/api/runs/{card['id']}")["groups"][0]["tasks"][0]["result"]["pageId"]

    run = page.locator(".run-card", has_text="Spring sale page")
    expect(run.locator(".pill")).to_have_text("Completed")
    undo = run.get_by_role("button", name="Undo 1 step of Spring sale page")
    undo.click()
    dialog = page.get_by_role("dialog", name="Undo this run?")
    expect(dialog).to_contain_text("Create the Spring sale page")
    dialog.get_by_role("button", name="Cancel").click()
    expect(dialog).to_be_hidden()
    assert api.client.get(f"/api/workspace/pages/{page_id}").status_code == 200, "kept"

    undo.click()
    expect(dialog.get_by_role("button", name="Undo the steps")).to_be_focused()
    page.screenshot(path=str(artifacts / "undo_dialog.png"))
    dialog.get_by_role("button", name="Undo the steps").click()

    expect(run.locator(".pill")).to_have_text("Rolled back")
    expect(run.locator(".task").first).to_have_attribute("data-status", "undone")
    expect(run.locator(".task .badge").first).to_have_text("Undone")
    expect(undo).to_be_hidden()
    panel.answer("I rolled back “Spring sale page”")
    expect(page.get_by_text("Web Engineer Nico undid: Create the Spring sale page")).to_be_visible()
    assert api.client.get(f"/api/workspace/pages/{page_id}").status_code == 404
