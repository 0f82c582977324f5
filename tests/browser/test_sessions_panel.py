"""The panel's sessions view (issue 20) in real Chromium against the real server: start a
session, watch its steps arrive live, pause, resume, interrupt with guidance, stop, delete.

``deliveryLead`` answers every step frame with plain text after SLOW_STEP seconds (a
scripted model without steps), so steps arrive one by one while the test watches;
``chief`` (the unscripted model) answers at once.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Locator, Page, expect

from harness import Server, running_server

SLOW_AGENT = "deliveryLead"
SLOW_STEP = 0.4
"""Seconds the slow agent's model takes per step."""
WIDER = "document.scrollingElement.scrollWidth - window.innerWidth"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("sessions-panel")
    script = tmp / "slow.json"
    script.write_text(json.dumps({"delaySeconds": SLOW_STEP}))
    config = tmp / "hansa.toml"
    config.write_text(f'[agents.{SLOW_AGENT}]\nmodel = "scripted:{script}"\n')
    with running_server(tmp, extra_args=("--config", str(config))) as s:
        yield s


def _steps(api: Any, sid: str) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = []
    while page := api.get(f"/api/agent-sessions/{sid}/steps?after={len(steps)}"):
        steps += page
    return steps


def _until(what: str, ok: Callable[[], Any], seconds: float = 15) -> Any:
    deadline = time.monotonic() + seconds
    while not (found := ok()):
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.05)
    return found


def _settled(api: Any, sid: str) -> int:
    """The steps recorded once a step in flight has finished: the count holds for longer
    than a step takes."""
    held, since = len(_steps(api, sid)), time.monotonic()
    while time.monotonic() - since < SLOW_STEP * 3:
        now = len(_steps(api, sid))
        if now != held:
            held, since = now, time.monotonic()
        time.sleep(0.05)
    return held


def _open_sessions(page: Page) -> Locator:
    page.get_by_role("button", name="Sessions", exact=True).click()
    view = page.locator("#sessions-view")
    expect(view).to_be_visible()
    expect(page.locator("#conversation-view")).to_be_hidden()
    expect(view.get_by_role("heading", name="Agent sessions")).to_be_visible()
    return view


def test_a_session_started_in_the_panel_streams_its_steps_and_obeys_the_controls(
    page: Page, panel: Any, api: Any, artifacts: Path
) -> None:
    goal = f"Check the delivery board {uuid.uuid4().hex[:6]}"
    panel.open()
    view = _open_sessions(page)

    # Start a session: the agent from GET /api/agents, a goal, a step limit.
    agents = {a["id"] for a in api.get("/api/agents")}
    picker = view.get_by_label("Agent", exact=True)
    offered = picker.locator("option").evaluate_all("els => els.map(e => e.value)")
    assert set(offered) == agents
    picker.select_option(SLOW_AGENT)
    view.get_by_label("Goal", exact=True).fill(goal)
    view.get_by_label("Max steps").fill("200")
    view.get_by_role("button", name="Start session").click()
    page.wait_for_url(re.compile(r"#s=.+"))
    sid = str(page.evaluate("location.hash.slice(3)"))
    stored = api.get(f"/api/agent-sessions/{sid}")
    assert (stored["agentId"], stored["goal"], stored["maxSteps"]) == (SLOW_AGENT, goal, 200)
    expect(view.locator(".session-title")).to_have_text(goal)
    pill = view.locator(".session-status")
    expect(pill).to_have_text("running")

    # Steps appear one after another without a reload, as the server records them.
    shown = view.locator(".session-step")
    expect(shown.nth(1)).to_be_visible()
    first_seen = shown.count()
    expect(shown.nth(first_seen)).to_be_visible()  # one more arrives while we watch
    for step in _steps(api, sid)[:3]:
        item = view.locator(f".session-step[data-iteration='{step['iteration']}']")
        expect(item.locator(".session-step-cursor")).to_have_text(
            f"{step['step']} → {step['nextStep']}"
        )
        expect(item.locator(".session-step-text")).to_have_text(step["text"])
    order = shown.evaluate_all("els => els.map(e => Number(e.dataset.iteration))")
    assert order == sorted(order, reverse=True), "the newest step comes first"
    page.screenshot(path=str(artifacts / "sessions_live.png"))

    # Pause: the step in flight is recorded, then none; the panel shows exactly those.
    controls = view.get_by_role("group", name="Session controls")
    controls.get_by_role("button", name="Pause").click()
    expect(pill).to_have_text("paused")
    assert api.get(f"/api/agent-sessions/{sid}")["status"] == "paused"
    held = _settled(api, sid)
    time.sleep(SLOW_STEP * 3)  # longer than several steps would take
    assert len(_steps(api, sid)) == held, "no step is recorded while paused"
    expect(shown).to_have_count(held)
    expect(controls.get_by_role("button", name="Pause")).to_be_disabled()
    expect(controls.get_by_role("button", name="Resume")).to_be_enabled()
    expect(view.locator(".facts .session-count")).to_contain_text(f"{held} of 200 steps")

    # Resume: steps go on from the one after the last recorded.
    controls.get_by_role("button", name="Resume").click()
    expect(pill).to_have_text("running")
    expect(shown.nth(held)).to_be_visible()
    assert api.get(f"/api/agent-sessions/{sid}")["status"] == "running"
    _until("steps after the resume", lambda: len(_steps(api, sid)) > held)

    # Interrupt: the guidance waits for the next step, which alone takes it.
    guidance = f"Look at the Oslo warehouse first ({uuid.uuid4().hex[:6]})"
    box = view.get_by_label("Guidance for the next step")
    box.fill(guidance)
    view.get_by_role("button", name="Interrupt").click()
    guided = view.locator(".session-step-guidance", has_text=guidance)
    expect(guided).to_have_count(1)
    expect(box).to_have_value("")
    took = _until(
        "a step with the guidance",
        lambda: [s for s in _steps(api, sid) if s["guidance"] == guidance],
    )
    after = took[0]["iteration"]
    _until("two more steps", lambda: len(_steps(api, sid)) >= after + 2)
    assert [s["iteration"] for s in _steps(api, sid) if s["guidance"] == guidance] == [after]
    expect(guided.locator("xpath=ancestor::li")).to_have_attribute("data-iteration", str(after))
    assert api.get(f"/api/agent-sessions/{sid}")["guidance"] is None
    expect(view.locator(".session-waiting")).to_be_empty()
    page.screenshot(path=str(artifacts / "sessions_guided.png"))

    # Stop: the session ends; the panel shows every step recorded and no more controls.
    controls.get_by_role("button", name="Stop").click()
    expect(pill).to_have_text("stopped")
    stopped = api.get(f"/api/agent-sessions/{sid}")
    assert (stopped["status"], stopped["reason"]) == ("stopped", "stopped")
    final = _settled(api, sid)
    assert final == api.get(f"/api/agent-sessions/{sid}")["step"]
    expect(shown).to_have_count(final)
    for name in ("Pause", "Resume", "Stop"):
        expect(controls.get_by_role("button", name=name)).to_be_disabled()
    expect(view.get_by_role("button", name="Interrupt")).to_be_disabled()

    # The list shows it as it is now.
    view.get_by_role("button", name="All sessions").click()
    page.wait_for_url(re.compile(r"#s=$"))
    row = view.locator(f".session-row[data-session-id='{sid}']")
    expect(row).to_have_attribute("data-status", "stopped")
    expect(row).to_contain_text(goal)
    expect(row.locator(".session-count")).to_have_text(f"{final} of 200 steps")
    page.screenshot(path=str(artifacts / "sessions_list.png"))


