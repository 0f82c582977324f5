"""Planning beyond the first four playbooks (seed 000 §16.1): a DNS change plans a ticket for
the Technical Lead, and a change no plan can be drafted for makes Hans ask what it is,
never one agent answering about a change it cannot make."""

from __future__ import annotations

import json
from pathlib import Path

from hansa.engine.planning import kinds
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


def test_a_dns_change_is_planned_as_a_ticket_for_the_technical_lead(server: Server) -> None:
    request = "Point the www CNAME of aquaverter.ca to our new host"
    with server.client() as client:
        cid = new_conversation(client, projectId=wordpress_project(client))
        first = turn(client, cid, request)
        second = turn(client, cid, "timing: tonight after 22:00")
        plan = next(e for e in second if e["type"] == "plan")["data"]
        approved = turn(client, cid, "yes, proceed")
        events_until(client, cid, run_done(plan["runId"]), after=approved[-1]["seq"])
        card = client.get(f"/api/runs/{plan['runId']}").json()

    thinking = [e["data"]["summary"] for e in first if e["type"] == "thinking"]
    assert any(t.startswith("Hans chose a planning run: it changes") for t in thinking)
    (questions,) = hans_says(first)
    assert "Timing" in questions and "Change" not in questions, "the request is the change"
    (step,) = [s for stage in plan["plan"]["stages"] for s in stage["steps"]]
    assert (step["owner"], step["taskType"]) == ("technicalLead", "create_ticket")
    assert request in step["parameters"]["description"]
    assert "tonight after 22:00" in step["parameters"]["description"]
    (task,) = [t for g in card["groups"] for t in g["tasks"]]
    assert card["status"] == "completed" and task["result"]["ticketId"]


def test_with_no_plan_drafted_hans_asks_which_kind_of_change_it_is(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"purpose": "plan", "text": "I would rather not."}]))
    ticket = next(i for i, p in enumerate(kinds.offered(), start=1) if p.id == "ticket")
    with running_server(tmp_path, model=f"scripted:{script}") as server, server.client() as client:
        cid = new_conversation(client)
        first = turn(client, cid, "Install the newsletter form on the site")
        second = turn(client, cid, str(ticket))
        third = turn(client, cid, "subject: newsletter form on the site; priority: normal")

    asked = hans_says(first)
    assert len(asked) == 1, "Hans asks; no agent answers about the change"
    assert "Which of these is it closest to?" in asked[0]
    assert all(p.offer in asked[0] for p in kinds.offered())
    speakers = {e["agentId"] for e in first if e["type"] == "message"}
    assert speakers <= {"chief", None}
    (created,) = [e for e in first if e["type"] == "run_created"]
    assert created["data"]["status"] == "planning"
    (questions,) = hans_says(second)
    assert "Goal: A ticket for the team" in questions and "Subject" in questions
    plan = next(e for e in third if e["type"] == "plan")
    assert plan["runId"] == created["runId"], "the run opened at the first question"
