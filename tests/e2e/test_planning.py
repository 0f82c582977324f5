"""The planning protocol end to end: the Services page from first message to stored page."""

from __future__ import annotations

from hansa.engine.runs.summary import FINDINGS_SHOWN
from hansa.engine.turns.stages.route import ANSWERS_THE_PLAN
from harness import (
    Server,
    events_until,
    hans_says,
    new_conversation,
    run_done,
    turn,
    wordpress_project,
)

ANSWERS = "language: English; audience: homeowners in Quebec; SEO: water softeners; layout C"


def _plan_event(events: list[dict]) -> dict:
    return next(e for e in events if e["type"] == "plan")


def test_services_page_from_first_message_to_stored_page(server: Server) -> None:
    with server.client() as client:
        cid = new_conversation(client, projectId=wordpress_project(client))
        first = turn(client, cid, "Please create a new webpage called Services")
        (questions,) = hans_says(first)
        convo = client.get(f"/api/conversations/{cid}").json()
        thinking = [e["data"]["summary"] for e in first if e["type"] == "thinking"]

        second = turn(client, cid, ANSWERS)
        plan = _plan_event(second)["data"]
        run_id = plan["runId"]
        card = client.get(f"/api/runs/{run_id}").json()
        waiting = client.get(f"/api/conversations/{cid}").json()["state"]

        third = turn(client, cid, "yes, proceed")
        run_events = events_until(client, cid, run_done(run_id), after=third[-1]["seq"])
        done_card = client.get(f"/api/runs/{run_id}").json()
        page_task = done_card["groups"][1]["tasks"][0]
        page = client.get(page_task["result"]["url"])
        timeline = client.get(f"/api/conversations/{cid}/timeline", params={"runId": run_id}).json()

    # questions: restated goal, exactly the missing inputs, three layout forks
    assert convo["state"] == "waiting_for_user"
    assert "Goal: A new Services page for Aquaverter" in questions
    for label in ("Language", "Audience", "SEO angle", "Layout"):
        assert label in questions
    assert "Page title" not in questions, "the title was in the request"
    assert all(f"{fork})" in questions for fork in "ABC")
    assert "Hans is checking the context of Aquaverter (wordpress, aquaverter.ca)" in thinking
    assert any(t.startswith("Hans chose a planning run") for t in thinking)

    # the answers mention SEO and a layout, yet nobody takes over from Hans's planning
    (routing,) = [e["data"] for e in second if e["type"] == "routing"]
    assert routing["agentId"] == routing["previousAgentId"] and routing["ruleId"] is None
    assert routing["reason"] == ANSWERS_THE_PLAN
    chips = [e["data"]["text"] for e in second if e["type"] == "status"]
    assert chips == ["Run created: Create the Services page"], "no handoff chip"
    assert "Hans is taking this as an answer about the plan" in [
        e["data"]["summary"] for e in second if e["type"] == "thinking"
    ]

    # the plan: A (Mak + Dana in parallel), B (Nico), C (Hans), awaiting approval
    assert waiting == "waiting_for_user"
    assert card["status"] == "awaiting_approval"
    owners = [[t["createdByAgentId"] for t in g["tasks"]] for g in card["groups"]]
    assert owners == [["creativeLead", "growthLead"], ["webEngineer"], ["chief"]]
    assert [g["stepGroup"] for g in card["groups"]] == ["A", "B", "C"]
    assert [s["group"] for s in plan["plan"]["stages"]] == ["A", "B", "C"]
    layout = next(r for r in plan["plan"]["requirements"] if r["name"] == "layout")
    assert layout["value"] == "C"
    (plan_text,) = hans_says(second)
    assert (
        "Group A" in plan_text and "Web Engineer Nico" in plan_text and "yes, proceed" in plan_text
    )

    # after approval: every group completes in order, the page exists, Hans reports with a link
    assert done_card["status"] == "completed"
    statuses = [t["status"] for g in done_card["groups"] for t in g["tasks"]]
    assert statuses == ["completed"] * 4
    assert page.status_code == 200 and "<title>Services</title>" in page.text
    assert page_task["parameters"]["slug"] == "services"
    final = hans_says(run_events)[-1]
    assert final.startswith("Done: Create the Services page")
    assert page_task["result"]["url"] in final
    # Hans's review (group C) is in the answer: its score and what it found
    review = done_card["groups"][2]["tasks"][0]["result"]
    assert f"score {review['score']}/100" in final
    if review["findings"]:
        assert all(f["message"] in final for f in review["findings"][:FINDINGS_SHOWN])
    else:
        assert "The review found nothing to fix." in final
    assert run_events[-1]["type"] == "done" and run_events[-1]["data"]["status"] == "completed"
    assert {t["runId"] for t in timeline} == {run_id}
    assert any(t["kind"] == "run_status" for t in timeline)
    assert all(g["thinking"] for g in done_card["groups"]), "per-group thinking in the run card"


