"""The panel's usage view (issue 13 item 9) in real Chromium against the real server: after
turns with model calls, the view shows the totals and a bar per agent whose numbers are
those of GET /api/usage, and it loads afresh each time it is opened."""

from __future__ import annotations

import time
from typing import Any

from playwright.sync_api import Locator, Page, expect

from harness import new_conversation


def _tokens(n: int) -> str:
    return f"{n:,} tokens"


def _bar(page: Page, agent_id: str) -> Locator:
    return page.locator(f".usage-view li.usage-bar[data-agent-id='{agent_id}']")


def _graph_run(api: Any) -> str:
    """A completed run of one model node (Rui's), in a conversation of its own."""
    node = {
        "id": "research",
        "type": "llm.invoke",
        "config": {"prompt": "Research water softeners", "agentId": "researchAgent"},
    }
    graph = api.post("/api/graphs", {"name": "usage", "components": [node], "edges": []})["id"]
    cid = new_conversation(api.client)
    run = api.post(f"/api/graphs/{graph}/runs", {"conversationId": cid})["id"]
    deadline = time.monotonic() + 30
    while api.get(f"/api/runs/{run}")["status"] != "completed":
        assert time.monotonic() < deadline, "the run never completed"
        time.sleep(0.05)
    return str(run)


def _agrees(page: Page, usage: dict[str, Any], agents: dict[str, str]) -> None:
    """Each agent's bar in the view says the API's figures; the totals too."""
    view = page.get_by_role("dialog", name="Usage")
    totals = usage["totals"]
    expect(view.locator("[data-total='tokens'] .usage-total-value")).to_have_text(
        f"{totals['totalTokens']:,}"
    )
    expect(view.locator("[data-total='calls'] .usage-total-value")).to_have_text(
        f"{totals['calls']:,}"
    )
    expect(view.locator("li.usage-bar[data-agent-id]")).to_have_count(len(usage["byAgent"]))
    for row in usage["byAgent"]:
        bar = _bar(page, row["agentId"])
        expect(bar.locator(".usage-tokens")).to_have_text(_tokens(row["totalTokens"]))
        calls = f"{row['calls']} call" + ("" if row["calls"] == 1 else "s")
        expect(bar.locator(".usage-bar-numbers")).to_contain_text(calls)
        expect(bar.locator(".usage-bar-numbers")).to_contain_text("$")
        expect(bar.locator(".usage-bar-label")).to_have_text(agents[row["agentId"]])
        track = bar.locator(".usage-bar-track")
        expect(track).to_have_attribute("aria-hidden", "true")
        assert track.bounding_box() is not None
        fill = bar.locator(".usage-bar-fill").bounding_box()
        assert fill is not None and fill["width"] > 0, "a drawn bar"
    expect(view.locator("li.usage-bar[data-run-id]")).to_have_count(len(usage["byRun"]))
    for row in usage["byRun"]:
        bar = view.locator(f"li.usage-bar[data-run-id='{row['runId']}']")
        expect(bar.locator(".usage-tokens")).to_have_text(_tokens(row["totalTokens"]))
        expect(bar.locator(".usage-bar-label")).to_have_text(row["title"])


def test_the_usage_view_shows_each_agents_tokens_as_the_api_counts_them(
    page: Page, panel: Any, api: Any
) -> None:
    names = {a["id"]: a["displayName"] for a in api.get("/api/agents")}
    panel.open()
    panel.send("Please improve our SEO traffic")
    panel.answer("Please improve our SEO traffic")
    page.get_by_role("button", name="New conversation").click()  # Hans holds a new one
    panel.send("hello there")
    panel.answer("hello there")
    run = _graph_run(api)

    usage = api.get("/api/usage")
    agents = {a["agentId"] for a in usage["byAgent"]}
    assert {"growthLead", "chief", "researchAgent"} <= agents, usage
    assert [r["runId"] for r in usage["byRun"]] == [run]
    page.get_by_role("button", name="Usage", exact=True).click()
    view = page.get_by_role("dialog", name="Usage")
    expect(view).to_be_visible()
    _agrees(page, usage, names)
    widths = {
        a["agentId"]: _bar(page, a["agentId"]).locator(".usage-bar-fill").bounding_box()
        for a in usage["byAgent"]
    }
    most = usage["byAgent"][0]
    assert all(
        widths[most["agentId"]]["width"] >= w["width"]  # type: ignore[index]
        for w in widths.values()
        if w is not None
    ), "the agent with most tokens has the longest bar"

    # closed, another turn, opened again: the view asks anew
    view.get_by_role("button", name="Close the usage").click()
    expect(view).to_be_hidden()
    panel.send("hello once more")
    panel.answer("hello once more")
    again = api.get("/api/usage")
    assert again["totals"]["totalTokens"] > usage["totals"]["totalTokens"]
    page.get_by_role("button", name="Usage", exact=True).click()
    _agrees(page, again, names)
