"""What the user is told as a run goes (seed 000 §4.3, §9.2), through the real server: the
status chips at the moments the seed names, in order, and a timeline that says what
happened ("Page created in WordPress at …", "… failed: …"), never "task status"."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography.fernet import Fernet

from harness import (
    Server,
    events_until,
    new_conversation,
    run_done,
    running_server,
    turn,
    wordpress_project,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit" / "tasks"))
from fake_wordpress import FakeSite, serve  # noqa: E402

ANSWERS = "language: English; audience: homeowners in Quebec; SEO: water softeners; layout C"
PLACEHOLDERS = {"task status", "run status", "task created", "run created", "plan", "operation"}


@pytest.fixture(scope="module")
def site() -> Iterator[FakeSite]:
    with serve(FakeSite()) as live:
        yield live


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, site: FakeSite) -> Iterator[Server]:
    """The server, admitting the fake WordPress site."""
    env = {
        "HANSA_OUTBOUND_ALLOW": site.base_url.removeprefix("http://"),
        "HANSA_SECRET_KEY": Fernet.generate_key().decode(),
    }
    with running_server(tmp_path_factory.mktemp("story"), env=env) as s:
        yield s


def _chips(client: httpx.Client, cid: str) -> list[str]:
    found = client.get(f"/api/conversations/{cid}/messages").json()
    return [m["content"] for m in found if m["kind"] == "status"]


def _timeline(client: httpx.Client, cid: str, run_id: str) -> list[dict[str, Any]]:
    response = client.get(f"/api/conversations/{cid}/timeline", params={"runId": run_id})
    assert response.status_code == 200, response.text
    entries: list[dict[str, Any]] = response.json()
    return entries


def test_a_plan_approved_and_run_tells_its_story_in_chips_and_timeline(server: Server) -> None:
    with server.client() as client:
        cid = new_conversation(client, projectId=wordpress_project(client))
        turn(client, cid, "Please create a new webpage called Services")
        planned = turn(client, cid, ANSWERS)
        after_plan = _chips(client, cid)
        run_id = next(e for e in planned if e["type"] == "plan")["data"]["runId"]
        approved = turn(client, cid, "yes, proceed")
        events_until(client, cid, run_done(run_id), after=approved[-1]["seq"])
        chips = _chips(client, cid)
        card = client.get(f"/api/runs/{run_id}").json()
        timeline = _timeline(client, cid, run_id)

    # the chips, in order: created with the plan; queued on approval; who joins; all done
    assert after_plan == ["Run created: Create the Services page"]
    assert chips == [
        "Run created: Create the Services page",
        "4 tasks created and queued",
        "Creative Lead Mak and Growth Lead Dana are joining this run",
        "Web Engineer Nico is joining this run",
        "All tasks in this run are completed",
    ]
    # the timeline tells the run from its data
    page_task = card["groups"][1]["tasks"][0]
    url = page_task["result"]["url"]
    said = [t["summary"] for t in timeline]
    kinds = [t["kind"] for t in timeline]
    assert not PLACEHOLDERS & set(said), said
    assert "Hans created the run “Create the Services page”" in said
    plan = next(t for t in timeline if t["kind"] == "planning")
    assert plan["summary"] == (
        "Hans proposed a plan: Create the Services page (4 steps in groups A, B, C; A in parallel)"
    )
    assert f"Task create_page (Web Engineer Nico): {page_task['summary']}" in said
    assert "The run “Create the Services page” started" in said
    created = (
        f"Page created in Hansa's workspace at {url} as a draft (not on the live site: "
        "Aquaverter's WordPress site is not connected to Hansa; the project drafts its "
        "changes here until it is)"
    )
    assert created in said
    audit = card["groups"][2]["tasks"][0]["result"]
    found = len(audit["findings"])
    assert (
        f"Audit for {audit['url']}: score {audit['score']}/100, "
        f"{found} finding{'' if found == 1 else 's'}"
    ) in said
    assert kinds.count("task_completed") == 4 and kinds.count("task_in_progress") == 4
    assert "The run “Create the Services page” completed" in said
    assert "All tasks in this run are completed" in said
    done_at = said.index("The run “Create the Services page” completed")
    assert said.index(created) < done_at


def test_b_a_run_in_wordpress_says_where_the_page_is_and_why_a_step_failed(
    server: Server, site: FakeSite
) -> None:
    wordpress = {"baseUrl": site.base_url, "username": site.username, "appPassword": "pw"}
    site.app_password = "pw"
    with server.client() as client:
        made = client.post(
            "/api/projects",
            json={"name": "Live", "cmsPlatform": "wordpress", "config": {"wordpress": wordpress}},
        )
        assert made.status_code == 201, made.text
        pid = made.json()["id"]
        cid = new_conversation(client, projectId=pid)
        tasks = [
            {
                "stepGroup": "A",
                "taskType": "create_page",
                "parameters": {"title": "Services", "slug": "services", "contentHtml": "<p>x</p>"},
                "createdByAgentId": "webEngineer",
                "summary": "Create the Services page",
            },
            {
                "stepGroup": "B",
                "taskType": "update_content_block",
                "parameters": {"page": "Nowhere to be found", "html": "<p>y</p>"},
                "createdByAgentId": "webEngineer",
                "summary": "Update a page that is not there",
            },
        ]
        body = {"conversationId": cid, "projectId": pid, "title": "Live pages", "tasks": tasks}
        created = client.post("/api/runs", json=body)
        assert created.status_code == 201, created.text
        run_id = created.json()["id"]
        assert client.post(f"/api/runs/{run_id}/approve").status_code < 300
        events_until(client, cid, run_done(run_id))
        chips = _chips(client, cid)
        card = client.get(f"/api/runs/{run_id}").json()
        timeline = _timeline(client, cid, run_id)

    assert card["status"] == "failed"
    failed = card["groups"][1]["tasks"][0]
    assert failed["status"] == "failed" and failed["error"]
    assert chips == [
        "Run created: Live pages",
        "2 tasks created and queued",
        "Web Engineer Nico is joining this run",  # once, though he has two steps
    ], "no 'all tasks completed' for a failed run"
    said = [t["summary"] for t in timeline]
    assert not PLACEHOLDERS & set(said), said
    live = f"Page created on the live WordPress site at {site.base_url}/services/ as a draft"
    assert live in said
    assert f"update_content_block failed: {failed['error']}" in said
    assert "task_failed" in [t["kind"] for t in timeline]
    assert "The run “Live pages” failed" in said
