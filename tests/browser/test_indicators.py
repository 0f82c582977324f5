"""The activity indicator (seed 000 §10.4): each word stays up for a visible moment.

Routing, planning and validation entries are written in the same transaction as what
follows them, so they reach the panel in bursts; the panel holds each word for at least
``MIN_SHOW_MS`` (activity.js) before the next. A MutationObserver records every word the
indicator shows, with the time it appeared.
"""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Page, expect

SERVICES = "Please create a new webpage called Services"
ANSWERS = "language: English; audience: homeowners; SEO: water softeners; layout B"
SHORTEST_MS = 400
"""What a word must last, at least (the panel holds it 500 ms; timers may fire early-ish)."""

# Records each change of the indicator: [word ("" when hidden), performance.now()].
WATCH_WORDS = """() => {
    window.__words = [];
    const act = document.querySelector('.activity');
    const word = act.querySelector('.activity-word');
    let last = null;
    const note = () => {
        const w = act.hidden ? '' : word.textContent.replace(/…$/, '');
        if (w !== last) { window.__words.push([w, performance.now()]); last = w; }
    };
    new MutationObserver(note).observe(act, {
        subtree: true, attributes: true, childList: true, characterData: true,
    });
    note();
}"""


def _shown(page: Page) -> dict[str, float]:
    """The longest time each word stayed up, in ms (the one up now: until now)."""
    words: list[list[Any]] = page.evaluate("window.__words")
    now = float(page.evaluate("performance.now()"))
    longest: dict[str, float] = {}
    for (word, start), (_, end) in zip(words, [*words[1:], ["", now]], strict=True):
        if word:
            longest[word] = max(longest.get(word, 0.0), float(end) - float(start))
    return longest


def test_each_activity_word_is_visible_for_a_moment(page: Page, panel, api) -> None:
    api.post(
        "/api/projects",
        {
            "name": "Aquaverter",
            "domain": "aquaverter.ca",
            "cmsPlatform": "wordpress",
            "config": {"workspaceDrafts": True},
        },
    )
    panel.open()
    page.evaluate(WATCH_WORDS)
    panel.send("Please improve our SEO traffic")  # a plain answer, streamed: Writing
    panel.answer("Please improve our SEO traffic")
    expect(page.locator(".activity")).to_be_hidden()

    page.get_by_role("button", name="New conversation").click()
    page.get_by_role("combobox", name="Project").select_option(label="Aquaverter (aquaverter.ca)")
    panel.send(SERVICES)
    panel.answer("Before I plan this I need a few details")
    panel.send(ANSWERS)
    plan = page.locator(".plan-card")
    expect(plan.locator(".pill")).to_have_text("Waiting for your approval")
    expect(page.locator(".activity")).to_be_hidden()
    plan.get_by_role("button", name="Approve", exact=True).click()
    expect(page.locator(".run-card .pill")).to_have_text("Completed")
    panel.answer("Done: Create the Services page")
    expect(page.locator(".activity")).to_be_hidden()

    shown = _shown(page)
    for word in ("Thinking", "Routing", "Writing", "Planning", "Executing", "Validating"):
        assert word in shown, f"{word} never showed: {page.evaluate('window.__words')}"
        assert shown[word] >= SHORTEST_MS, f"{word} flashed for {shown[word]:.0f} ms: {shown}"
