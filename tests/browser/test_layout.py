"""The panel at phone and desktop widths, and its labels for keyboard and screen readers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from harness import events_until, new_conversation, run_done, turn

# Every control must have an accessible name (aria-label, aria-labelledby, <label>, or text).
UNNAMED = """() => [...document.querySelectorAll('button, select, textarea, input, a[href]')]
    .filter(el => el.getClientRects().length)
    .filter(el => {
        const by = (el.getAttribute('aria-labelledby') || '').split(' ').filter(Boolean)
            .map(id => document.getElementById(id)?.textContent || '').join(' ');
        const labels = [...(el.labels || [])].map(l => l.textContent).join(' ');
        return !(el.getAttribute('aria-label') || by || labels || el.textContent).trim();
    })
    .map(el => el.outerHTML.slice(0, 120))"""

OVERFLOW = """() => ({
    page: document.scrollingElement.scrollWidth - window.innerWidth,
    feed: (() => { const f = document.querySelector('.feed');
                   return f.scrollWidth - f.clientWidth; })(),
    wide: [...document.querySelectorAll('.feed > *')]
        .filter(el => el.getBoundingClientRect().right > window.innerWidth + 1)
        .map(el => el.className),
})"""


@pytest.fixture(scope="module")
def services_conversation(server: Any) -> str:
    """A conversation with questions, a plan, a completed run and a final answer."""
    with server.client() as client:
        project = client.post(
            "/api/projects",
            json={
                "name": "Aquaverter",
                "domain": "aquaverter.ca",
                "cmsPlatform": "wordpress",
                "config": {"workspaceDrafts": True},
            },
        ).json()
        cid = new_conversation(client, projectId=project["id"])
        turn(client, cid, "Please create a new webpage called Services")
        events = turn(
            client, cid, "language: English; audience: homeowners; SEO: water softeners; layout B"
        )
        run_id = next(e["data"]["runId"] for e in events if e["type"] == "plan")
        last = events[-1]["seq"]
        assert client.post(f"/api/runs/{run_id}/approve", json={}).status_code == 200
        events_until(client, cid, run_done(run_id), after=last)
        return cid


@pytest.mark.parametrize("width", [390, 1280])
def test_f_layout_has_no_horizontal_overflow(
    page: Page, panel, services_conversation: str, width: int, artifacts: Path
) -> None:
    page.set_viewport_size({"width": width, "height": 844 if width == 390 else 860})
    panel.open(services_conversation)
    expect(page.locator(".run-card .pill")).to_have_text("Completed")
    for where in ("top", "bottom"):
        page.evaluate(
            f"document.getElementById('feed-scroll').scrollTo(0, {0 if where == 'top' else 1e6})"
        )
        page.screenshot(path=str(artifacts / f"layout_{width}_{where}.png"))
        overflow = page.evaluate(OVERFLOW)
        assert overflow == {"page": 0, "feed": 0, "wide": []}, overflow

    # Every part is on screen and usable.
    for selector in (".topbar", ".agents", "#composer-input", "#composer-send", ".plan-card"):
        box = page.locator(selector).first.bounding_box()
        assert box and box["x"] >= 0 and box["x"] + box["width"] <= width + 0.5, selector
    agents = page.locator(".agent")
    if width == 390:  # a horizontal strip that scrolls on its own
        first, second = agents.nth(0).bounding_box(), agents.nth(1).bounding_box()
        assert first and second and second["x"] > first["x"] and second["y"] == first["y"]
        visible = page.locator(".thinking-preview").first.locator(".thinking-entry")
        assert visible.evaluate_all("els => els.filter(e => e.offsetWidth > 0).length") == 1
    else:
        first, second = agents.nth(0).bounding_box(), agents.nth(1).bounding_box()
        assert first and second and second["y"] > first["y"]
    assert page.evaluate(UNNAMED) == []


def test_keyboard_reaches_every_part(page: Page, panel, services_conversation: str) -> None:
    panel.open(services_conversation)
    expect(page.locator(".run-card .pill")).to_have_text("Completed")
    reached: list[str] = []
    for _ in range(40):
        page.keyboard.press("Tab")
        reached.append(
            page.evaluate(
                "() => { const e = document.activeElement;"
                " return e.id || e.getAttribute('aria-label') || e.className || e.tagName; }"
            )
        )
    for expected in ("project", "conversation", "new-conversation", "composer-input"):
        assert expected in reached, reached
    assert any(str(r).startswith("Hans") for r in reached), reached  # the agent radio group
    assert page.evaluate(UNNAMED) == []
    # Landmarks and live regions for screen readers.
    expect(page.get_by_role("navigation", name="Agents")).to_be_visible()
    expect(page.get_by_role("main", name="Conversation")).to_be_visible()
    expect(page.get_by_role("log", name="Messages")).to_be_visible()
    expect(page.get_by_role("radiogroup", name="Agents")).to_be_visible()


def test_new_conversation_and_picker(page: Page, panel, api, services_conversation: str) -> None:
    panel.open(services_conversation)
    expect(page.get_by_role("combobox", name="Project")).to_have_value(
        api.get(f"/api/conversations/{services_conversation}")["projectId"]
    )
    page.get_by_role("button", name="New conversation").click()
    expect(page.locator(".welcome")).to_be_visible()
    assert page.evaluate("location.hash") == ""
    page.get_by_role("combobox", name="Project").select_option(label="Cross project")
    panel.send("Hello from a cross project conversation")
    panel.answer("Hello from a cross project conversation")
    cid = panel.conversation_id()
    assert cid != services_conversation
    assert api.get(f"/api/conversations/{cid}")["projectId"] is None

    # The picker goes back to the first conversation, and the URL keeps it.
    page.get_by_role("combobox", name="Conversation").select_option(services_conversation)
    expect(page.locator(".run-card")).to_be_visible()
    assert panel.conversation_id() == services_conversation
    page.go_back()
    expect(page.locator(".msg-user", has_text="Hello from a cross project")).to_be_visible()
