"""The supervisor is Hans by id: a roster ordering that lists another agent first changes
only the display order, never who routes, plans and summarises."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from harness import (
    Server,
    events_until,
    hans_says,
    new_conversation,
    run_done,
    running_server,
    turn,
    wordpress_project,
)

CONFIG = """
[agents.deliveryLead]
ordering = 0

[agents.chief]
ordering = 20
"""
ANSWERS = "language: English; audience: homeowners in Quebec; SEO: water softeners; layout C"


@pytest.fixture(scope="module")
def reordered(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("reordered")
    config = tmp / "hansa.toml"
    config.write_text(CONFIG)
    with running_server(tmp, extra_args=("--config", str(config))) as server:
        yield server


def test_the_roster_shows_the_configured_order(reordered: Server) -> None:
    with reordered.client() as client:
        agents = client.get("/api/agents").json()
    assert agents[0]["id"] == "deliveryLead"
    assert agents[-1]["id"] == "chief"


def test_hans_still_routes_plans_and_summarises(reordered: Server) -> None:
    with reordered.client() as client:
        routed = turn(client, new_conversation(client), "Please improve our SEO traffic")
        cid = new_conversation(client, projectId=wordpress_project(client))
        turn(client, cid, "Please create a new webpage called Services")
        planned = turn(client, cid, ANSWERS)
        run_id = next(e for e in planned if e["type"] == "plan")["data"]["runId"]
        approval = turn(client, cid, "yes, proceed")
        finished = events_until(client, cid, run_done(run_id), after=approval[-1]["seq"])

    routing = next(e for e in routed if e["type"] == "routing")
    assert routing["agentId"] == "chief" and routing["data"]["agentId"] == "growthLead"
    plan = next(e for e in planned if e["type"] == "plan")
    assert plan["agentId"] == "chief"
    shown = [e for e in planned if e["type"] == "message" and e["data"]["kind"] == "assistant"]
    assert shown and all(e["agentId"] == "chief" for e in shown)
    assert [e["agentId"] for e in finished if e["type"] == "done"] == ["chief"]
    assert any("Services" in text for text in hans_says(finished))
