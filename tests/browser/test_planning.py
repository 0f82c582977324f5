"""Plans and runs in the panel: the Services page, adjusting a step, an irreversible task."""

from __future__ import annotations

import os
from pathlib import Path

from playwright.sync_api import Page, expect

from hansa.engine.runs.summary import FINDINGS_SHOWN
from harness import new_conversation

ROOT = Path(__file__).resolve().parents[2]
SERVICES = "Please create a new webpage called Services"
ANSWERS = "language: English; audience: homeowners; SEO: water softeners; layout B"

# Records the order in which run groups reach "done" (attribute changes, live).
WATCH_GROUPS = """() => {
    window.__groupsDone = [];
    new MutationObserver((records) => {
        for (const r of records) {
            const el = r.target;
            if (el.matches('.run-group') && el.dataset.state === 'done'
                && !window.__groupsDone.includes(el.dataset.group)) {
                window.__groupsDone.push(el.dataset.group);
            }
        }
    }).observe(document.body, {subtree: true, attributes: true, attributeFilter: ['data-state']});
}"""


def test_c_services_page_from_questions_to_completed_run(
    page: Page, panel, api, artifacts: Path
) -> None:
    project = api.post(
        "/api/projects",
        {
            "name": "Aquaverter",
            "domain": "aquaverter.ca",
            "cmsPlatform": "wordpress",
            "config": {"workspaceDrafts": True},
        },
    )
    panel.open()
    page.get_by_role("combobox", name="Project").select_option(label="Aquaverter (aquaverter.ca)")
    panel.send(SERVICES)
    questions = panel.answer("Before I plan this I need a few details")
    expect(questions.locator("ol li")).to_have_count(4)
    assert api.get(f"/api/conversations/{panel.conversation_id()}")["projectId"] == project["id"]

    panel.send(ANSWERS)
    plan = page.locator(".plan-card")
    expect(plan).to_be_visible()
    expect(plan.locator(".card-title")).to_have_text("Create the Services page")
    expect(plan.locator(".pill")).to_have_text("Waiting for your approval")
    owners = {
        group: plan.locator(f".plan-group[data-group='{group}'] .step-owner").all_inner_texts()
        for group in "ABC"
    }
    assert owners == {
        "A": ["Creative Lead Mak", "Growth Lead Dana"],
        "B": ["Web Engineer Nico"],
        "C": ["Hans"],
    }
    expect(plan.locator(".facts")).to_contain_text("water softeners")
    expect(plan.locator(".flag-irreversible")).to_have_count(0)  # nothing here is irreversible

    # Adjust one step: the page's slug.
    plan.get_by_role("button", name="Adjust step: Create the Services page at /services").click()
    slug = plan.get_by_label("slug")
    expect(slug).to_have_value("services")
    slug.fill("our-services")
    plan.get_by_role("button", name="Save step").click()
    expect(plan.locator(".flag-edited")).to_have_count(1)
    page.screenshot(path=str(artifacts / "services_plan.png"))

    page.evaluate(WATCH_GROUPS)
    plan.get_by_role("button", name="Approve with 1 change").click()
    run = page.locator(".run-card")
    expect(run.locator(".pill")).to_have_text("Completed")
    expect(plan.locator(".pill")).to_have_text("Approved")
    expect(plan.get_by_role("button", name="Approve")).to_be_hidden()
    assert page.evaluate("window.__groupsDone") == ["A", "B", "C"]
    expect(run.locator(".task[data-status='completed']")).to_have_count(4)
    expect(run.locator(".agents-involved li")).to_have_count(4)
    expect(run.locator(".run-group[data-group='A'] .thinking-toggle")).to_be_visible()
    toggle = run.locator(".card-toggle")  # the run card collapses and expands
    expect(toggle).to_have_accessible_name("Collapse run details")
    toggle.click()
    expect(run.locator(".run-body")).to_be_hidden()
    expect(toggle).to_have_attribute("aria-expanded", "false")
    toggle.press("Enter")
    expect(run.locator(".run-body")).to_be_visible()

    final = panel.answer("Done: Create the Services page")
    expect(final.locator(".msg-author")).to_have_text("Hans")
    link = final.locator("a[href^='/api/workspace/pages/']").first
    expect(link).to_be_visible()
    expect(page.locator(".activity")).to_be_hidden()

    run_id = run.get_attribute("data-run")
    card = api.get(f"/api/runs/{run_id}")
    page_task = card["groups"][1]["tasks"][0]
    assert page_task["parameters"]["slug"] == "our-services"
    page_html = api.client.get(link.get_attribute("href") or "")
    assert page_html.status_code == 200
    # the review's findings are a numbered list in the answer, as the run card has them
    findings = card["groups"][2]["tasks"][0]["result"]["findings"]
    items = final.locator("ol li")
    expect(items).to_have_count(min(len(findings), FINDINGS_SHOWN))
    assert set(items.all_inner_texts()) <= {f["message"] for f in findings}

    if os.environ.get("HANSA_DOCS_SCREENSHOT"):  # refresh the README's picture of the panel
        page.set_viewport_size({"width": 1280, "height": 1480})
        page.locator(".chip").nth(1).evaluate("el => el.scrollIntoView({block: 'start'})")
        page.mouse.move(0, 0)
        page.evaluate("document.activeElement.blur()")
        page.screenshot(path=str(ROOT / "docs" / "panel.png"))