def test_a_plan_approved_on_its_card_is_settled_for_the_chat_too(server: Server) -> None:
    with server.client() as client:
        cid = new_conversation(client, projectId=wordpress_project(client))
        turn(client, cid, "Please create a new webpage called Services")
        run_id = _plan_event(turn(client, cid, ANSWERS))["data"]["runId"]
        approved = client.post(f"/api/runs/{run_id}/approve")
        state = client.get(f"/api/conversations/{cid}").json()
        events_until(client, cid, run_done(run_id))
        after = turn(client, cid, "Please improve our SEO traffic")

    assert approved.status_code == 200
    assert "planning" not in state["metadata"] and state["state"] != "waiting_for_user"
    (answer,) = hans_says(after)
    assert "did not catch a change" not in answer and "yes, proceed" not in answer


def test_answers_can_come_in_several_messages(server: Server) -> None:
    with server.client() as client:
        cid = new_conversation(client, projectId=wordpress_project(client))
        turn(client, cid, "Please create a new webpage called About Us")
        one = turn(client, cid, "language: French")
        two = turn(client, cid, "audience: families; SEO: eau potable")
        three = turn(client, cid, "layout A")
    assert "Audience" in hans_says(one)[0] and "Language" not in hans_says(one)[0]
    remaining = hans_says(two)[0]
    assert "Layout" in remaining and "Audience" not in remaining
    plan = _plan_event(three)["data"]["plan"]
    values = {r["name"]: r["value"] for r in plan["requirements"]}
    assert values == {
        "title": "About Us",
        "slug": "about-us",
        "language": "French",
        "audience": "families",
        "seo_angle": "eau potable",
        "layout": "A",
    }


def test_adjusting_the_plan_by_message_replaces_the_run(server: Server) -> None:
    with server.client() as client:
        cid = new_conversation(client, projectId=wordpress_project(client))
        turn(client, cid, "Please create a new webpage called Services")
        first_plan = _plan_event(turn(client, cid, ANSWERS))["data"]
        adjusted = turn(client, cid, "slug: our-services")
        new_plan = _plan_event(adjusted)["data"]
        old_run = client.get(f"/api/runs/{first_plan['runId']}").json()
        new_run = client.get(f"/api/runs/{new_plan['runId']}").json()
    assert new_plan["runId"] != first_plan["runId"]
    assert old_run["status"] == "cancelled"
    assert new_run["status"] == "awaiting_approval"
    assert new_run["groups"][1]["tasks"][0]["parameters"]["slug"] == "our-services"


def test_a_plan_the_project_does_not_allow_is_refused_with_the_law_named(server: Server) -> None:
    with server.client() as client:
        pid = wordpress_project(
            client, allowedTaskTypes=["create_ticket", "run_audit", "draft_content"]
        )
        cid = new_conversation(client, projectId=pid)
        turn(client, cid, "Please create a new webpage called Services")
        events = turn(client, cid, ANSWERS)
    said = hans_says(events)
    assert not any(e["type"] == "run_created" for e in events)
    assert any("law of allowed scope" in s and "create_page" in s for s in said)


LLM_PLAN = {
    "intent": "Track the broken contact form as a ticket.",
    "title": "Ticket for the contact form",
    "stages": [
        {
            "group": "A",
            "title": "File it",
            "steps": [
                {
                    "ref": "ticket",
                    "owner": "technicalLead",
                    "taskType": "create_ticket",
                    "parameters": {"title": "Contact form is broken", "priority": "high"},
                    "summary": "File a ticket for the broken contact form",
                }
            ],
        },
    ],
}


def test_a_model_drafted_plan_passes_the_same_checks_and_runs(tmp_path) -> None:
    import json

    from harness import running_server

    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"purpose": "plan", "text": json.dumps(LLM_PLAN)}]))
    with running_server(tmp_path, model=f"scripted:{script}") as server, server.client() as client:
        cid = new_conversation(client)
        shown = turn(client, cid, "Please create a ticket for the broken contact form")
        plan = _plan_event(shown)["data"]
        approved = turn(client, cid, "yes, proceed")
        finished = events_until(client, cid, run_done(plan["runId"]), after=approved[-1]["seq"])
        card = client.get(f"/api/runs/{plan['runId']}").json()
        calls = client.get("/api/llm-calls", params={"conversationId": cid}).json()
    assert plan["plan"]["stages"][0]["steps"][0]["taskType"] == "create_ticket"
    assert card["status"] == "completed"
    assert card["groups"][0]["tasks"][0]["result"]["priority"] == "high"
    assert hans_says(finished)[-1].startswith("Done: Ticket for the contact form")
    assert [c["nodeId"] for c in calls] == ["planner"]
