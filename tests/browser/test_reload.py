"""The event log is the source of truth: a reload restores the same state, a dropped
connection resumes from the last event id, and nothing is shown twice."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playwright.sync_api import Page, Request, expect

from harness import new_conversation

# What the panel shows, reduced to comparable facts.
STATE = """() => {
    const all = (selector) => [...document.querySelectorAll(selector)];
    return {
        tasks: all('.run-card .task').map(t => [t.dataset.task, t.dataset.status]),
        groups: all('.run-card .run-group').map(g => [g.dataset.group, g.dataset.state]),
        messages: all('.msg[data-id]').map(m => m.dataset.id),
        chips: all('.chip').map(c => c.textContent),
        plans: all('.plan-card').length,
        runs: all('.run-card').length,
        thinking: all('.run-card .thinking-list').map(l => l.children.length),
        run: document.querySelector('.run-card .pill')?.textContent,
    };
}"""


def _wait_run(api: Any, cid: str, seconds: tuple[float, float, float]) -> str:
    tasks = [
        {
            "stepGroup": group,
            "taskType": "wait",
            "parameters": {"seconds": s},
            "createdByAgentId": "schedulerAgent",
            "summary": f"Wait {s:g} s in group {group}",
        }
        for group, s in zip("ABC", seconds, strict=True)
    ]
    run = api.post("/api/runs", {"conversationId": cid, "title": "Timed run", "tasks": tasks})
    return str(run["id"])


def test_e_reload_mid_run_restores_the_same_state(page: Page, panel, api, artifacts: Path) -> None:
    cid = new_conversation(api.client)
    panel.open(cid)
    panel.send("Please improve our SEO traffic")
    panel.answer("Please improve our SEO traffic")
    run_id = _wait_run(api, cid, (2, 4, 2))
    expect(page.locator(".plan-card")).to_be_visible()
    api.post(f"/api/runs/{run_id}/approve")

    group_b = page.locator(".run-group[data-group='B']")
    expect(group_b).to_have_attribute("data-state", "active", timeout=10_000)
    expect(group_b.locator(".thinking-list li")).to_have_count(2)  # "Group B: …", "… working on"
    before = page.evaluate(STATE)
    page.reload()
    expect(page.locator(".run-card .task")).to_have_count(3)
    after = page.evaluate(STATE)
    page.screenshot(path=str(artifacts / "reload_mid_run.png"))
    assert after == before
    assert before["groups"] == [["A", "done"], ["B", "active"], ["C", "pending"]]
    expect(page.locator(".activity-word")).to_have_text("Executing…")

    expect(page.locator(".run-card .pill")).to_have_text("Completed", timeout=15_000)
    panel.answer("Done: Timed run")
    _assert_no_duplicates(page, api, cid, run_id)


def test_dropped_connection_resumes_without_duplicates(page: Page, panel, api) -> None:
    cid = new_conversation(api.client)
    resumed: list[str | None] = []

    def on_request(request: Request) -> None:
        if "/events" in request.url:
            resumed.append(request.headers.get("last-event-id"))

    page.on("request", on_request)
    panel.open(cid)
    run_id = _wait_run(api, cid, (1, 1, 1))
    api.post(f"/api/runs/{run_id}/approve")
    expect(page.locator(".run-group[data-group='A']")).to_have_attribute("data-state", "active")

    # Cut the connection twice: once as a dropped stream, once with the network gone.
    page.evaluate("window.hansa.dropConnection()")
    expect(page.locator("#connection")).to_have_attribute("data-state", "open")
    page.context.set_offline(True)
    page.evaluate("window.hansa.dropConnection()")
    page.wait_for_timeout(1500)  # events keep coming on the server meanwhile
    page.context.set_offline(False)

    expect(page.locator(".run-card .pill")).to_have_text("Completed", timeout=15_000)
    panel.answer("Done: Timed run")
    assert len(resumed) >= 3, resumed
    assert resumed[0] == "0" and all(int(r or 0) > 0 for r in resumed[1:]), resumed
    _assert_no_duplicates(page, api, cid, run_id)


def _assert_no_duplicates(page: Page, api: Any, cid: str, run_id: str) -> None:
    state = page.evaluate(STATE)
    assert len(state["messages"]) == len(set(state["messages"])), state["messages"]
    assert state["plans"] == 1 and state["runs"] == 1
    stored = api.get(f"/api/conversations/{cid}/messages")
    shown = [m["id"] for m in stored if m["kind"] in ("user", "assistant")]
    assert state["messages"] == shown
    chips = [m["content"] for m in stored if m["kind"] == "status"]
    assert state["chips"] == chips
    card = api.get(f"/api/runs/{run_id}")
    assert state["thinking"] == [len(g["thinking"]) for g in card["groups"]]
