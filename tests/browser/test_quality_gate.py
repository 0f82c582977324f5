"""The quality gate in the panel: a draft the gate holds back streams, then gives way to the
answer; neither live nor after a reload does the panel show it as the answer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from playwright.sync_api import Page, expect

FALSE_CLAIM = "Done: I created the landing for you, it is live now."
HONEST = "I have not made any change yet; tell me the title and I will build it."


def MODEL(tmp: Path) -> str:  # noqa: N802 - the name conftest looks for
    script = tmp / "gate.json"
    steps = [{"text": FALSE_CLAIM, "delaySeconds": 1.0}, {"text": HONEST, "delaySeconds": 0.5}]
    script.write_text(json.dumps(steps))
    return f"scripted:{script}"


# Every text an assistant message's body showed, in order.
WATCH_ANSWERS = """() => {
    window.__said = [];
    new MutationObserver(() => {
        const body = document.querySelector('.msg-assistant .msg-body');
        const seen = window.__said;
        const text = body ? body.textContent : '';
        if (text && seen[seen.length - 1] !== text) seen.push(text);
    }).observe(document.body, {subtree: true, childList: true, characterData: true});
}"""


def test_a_superseded_draft_gives_way_to_the_answer(page: Page, panel: Any) -> None:
    panel.open()
    page.evaluate(WATCH_ANSWERS)
    panel.send("What did you do about my request?")

    answer = panel.answer(HONEST)
    expect(answer.locator(".msg-body")).to_have_text(HONEST)
    said = page.evaluate("window.__said")
    assert any("I created" in s for s in said), said  # the draft streamed first
    assert page.locator(".msg-assistant").count() == 1, "the answer replaced the draft in place"
    expect(answer).not_to_contain_text("it is live now")
    expect(answer.locator(".thinking")).to_contain_text("held back")  # why, from the engine
    cid = panel.conversation_id()

    panel.open(cid)  # a reload replays the log
    again = panel.answer(HONEST)
    expect(again.locator(".msg-body")).to_have_text(HONEST)
    assert page.locator(".msg-assistant").count() == 1
    expect(page.locator(".msg-assistant").first).not_to_contain_text("it is live now")
