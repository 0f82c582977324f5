"""A plain turn in the panel: routing chip, streamed answer, thinking preview, agents."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from playwright.sync_api import Page, expect

SEO = "Please improve our SEO traffic"


def MODEL(tmp: Path) -> str:  # noqa: N802 - read by the server fixture
    """A scripted model that takes 2 s per answer, so the streaming is visible."""
    script = tmp / "slow.json"
    script.write_text(json.dumps({"delaySeconds": 2.0}))
    return f"scripted:{script}"


def test_a_turn_shows_routing_streaming_and_thinking(page: Page, panel, artifacts: Path) -> None:
    panel.open()
    panel.send(SEO)
    expect(
        page.locator(".chip", has_text="Hans is handing this off to Growth Lead Dana")
    ).to_be_visible()

    # The answer grows while it streams; the activity indicator names what is happening.
    answer = page.locator(".msg-assistant").last
    lengths: list[int] = []
    words: set[str] = set()
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        state = page.evaluate(
            """() => {
                const a = [...document.querySelectorAll('.msg-assistant')].pop();
                const act = document.querySelector('.activity');
                return {
                    length: a ? a.querySelector('.msg-body').textContent.length : 0,
                    final: !!(a && a.dataset.id),
                    activity: act.hidden ? '' : act.querySelector('.activity-word').textContent,
                };
            }"""
        )
        lengths.append(state["length"])
        words.add(state["activity"])
        if state["final"]:
            break
        page.wait_for_timeout(40)
        if 0 < state["length"] and len(set(lengths)) == 3:
            page.screenshot(path=str(artifacts / "streaming.png"))
    seen = [n for n in lengths if n > 0]
    assert seen == sorted(seen), f"the text shrank: {lengths}"
    assert len(set(seen)) >= 3, f"the answer did not stream: {lengths}"
    assert "Writing…" in words, words
    expect(answer).to_have_attribute("data-id", re.compile(r".+"))
    expect(answer.locator(".msg-author")).to_have_text("Growth Lead Dana")
    expect(answer).to_contain_text("Please improve our SEO traffic")

    # The thinking preview sits under the answer: small, grey, one line, collapsed.
    preview = answer.locator(".thinking-toggle")
    expect(preview).to_be_visible()
    expect(preview).to_have_attribute("aria-expanded", "false")
    expect(answer.locator(".thinking-list")).to_be_hidden()
    visible = preview.locator(".thinking-entry").evaluate_all(
        """els => els.filter(e => {
            const r = e.getBoundingClientRect(), box = e.parentElement.getBoundingClientRect();
            return r.width > 0 && r.top >= box.top - 1 && r.bottom <= box.bottom + 1;
        }).map(e => e.textContent)"""
    )
    assert 1 <= len(visible) <= 3, visible
    style = preview.evaluate(
        "e => { const s = getComputedStyle(e); return [s.fontSize, s.color]; }"
    )
    assert float(style[0].removesuffix("px")) <= 12.5, style
    assert preview.evaluate("e => e.getBoundingClientRect().height") < 24
    expect(page.locator(".activity")).to_be_hidden()

    # The user's message is on the right, the answer on the left.
    user_box = page.locator(".msg-user").last.bounding_box()
    answer_box = answer.bounding_box()
    assert user_box and answer_box and user_box["x"] > answer_box["x"] + 100


def test_b_thinking_list_expands_and_collapses(page: Page, panel) -> None:
    panel.open()
    panel.send("Please improve our SEO traffic for the spring campaign")
    answer = panel.answer("spring campaign")
    toggle = answer.locator(".thinking-toggle")
    items = answer.locator(".thinking-list li")

    toggle.click()
    expect(toggle).to_have_attribute("aria-expanded", "true")
    expect(answer.locator(".thinking-list")).to_be_visible()
    assert items.count() >= 3
    expect(items.first).to_contain_text("Hans is choosing Growth Lead")
    expect(toggle).to_contain_text("Thinking details")
    toggle.click()
    expect(toggle).to_have_attribute("aria-expanded", "false")
    expect(answer.locator(".thinking-list")).to_be_hidden()

    # The same with the keyboard only.
    toggle.focus()
    page.keyboard.press("Enter")
    expect(toggle).to_have_attribute("aria-expanded", "true")
    expect(answer.locator(".thinking-list")).to_be_visible()
    page.keyboard.press("Space")
    expect(toggle).to_have_attribute("aria-expanded", "false")
    expect(answer.locator(".thinking-list")).to_be_hidden()
    label = toggle.get_attribute("aria-label") or ""
    assert label.startswith("Show thinking details"), label


def test_agent_list_selects_the_agent_for_the_next_message(page: Page, panel) -> None:
    panel.open()
    agents = page.locator(".agent")
    assert agents.count() == 14
    expect(agents.first).to_have_attribute("data-agent", "chief")
    expect(agents.first).to_have_attribute("aria-checked", "true")

    # Tooltip: role summary and example prompts, on hover and on keyboard focus.
    nico = page.locator(".agent[data-agent='webEngineer']")
    nico.hover()
    tip = page.locator("#tip-webEngineer")
    expect(tip).to_be_visible()
    expect(tip).to_contain_text("Web Engineer")
    assert tip.locator("li").count() >= 1
    agents.first.focus()
    page.keyboard.press("ArrowDown")
    expect(page.locator(".agent[data-agent='deliveryLead']")).to_have_attribute(
        "aria-checked", "true"
    )
    expect(page.locator("#tip-deliveryLead")).to_be_visible()
    page.keyboard.press("Home")
    expect(agents.first).to_have_attribute("aria-checked", "true")

    # Clicking sets the active agent: a message with no routing signal goes to Nico.
    nico.click()
    expect(nico).to_have_attribute("aria-checked", "true")
    expect(page.locator("#composer-to")).to_have_text("To Web Engineer Nico")
    panel.send("Hello, what can you do for us?")
    answer = panel.answer("Hello, what can you do")
    expect(answer.locator(".msg-author")).to_have_text("Web Engineer Nico")
    expect(page.locator(".chip", has_text="handing this off")).to_have_count(0)