def test_d_irreversible_task_is_confirmed_in_the_dialog(
    page: Page, panel, api, artifacts: Path
) -> None:
    cid = new_conversation(api.client)
    created = api.post(
        "/api/assistant/execute",
        {
            "conversationId": cid,
            "taskType": "create_page",
            "parameters": {"title": "Old offers", "slug": "old-offers", "contentHtml": "<p>x</p>"},
            "createdByAgentId": "webEngineer",
        },
    )
    page_id = created["details"]["pageId"]
    panel.open(cid)
    panel.answer("Done: create page: Old offers")

    api.post(
        "/api/runs",
        {
            "conversationId": cid,
            "title": "Remove the old offers page",
            "tasks": [
                {
                    "stepGroup": "A",
                    "taskType": "delete_page",
                    "parameters": {"pageId": page_id},
                    "createdByAgentId": "webEngineer",
                    "summary": "Delete the old offers page",
                }
            ],
        },
    )
    plan = page.locator(".plan-card", has_text="Remove the old offers page")
    expect(plan.locator(".flag-irreversible")).to_be_visible()
    plan.get_by_role("button", name="Approve", exact=True).click()

    run = page.locator(".run-card", has_text="Remove the old offers page")
    task = run.locator(".task").first
    expect(task).to_have_attribute("data-status", "awaiting_confirmation")
    expect(page.locator(".activity-word")).to_have_text("Waiting for you…")
    confirm = task.get_by_role("button", name="Review and confirm: Delete the old offers page")
    confirm.focus()
    page.keyboard.press("Enter")

    dialog = page.get_by_role("dialog", name="Confirm an irreversible step")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("delete_page")
    expect(dialog).to_contain_text("Delete the old offers page")
    expect(dialog).to_contain_text("Web Engineer Nico")
    expect(dialog.locator(".confirm-params")).to_contain_text(f'"pageId": "{page_id}"')
    expect(dialog.get_by_role("button", name="Confirm and run")).to_be_focused()
    page.screenshot(path=str(artifacts / "irreversible_dialog.png"))

    # Escape closes without consent; the task keeps waiting.
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    expect(task).to_have_attribute("data-status", "awaiting_confirmation")

    confirm.click()
    dialog.get_by_role("button", name="Confirm and run").click()
    expect(dialog).to_be_hidden()
    expect(task).to_have_attribute("data-status", "completed")
    expect(run.locator(".pill")).to_have_text("Completed")
    panel.answer("Done: Remove the old offers page")
    assert api.client.get(f"/api/workspace/pages/{page_id}").status_code == 404
