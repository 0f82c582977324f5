"""The feed's rendering rules, exercised through the panel's own modules in the browser:
model output cannot inject HTML, long answers collapse, the thinking preview fits one line."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

ATTACKS = [
    '<img src=x onerror="window.__pwned=1">',
    "<script>window.__pwned = 1</script>",
    "[click](javascript:window.__pwned=1)",
    '[x](" onmouseover="window.__pwned=1)',
    "**<b onclick=window.__pwned=1>bold</b>**",
    "`<svg onload=window.__pwned=1>`",
    'https://example.com/"><img src=x onerror=window.__pwned=1>',
]

# Renders events through the real Feed into a test area, as the panel does.
FEED = """async (events) => {
    const { Feed } = await import('/feed.js');
    const root = document.createElement('div');
    root.id = 'test-feed';
    root.className = 'feed';
    document.getElementById('feed').replaceWith(root);
    const agents = new Map((await (await fetch('/api/agents')).json()).map(a => [a.id, a]));
    const feed = new Feed(root, agents);
    events.forEach(ev => feed.apply(ev));
    await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
}"""


def _answer(seq: int, content: str, turn: str = "t1") -> dict[str, object]:
    return {
        "seq": seq,
        "type": "message",
        "turnId": turn,
        "runId": None,
        "taskId": None,
        "agentId": "growthLead",
        "createdAt": "2026-01-01T10:00:00Z",
        "data": {"messageId": f"m{seq}", "kind": "assistant", "content": content},
    }


def _thinking(seq: int, summary: str, turn: str = "t1") -> dict[str, object]:
    return {
        "seq": seq,
        "type": "thinking",
        "turnId": turn,
        "runId": None,
        "taskId": None,
        "agentId": "chief",
        "createdAt": "2026-01-01T10:00:00Z",
        "data": {"messageId": f"th{seq}", "summary": summary, "phase": "planning"},
    }


def test_markdown_is_safe_and_useful(page: Page, panel) -> None:
    panel.open()
    rendered = page.evaluate(
        """async (attacks) => {
            const { renderMarkdown } = await import('/markdown.js');
            const box = document.createElement('div');
            document.body.append(box);
            const out = attacks.map(a => { box.innerHTML = renderMarkdown(a); return {
                html: box.innerHTML,
                tags: [...box.querySelectorAll('*')].map(e => e.tagName.toLowerCase()),
                handlers: [...box.querySelectorAll('*')].flatMap(e => [...e.attributes])
                    .filter(a => a.name.startsWith('on')).length,
                hrefs: [...box.querySelectorAll('a')].map(a => a.getAttribute('href')),
            }; });
            box.remove();
            return out;
        }""",
        ATTACKS,
    )
    for attack, out in zip(ATTACKS, rendered, strict=True):
        assert set(out["tags"]) <= {"p", "strong", "em", "code", "a", "br"}, (attack, out)
        assert out["handlers"] == 0, (attack, out)
        assert all(h.startswith(("https://", "/")) for h in out["hrefs"]), (attack, out)
    page.wait_for_timeout(100)
    assert page.evaluate("window.__pwned") is None

    html = page.evaluate(
        """async () => (await import('/markdown.js')).renderMarkdown(
            'Hello **team**, *soon*:\\n\\n- one `code`\\n- [docs](https://example.com/a?b=1&c=2)'
            + '\\n\\n1. first\\n2. see /api/workspace/pages/P1.')"""
    )
    assert "<strong>team</strong>" in html and "<em>soon</em>" in html
    assert "<ul><li>one <code>code</code></li>" in html
    assert 'href="https://example.com/a?b=1&amp;c=2"' in html
    assert '<ol><li>first</li><li>see <a href="/api/workspace/pages/P1">' in html


def test_long_answers_collapse_with_a_summary(page: Page, panel, artifacts: Path) -> None:
    panel.open()
    long_text = "Here is the full audit of the site.\n\n" + "\n".join(
        f"- Finding {i}: the page needs a clearer heading and a faster image." for i in range(40)
    )
    page.evaluate(FEED, [_answer(1, long_text), _answer(2, "A short answer.", turn="t2")])
    long_answer = page.locator("#test-feed .msg-assistant").first
    expect(long_answer.locator(".msg-summary")).to_have_text("Here is the full audit of the site.")
    expect(long_answer.locator(".msg-body")).to_be_hidden()
    more = long_answer.locator("button.more")
    expect(more).to_have_text("Show the full answer")
    more.focus()
    page.keyboard.press("Enter")
    expect(long_answer.locator(".msg-body")).to_be_visible()
    expect(long_answer.locator(".msg-body li")).to_have_count(40)
    expect(more).to_have_attribute("aria-expanded", "true")
    page.keyboard.press("Enter")
    expect(long_answer.locator(".msg-body")).to_be_hidden()
    short = page.locator("#test-feed .msg-assistant").nth(1)
    expect(short.locator(".more")).to_have_count(0)
    expect(short.locator(".msg-body")).to_have_text("A short answer.")
    page.screenshot(path=str(artifacts / "long_answer.png"))


@pytest.mark.parametrize(("width", "most"), [(1280, 3), (390, 1)])
def test_thinking_preview_shows_what_fits_on_one_line(
    page: Page, panel, width: int, most: int
) -> None:
    page.set_viewport_size({"width": width, "height": 800})
    panel.open()
    entries = ["Hans is routing", "Hans checks inputs", "Hans lists tasks", "Hans checks laws"]
    events = [_thinking(i + 1, s) for i, s in enumerate(entries)] + [_answer(9, "Ready.")]
    page.evaluate(FEED, events)
    preview = page.locator("#test-feed .thinking-preview")
    shown = preview.locator(".thinking-entry").evaluate_all(
        """els => els.filter(e => {
            const r = e.getBoundingClientRect(), box = e.parentElement.getBoundingClientRect();
            return r.width > 0 && r.top >= box.top - 1 && r.bottom <= box.bottom + 1;
        }).map(e => e.textContent)"""
    )
    assert 1 <= len(shown) <= most, shown
    assert shown[0] == "Hans checks laws"  # the newest entry is always shown
    toggle = page.locator("#test-feed .thinking-toggle")
    expect(toggle).to_have_attribute("aria-label", "Show thinking details (4 entries)")
    toggle.click()
    expect(page.locator("#test-feed .thinking-list li")).to_have_text(entries)
