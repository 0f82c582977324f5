"""The planning path in-process: questions, a plan, approval, and a run done group by group."""

from __future__ import annotations

import pytest

from inprocess.asgi import DRAFT_COPY, DRAFT_SEO, Event, Hansa, of_type, said

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

ANSWERS = "language: English; audience: homeowners in Quebec; SEO: water softeners; layout C"


def _first_seq(events: list[Event], task_ids: list[str], status: str) -> dict[str, int]:
    return {
        e["taskId"]: e["seq"]
        for e in reversed(of_type(events, "task_status"))
        if e["taskId"] in task_ids and e["data"]["status"] == status
    }


async def test_a_playbook_request_is_planned_approved_and_run_group_after_group(
    hansa: Hansa,
) -> None:
    cid = await hansa.conversation(projectId=await hansa.wordpress_project())
    asked = await hansa.turn(cid, "Please create a new webpage called Services")
    waiting = (await hansa.ok("GET", f"/api/conversations/{cid}"))["state"]
    planned = await hansa.turn(cid, ANSWERS)
    (plan,) = of_type(planned, "plan")
    run_id = plan["data"]["runId"]
    proposed = await hansa.ok("GET", f"/api/runs/{run_id}")

    approved = await hansa.turn(cid, "yes, proceed")
    ran = await hansa.follow(
        cid, lambda e: e["type"] == "done" and e["runId"] == run_id, after=approved[0]["seq"]
    )
    card = await hansa.ok("GET", f"/api/runs/{run_id}")
    page_task = card["groups"][1]["tasks"][0]
    page = await hansa.client.get(page_task["result"]["url"])
    drafts = await hansa.ok("GET", "/api/llm-calls", params={"runId": run_id})
    timeline = await hansa.ok("GET", f"/api/conversations/{cid}/timeline", params={"runId": run_id})

    # the request matched a playbook: Hans asks for what is missing, nothing runs yet
    (questions,) = said(asked)
    assert "Goal: A new Services page for Aquaverter" in questions
    assert all(label in questions for label in ("Language", "Audience", "SEO angle", "Layout"))
    assert waiting == "waiting_for_user"
    assert of_type(asked, "plan") == []

    # the answers complete the plan: three groups awaiting approval
    assert proposed["status"] == "awaiting_approval"
    assert [g["stepGroup"] for g in proposed["groups"]] == ["A", "B", "C"]
    owners = [[t["createdByAgentId"] for t in g["tasks"]] for g in proposed["groups"]]
    assert owners == [["creativeLead", "growthLead"], ["webEngineer"], ["chief"]]

    # approved: every task completed, and no group started before the one before it ended
    assert card["status"] == "completed"
    assert [t["status"] for g in card["groups"] for t in g["tasks"]] == ["completed"] * 4
    ids = [[t["id"] for t in g["tasks"]] for g in card["groups"]]
    every = [tid for group in ids for tid in group]
    started = _first_seq(ran, every, "in_progress")
    ended = _first_seq(ran, every, "completed")
    assert set(started) == set(ended) == set(every)
    for earlier, later in zip(ids, ids[1:], strict=False):
        assert max(ended[t] for t in earlier) < min(started[t] for t in later), (earlier, later)
    assert all(started[t] < ended[t] for t in every)

    # the FunctionModel wrote group A's drafts, and group B built the page from them
    assert sorted(c["nodeId"] for c in drafts) == sorted(ids[0])
    assert all(c["success"] for c in drafts)
    assert page.status_code == 200
    assert DRAFT_COPY.splitlines()[0] in page.text
    assert DRAFT_SEO.splitlines()[0] in page.text, "the SEO brief's meta description"

    # Hans reports the finished run, and it ends with one done, completed
    assert said(ran)[-1].startswith("Done: Create the Services page")
    assert page_task["result"]["url"] in said(ran)[-1]
    assert ran[-1]["data"]["status"] == "completed"
    assert {t["runId"] for t in timeline} == {run_id}
    assert "run_status" in [t["kind"] for t in timeline]
