"""A change of an existing page of a connected WordPress site (issue 30, gap 3): the page is
looked up on the site before Hans plans, as the step will; a name the site does not have is
said and asked about, and the addition lands on the site's page."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from harness import (
    Server,
    events_until,
    execute_task,
    hans_says,
    new_conversation,
    run_done,
    running_server,
    turn,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit" / "tasks"))
from fake_wordpress import FakeSite, serve  # noqa: E402


@pytest.fixture(scope="module")
def site() -> Iterator[FakeSite]:
    with serve(FakeSite()) as live:
        yield live


@pytest.fixture(scope="module")
def connected(tmp_path_factory: pytest.TempPathFactory, site: FakeSite) -> Iterator[Server]:
    env = {"HANSA_OUTBOUND_ALLOW": site.base_url.removeprefix("http://")}
    with running_server(tmp_path_factory.mktemp("wp"), env=env) as server:
        yield server


def _project(client: httpx.Client, site: FakeSite) -> tuple[str, str]:
    config = {
        "wordpress": {
            "baseUrl": site.base_url,
            "username": site.username,
            "appPassword": site.app_password,
        }
    }
    body = {"name": "Aquaverter WP", "cmsPlatform": "wordpress", "config": config}
    pid = client.post("/api/projects", json=body).json()["id"]
    return pid, new_conversation(client, projectId=pid)


def test_a_page_of_the_site_is_found_by_name_and_the_addition_lands_on_it(
    connected: Server, site: FakeSite
) -> None:
    with connected.client() as client:
        pid, cid = _project(client, site)
        html = "<h1>Services</h1><p>Filters, softeners and service.</p>"
        params = {"title": "Services", "slug": "services", "contentHtml": html, "status": "publish"}
        page = execute_task(client, cid, "webEngineer", "create_page", params, projectId=pid)
        planned = turn(client, cid, "please add a FAQ section to the services page")
        missing = turn(client, cid, "cancel")
        unknown = turn(client, cid, "Add a FAQ section to the careers page")
        turn(client, cid, "cancel")
        again = turn(client, cid, "please add a FAQ section to the services page")
        run_id = next(e for e in again if e["type"] == "plan")["data"]["runId"]
        approved = turn(client, cid, "yes, proceed")
        events_until(client, cid, run_done(run_id), after=approved[-1]["seq"])
        card = client.get(f"/api/runs/{run_id}").json()

    plan = next(e for e in planned if e["type"] == "plan")["data"]
    steps = [s for stage in plan["plan"]["stages"] for s in stage["steps"]]
    assert [s["parameters"].get("page") for s in steps if s["taskType"] != "draft_content"] == [
        "Services"
    ]
    assert "dropped" in hans_says(missing)[0]
    (said,) = hans_says(unknown)
    assert "I can't find a page called “careers” in Aquaverter WP." in said
    assert "no pages I can see" not in said, "a WordPress site is searched, not listed"
    assert not any(e["type"] == "plan" for e in unknown)
    assert card["status"] == "completed", card
    stored = site.pages[int(page["pageId"])]["content"]["raw"]
    assert "Filters, softeners and service." in stored
    assert 'data-block="faq-section"' in stored
