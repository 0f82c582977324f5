"""Escalation end to end (seed 000 §6.3): a model-drafted plan with a DNS step and an SSL
step is shown with the DNS step owned by the Technical Lead and a review by the Technical
Lead after the SSL step; the chips say so, and the run does it that way."""

from __future__ import annotations

import json
from pathlib import Path

from harness import events_until, hans_says, new_conversation, run_done, running_server, turn

DNS = "Update the DNS record for shop.aquaverter.ca"
SSL = "Renew the SSL certificate for aquaverter.ca"
PLAN = {
    "intent": "Move the shop to the new host and renew its certificate.",
    "title": "Shop move",
    "stages": [
        {
            "group": "A",
            "title": "Change",
            "steps": [
                {
                    "ref": "dns",
                    "owner": "schedulerAgent",
                    "taskType": "create_ticket",
                    "parameters": {"title": "Point shop.aquaverter.ca at the new host"},
                    "summary": DNS,
                },
                {
                    "ref": "ssl",
                    "owner": "researchAgent",
                    "taskType": "entity.create",
                    "parameters": {"entityType": "document", "name": "Certificate renewal"},
                    "summary": SSL,
                },
            ],
        },
    ],
}
NOTES = "The renewal notes look right; check the expiry date next month."


def test_risky_steps_go_to_the_technical_lead_in_the_plan_and_the_run(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    steps = [{"purpose": "plan", "text": json.dumps(PLAN)}, {"purpose": "draft", "text": NOTES}]
    script.write_text(json.dumps(steps))
    with running_server(tmp_path, model=f"scripted:{script}") as server, server.client() as client:
        # a project to place the change in (with none, Hans asks before planning)
        project = client.post("/api/projects", json={"name": "Aquaverter"}).json()
        cid = new_conversation(client, projectId=project["id"])
        # no playbook fits this request: the model drafts the plan
        shown = turn(client, cid, "Please move the shop to the new host")
        plan = next(e for e in shown if e["type"] == "plan")["data"]
        card = client.get(f"/api/runs/{plan['runId']}").json()
        approved = turn(client, cid, "yes, proceed")
        events_until(client, cid, run_done(plan["runId"]), after=approved[-1]["seq"])
        done = client.get(f"/api/runs/{plan['runId']}").json()
        chips = client.get(f"/api/conversations/{cid}/messages").json()

    # the plan as shown: Theo owns the DNS step and reviews the SSL step right after it
    stages = plan["plan"]["stages"]
    assert [s["group"] for s in stages] == ["A", "B"]
    owners = [[(s["ref"], s["owner"], s["taskType"]) for s in st["steps"]] for st in stages]
    assert owners == [
        [("dns", "technicalLead", "create_ticket"), ("ssl", "researchAgent", "entity.create")],
        [("ssl_review", "technicalLead", "review")],
    ]
    (said,) = hans_says(shown)
    assert f"Technical Lead Theo: {DNS}" in said and "Group B" in said

    # the chips, and the thinking entries that give the rule and the reason
    status = [e["data"]["text"] for e in shown if e["type"] == "status"]
    assert (
        f"Scheduler Agent Sol's step “{DNS}” is escalated to Technical Lead Theo for the DNS change"
        in status
    )
    assert (
        f"Research Agent Rui's step “{SSL}” is escalated to Technical Lead Theo for the "
        "certificate change: Theo reviews it right after"
    ) in status
    thinking = [e["data"]["summary"] for e in shown if e["type"] == "thinking"]
    assert (
        "Hans is giving step dns to Technical Lead Theo for the DNS change (rule dns)" in thinking
    )
    assert any(
        t.startswith("Hans is adding a review by Technical Lead Theo after step ssl")
        and "'workspace' capability" in t
        for t in thinking
    )
    stored = [m["content"] for m in chips if m["kind"] == "status"]
    assert set(status) <= set(stored), "the chips are messages of the conversation"

    # the run: same owners, the review ran after the SSL step and kept its notes
    tasks = [[(t["createdByAgentId"], t["taskType"]) for t in g["tasks"]] for g in card["groups"]]
    assert tasks == [
        [("technicalLead", "create_ticket"), ("researchAgent", "entity.create")],
        [("technicalLead", "review")],
    ]
    assert done["status"] == "completed"
    review = done["groups"][1]["tasks"][0]["result"]
    assert review == {
        "step": "ssl",
        "subject": SSL,
        "concern": "the certificate change",
        "notes": NOTES,
    }
