"""The activity indicator (seed 000 §10.4): each word stays up for a visible moment.

Routing, planning and validation entries are written in the same transaction as what
follows them, so they reach the panel in bursts; the panel holds each word for at least
``MIN_SHOW_MS`` (activity.js) before the next. A MutationObserver records every word the
indicator shows, with the time it appeared.
"""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Page, expect

from harness import events_until, new_conversation, run_done

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


def _last_word(page: Page) -> str:
    words: list[list[Any]] = page.evaluate("window.__words")
    return str(words[-1][0]) if words else ""


def test_the_indicator_ends_with_its_turn_and_after_a_run_approved_in_the_chat(
    page: Page, panel, api
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
    conversation = api.post("/api/conversations", {"projectId": project["id"]})
    panel.open(conversation["id"])
    page.evaluate(WATCH_WORDS)
    panel.send(SERVICES)
    panel.answer("Before I plan this I need a few details")
    expect(page.locator(".activity")).to_be_hidden()
    panel.send(ANSWERS)
    expect(page.locator(".plan-card .pill")).to_have_text("Waiting for your approval")
    expect(page.locator(".activity")).to_be_hidden()  # the planning turn's done ended it
    assert "Planning" in _shown(page)
    panel.send("yes, proceed")
    expect(page.locator(".run-card .pill")).to_have_text("Completed")
    panel.answer("Done: Create the Services page")
    expect(page.locator(".activity")).to_be_hidden()
    page.wait_for_timeout(1500)  # nothing queued comes back after the run's end
    expect(page.locator(".activity")).to_be_hidden()
    assert _last_word(page) == "", page.evaluate("window.__words")

    panel.open(conversation["id"])  # replayed from the start: the same end
    expect(page.locator(".run-card .pill")).to_have_text("Completed")
    expect(page.locator(".activity")).to_be_hidden()


def _completed_run(api, cid: str, title: str, slug: str) -> dict[str, Any]:
    params = {"title": title, "slug": slug, "contentHtml": f"<h1>{title}</h1>"}
    task = {
        "stepGroup": "A",
        "taskType": "create_page",
        "parameters": params,
        "createdByAgentId": "webEngineer",
    }
    card: dict[str, Any] = api.post(
        "/api/runs", {"conversationId": cid, "title": title, "tasks": [task]}
    )
    api.post(f"/api/runs/{card['id']}/approve")
    events_until(api.client, cid, run_done(card["id"]))
    return card


def test_the_indicator_ends_after_an_undo_on_the_card_or_in_the_chat(
    page: Page, panel, api
) -> None:
    cid = new_conversation(api.client)
    _completed_run(api, cid, "Card sale page", "card-sale")
    panel.open(cid)
    run = page.locator(".run-card", has_text="Card sale page")
    expect(run.locator(".pill")).to_have_text("Completed")
    page.evaluate(WATCH_WORDS)
    run.get_by_role("button", name="Undo 1 step of Card sale page").click()
    page.get_by_role("dialog", name="Undo this run?").get_by_role(
        "button", name="Undo the steps"
    ).click()
    expect(run.locator(".pill")).to_have_text("Rolled back")
    panel.answer("I rolled back “Card sale page”")
    expect(page.locator(".activity")).to_be_hidden()  # the undo's summary ends it

    chat = new_conversation(api.client)
    _completed_run(api, chat, "Chat sale page", "chat-sale")
    panel.open(chat)
    page.evaluate(WATCH_WORDS)
    panel.send("undo that")
    panel.answer("Undo “Chat sale page”?")
    expect(page.locator(".activity")).to_be_hidden()
    panel.send("yes, undo it")
    panel.answer("I rolled back “Chat sale page”")
    expect(page.locator(".run-card", has_text="Chat sale page").locator(".pill")).to_have_text(
        "Rolled back"
    )
    expect(page.locator(".activity")).to_be_hidden()
    assert _last_word(page) == "", page.evaluate("window.__words")


# Feeds the panel's own Activity (activity.js) events as the stream delivers them, replayed
# (applied at once): a planning turn, its done, then a late event of that turn; a run to its
# end. Returns the word shown after each step ("" when hidden).
FEED = """async () => {
    const { Activity } = await import('/activity.js');
    const act = new Activity(() => 'Hans', () => false);
    const word = () => (act.el.hidden ? '' : act.word.textContent.replace(/…$/, ''));
    const ev = (type, data = {}, ids = {}) => act.update({ type, data, agentId: 'chief', ...ids });
    const t = { turnId: 't1' };
    const seen = {};
    ev('session', {}, t); ev('routing', {}, t);
    ev('thinking', { phase: 'planning', summary: 'Hans is planning' }, t);
    ev('plan', {}, t);
    seen.planned = word();
    ev('done', { status: 'completed' }, t);
    seen.planningTurnDone = word();
    ev('plan', {}, t);
    ev('thinking', { phase: 'planning', summary: 'late' }, t);
    seen.lateEventOfTheEndedTurn = word();
    const r = { runId: 'r1' };
    ev('run_status', { status: 'running' }, { turnId: 't2', runId: 'r1' });
    ev('done', { status: 'completed' }, { turnId: 't2' });
    seen.runGoesOn = word();
    ev('task_status', { status: 'in_progress' }, { ...r, taskId: 'k1' });
    ev('task_status', { status: 'completed' }, { ...r, taskId: 'k1' });
    ev('run_status', { status: 'completed' }, r);
    ev('thinking', { phase: 'validation', summary: 'Hans is summing up' }, r);
    ev('message', { kind: 'assistant', content: 'Done' }, r);
    ev('done', { status: 'completed' }, r);
    seen.runDone = word();
    ev('thinking', { phase: 'validation', summary: 'Hans is summing up the undo' }, r);
    ev('message', { kind: 'assistant', content: 'I rolled back' }, r);
    seen.undoSummed = word();
    return seen;
}"""


def test_each_word_ends_with_its_turn_or_run(page: Page, panel) -> None:
    panel.open()
    seen = page.evaluate(FEED)
    assert seen == {
        "planned": "Planning",
        "planningTurnDone": "",
        "lateEventOfTheEndedTurn": "",
        "runGoesOn": "Executing",
        "runDone": "",
        "undoSummed": "",
    }
