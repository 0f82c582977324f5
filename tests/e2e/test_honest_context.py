"""Honest context (seed 000 §6.2, §7.3, §11.1): Hans never guesses where a change lands.

A WordPress project that is not connected gets the choice to connect it or to draft in
the workspace; a conversation with no project is asked which project; the plan says where
each change lands; and the run exists, in ``planning``, from Hans's first question.
"""

from __future__ import annotations

import re
from typing import Any

import httpx

from harness import Server, hans_says, new_conversation, turn

REQUEST = "Please create a new webpage called Services"
ANSWERS = "language: English; audience: homeowners; SEO: water softeners; layout A"


def _project(client: httpx.Client, name: str, **body: Any) -> str:
    made = client.post("/api/projects", json={"name": name, **body})
    assert made.status_code == 201, made.text
    return str(made.json()["id"])


def _opened_run(events: list[dict[str, Any]]) -> str:
    (created,) = [e for e in events if e["type"] == "run_created"]
    assert created["data"]["status"] == "planning"
    return str(created["runId"])


def test_an_unconnected_site_is_a_choice_and_the_plan_says_where_it_lands(server: Server) -> None:
    with server.client() as client:
        pid = _project(client, "Aquaverter", domain="aquaverter.ca", cmsPlatform="wordpress")
        cid = new_conversation(client, projectId=pid)
        first = turn(client, cid, REQUEST)
        run_id = _opened_run(first)
        opened = client.get(f"/api/runs/{run_id}").json()
        second = turn(client, cid, "B, draft it in the workspace")
        third = turn(client, cid, ANSWERS)
        shown = client.get(f"/api/runs/{run_id}").json()

    (asked,) = hans_says(first)
    assert "Aquaverter's WordPress site is not connected" in asked
    assert "can't change aquaverter.ca" in asked and "A)" in asked and "B)" in asked
    assert opened["status"] == "planning" and opened["groups"] == []
    (questions,) = hans_says(second)
    assert "I will draft this in Hansa's workspace" in questions and "Language" in questions
    assert not [e for e in second if e["type"] == "run_created"], "the same run, still planning"
    (plan_text,) = hans_says(third)
    assert "Where the changes land:" in plan_text
    assert "create_page): Hansa's workspace, as a draft for Aquaverter (not on its live site)" in (
        plan_text
    )
    # the plan fills the run opened at the first question: no second run
    plan = next(e for e in third if e["type"] == "plan")
    assert plan["runId"] == run_id
    assert shown["status"] == "awaiting_approval" and len(shown["groups"]) == 3


def test_waiting_for_the_site_puts_the_plan_aside(server: Server) -> None:
    with server.client() as client:
        pid = _project(client, "Aquaverter", domain="aquaverter.ca", cmsPlatform="wordpress")
        cid = new_conversation(client, projectId=pid)
        run_id = _opened_run(turn(client, cid, REQUEST))
        answer = turn(client, cid, "A — I will connect it first")
        run = client.get(f"/api/runs/{run_id}").json()
        convo = client.get(f"/api/conversations/{cid}").json()

    (said,) = hans_says(answer)
    assert "connect the site under Projects" in said and "Nothing was changed" in said
    assert run["status"] == "cancelled"
    assert "planning" not in convo["metadata"]


def test_a_connected_site_is_named_in_the_plan(server: Server) -> None:
    site = {"baseUrl": "https://aquaverter.example", "username": "hans", "appPassword": "x y z"}
    with server.client() as client:
        pid = _project(
            client,
            "Aquaverter",
            domain="aquaverter.ca",
            cmsPlatform="wordpress",
            config={"wordpress": site},
        )
        cid = new_conversation(client, projectId=pid)
        first = turn(client, cid, REQUEST)
        second = turn(client, cid, ANSWERS)

    (questions,) = hans_says(first)
    assert "not connected" not in questions and "Language" in questions
    (plan_text,) = hans_says(second)
    assert "create_page): the live WordPress site at aquaverter.ca" in plan_text


def test_with_no_project_in_focus_hans_asks_which_and_every_task_carries_it(
    server: Server,
) -> None:
    drafts = {"workspaceDrafts": True}
    with server.client() as client:
        _project(
            client, "Aquaverter", domain="aquaverter.ca", cmsPlatform="wordpress", config=drafts
        )
        nordic = _project(client, "Nordic Pools", domain="nordicpools.ca", config=drafts)
        cid = new_conversation(client)
        first = turn(client, cid, REQUEST)
        run_id = _opened_run(first)
        vague = turn(client, cid, "the usual one")
        chosen = turn(client, cid, "Nordic Pools")
        turn(client, cid, ANSWERS)
        card = client.get(f"/api/runs/{run_id}").json()

    (asked,) = hans_says(first)
    assert "Which project is this for?" in asked
    # the tenant's projects, by name (this module's server holds the other tests' too)
    assert re.search(r"^\d+\. Aquaverter \(aquaverter\.ca\)$", asked, re.M)
    assert re.search(r"^\d+\. Nordic Pools \(nordicpools\.ca\)$", asked, re.M)
    thinking = [e["data"]["summary"] for e in first if e["type"] == "thinking"]
    assert "Hans found no project in focus and is asking which project this is for" in thinking
    assert "Which project is this for?" in hans_says(vague)[0], "asked again, not guessed"
    (next_questions,) = hans_says(chosen)
    assert next_questions.startswith("Project: Nordic Pools.")
    assert "A new Services page for Nordic Pools" in next_questions
    tasks = [t for g in card["groups"] for t in g["tasks"]]
    assert card["status"] == "awaiting_approval" and card["projectId"] == nordic
    assert tasks and {t["projectId"] for t in tasks} == {nordic}


def test_asked_twice_for_the_project_the_plan_is_put_aside(server: Server) -> None:
    with server.client() as client:
        _project(client, "Aquaverter")
        cid = new_conversation(client)
        run_id = _opened_run(turn(client, cid, REQUEST))
        turn(client, cid, "hmm")
        last = turn(client, cid, "not sure")
        run = client.get(f"/api/runs/{run_id}").json()

    (said,) = hans_says(last)
    assert "I won't guess it" in said and "Nothing was changed" in said
    assert run["status"] == "cancelled"