def test_the_list_shows_every_session_and_one_is_deleted(
    page: Page, panel: Any, api: Any, artifacts: Path
) -> None:
    made = api.post(
        "/api/agent-sessions", {"agentId": "chief", "goal": "Two quick steps", "maxSteps": 2}
    )
    sid = made["id"]
    _until("the session ends", lambda: api.get(f"/api/agent-sessions/{sid}")["status"] != "running")
    panel.open()
    view = _open_sessions(page)

    # Every session of the tenant, newest first, with its status, steps and reason.
    listed = [s["id"] for s in api.get("/api/agent-sessions")]
    shown = view.locator(".session-row").evaluate_all("els => els.map(e => e.dataset.sessionId)")
    assert shown == listed
    ended = api.get(f"/api/agent-sessions/{sid}")
    row = view.locator(f".session-row[data-session-id='{sid}']")
    expect(row).to_have_attribute("data-status", ended["status"])
    expect(row.locator(".session-count")).to_have_text(f"{ended['step']} of 2 steps")
    expect(row.locator(".session-reason")).to_be_visible()

    # Its detail replays the steps already recorded; on a phone nothing spills sideways.
    row.get_by_role("button", name="Open").click()
    expect(view.locator(".session-step")).to_have_count(ended["step"])
    page.set_viewport_size({"width": 390, "height": 844})
    expect(view.get_by_role("button", name="Delete")).to_be_in_viewport()
    assert page.evaluate(WIDER) == 0
    page.screenshot(path=str(artifacts / "sessions_phone.png"))

    # Deleting asks first.
    view.get_by_role("button", name="Delete").click()
    confirm = page.get_by_role("dialog", name="Delete this session?")
    confirm.get_by_role("button", name="Keep it").click()
    expect(confirm).to_be_hidden()
    assert api.client.get(f"/api/agent-sessions/{sid}").status_code == 200
    view.get_by_role("button", name="Delete").click()
    confirm.get_by_role("button", name="Delete").click()
    page.wait_for_url(re.compile(r"#s=$"))
    expect(view.locator(f".session-row[data-session-id='{sid}']")).to_have_count(0)
    assert api.client.get(f"/api/agent-sessions/{sid}").status_code == 404
