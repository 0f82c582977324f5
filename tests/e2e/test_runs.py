"""Runs and tasks over HTTP: the laws, confirmation, failure policy, parallel groups."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Any

import httpx

from harness import Server, events_until, hans_says, new_conversation, run_done


def _run(client: httpx.Client, cid: str, tasks: list[dict[str, Any]], **extra: Any) -> dict:
    response = client.post(
        "/api/runs", json={"conversationId": cid, "title": "Test run", "tasks": tasks, **extra}
    )
    assert response.status_code == 201, response.text
    return response.json()


def _task(group: str, task_type: str, params: dict, agent: str = "chief", **extra: Any) -> dict:
    return {
        "stepGroup": group,
        "taskType": task_type,
        "parameters": params,
        "createdByAgentId": agent,
        **extra,
    }


def _approve_and_finish(client: httpx.Client, cid: str, run_id: str, **body: Any) -> list[dict]:
    response = client.post(f"/api/runs/{run_id}/approve", json=body or None)
    assert response.status_code == 200, response.text
    return events_until(client, cid, run_done(run_id))


def _project(client: httpx.Client, name: str, **extra: Any) -> str:
    return str(client.post("/api/projects", json={"name": name, **extra}).json()["id"])


def test_task_types_are_listed_with_schemas(server: Server) -> None:
    with server.client() as client:
        types = {t["name"]: t for t in client.get("/api/task-types").json()}
    expected = {
        "create_page",
        "update_content_block",
        "delete_page",
        "create_product",
        "create_ticket",
        "run_audit",
        "webhook.call",
        "wait",
        "entity.create",
    }
    assert expected <= set(types)
    assert types["delete_page"]["isReversibleBySystem"] is False
    assert types["create_page"]["isReversibleBySystem"] is True
    assert set(types["create_page"]["parametersSchema"]["required"]) == {
        "title",
        "slug",
        "contentHtml",
    }


def test_cross_project_run_gives_each_task_its_project(server: Server) -> None:
    with server.client() as client:
        north, south = _project(client, "North"), _project(client, "South")
        cid = new_conversation(client)
        run = _run(
            client,
            cid,
            [
                _task("A", "create_ticket", {"title": "North ticket"}, projectId=north),
                _task("A", "create_ticket", {"title": "South ticket"}, projectId=south),
            ],
        )
        _approve_and_finish(client, cid, run["id"])
        card = client.get(f"/api/runs/{run['id']}").json()
    assert card["projectId"] is None
    tasks = card["groups"][0]["tasks"]
    assert [t["projectId"] for t in tasks] == [north, south]
    assert all(t["status"] == "completed" and t["result"]["ticketId"] for t in tasks)


def test_scope_violations_are_refused_naming_the_law(server: Server) -> None:
    with server.client() as client:
        pid = _project(client, "Locked", allowedTaskTypes=["create_ticket"])
        cid = new_conversation(client, projectId=pid)
        before = server.row_counts()
        by_project = client.post(
            "/api/runs",
            json={
                "conversationId": cid,
                "projectId": pid,
                "title": "x",
                "tasks": [
                    _task(
                        "A",
                        "create_page",
                        {"title": "T", "slug": "t", "contentHtml": "<p>x</p>"},
                        "webEngineer",
                    )
                ],
            },
        )
        by_capability = client.post(
            "/api/assistant/execute",
            json={
                "conversationId": cid,
                "createdByAgentId": "fileAgent",
                "taskType": "create_ticket",
                "parameters": {"title": "t"},
                "projectId": pid,
            },
        )
        after = server.row_counts()
    assert by_project.status_code == 403
    error = by_project.json()["error"]
    assert error["code"] == "scope_denied" and "law of allowed scope" in error["message"]
    assert "create_page" in error["message"]
    assert by_capability.status_code == 403
    assert "File Agent Finn" in by_capability.json()["error"]["message"]
    assert after == before, "a refused run leaves nothing behind"


def test_missing_parameters_become_a_question_not_a_guess(server: Server) -> None:
    with server.client() as client:
        cid = new_conversation(client)
        response = client.post(
            "/api/assistant/execute",
            json={
                "conversationId": cid,
                "createdByAgentId": "webEngineer",
                "taskType": "create_page",
                "parameters": {"title": "Services"},
            },
        )
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "missing_parameters"
    assert sorted(error["details"]["missing"]) == ["contentHtml", "slug"]
    assert "law of clarity" in error["message"]


def _make_page(client: httpx.Client, cid: str, slug: str) -> str:
    response = client.post(
        "/api/assistant/execute",
        json={
            "conversationId": cid,
            "createdByAgentId": "webEngineer",
            "taskType": "create_page",
            "parameters": {"title": slug.title(), "slug": slug, "contentHtml": "<h1>x</h1>"},
        },
    )
    assert response.status_code == 200, response.text
    assert response.json()["status"] == "completed"
    return str(response.json()["details"]["pageId"])


def test_irreversible_task_waits_for_a_confirmation_of_its_exact_parameters(server: Server) -> None:
    with server.client() as client:
        cid = new_conversation(client)
        page_id = _make_page(client, cid, "old-offers")
        run = _run(client, cid, [_task("A", "delete_page", {"pageId": page_id}, "webEngineer")])
        client.post(f"/api/runs/{run['id']}/approve")
        events = events_until(
            client,
            cid,
            lambda e: e["type"] == "task_status" and e["data"]["status"] == "awaiting_confirmation",
        )
        task = client.get(f"/api/runs/{run['id']}").json()["groups"][0]["tasks"][0]
        page_still_there = client.get(f"/api/workspace/pages/{page_id}").status_code
        stale = hashlib.sha256(json.dumps({"pageId": "other"}).encode()).hexdigest()
        refused = client.post(f"/api/tasks/{task['id']}/confirm", json={"parametersHash": stale})
        confirmed = client.post(
            f"/api/tasks/{task['id']}/confirm", json={"parametersHash": task["parametersHash"]}
        )
        finished = events_until(client, cid, run_done(run["id"]), after=events[-1]["seq"])
        final_task = client.get(f"/api/tasks/{task['id']}").json()
        page_gone = client.get(f"/api/workspace/pages/{page_id}").status_code
    assert task["status"] == "awaiting_confirmation" and task["isReversibleBySystem"] is False
    assert task["irreversibleConfirmedAt"] is None
    assert page_still_there == 200, "nothing ran before the confirmation"
    assert refused.status_code == 409
    assert confirmed.status_code == 200
    assert final_task["status"] == "completed"
    assert final_task["irreversibleConfirmedAt"] is not None
    assert page_gone == 404
    assert finished[-1]["data"]["status"] == "completed"
    chips = [e["data"]["text"] for e in events + finished if e["type"] == "status"]
    assert any("needs your confirmation" in c and "cannot be undone" in c for c in chips)


def test_changed_parameters_void_an_earlier_confirmation(server: Server) -> None:
    with server.client() as client:
        cid = new_conversation(client)
        first, second = _make_page(client, cid, "alpha"), _make_page(client, cid, "beta")
        run = _run(client, cid, [_task("A", "delete_page", {"pageId": first}, "webEngineer")])
        task = run["groups"][0]["tasks"][0]
        early = client.post(
            f"/api/tasks/{task['id']}/confirm", json={"parametersHash": task["parametersHash"]}
        )
        client.post(
            f"/api/runs/{run['id']}/approve",
            json={"edits": [{"taskId": task["id"], "parameters": {"pageId": second}}]},
        )
        events = events_until(
            client,
            cid,
            lambda e: e["type"] == "task_status" and e["data"]["status"] == "awaiting_confirmation",
        )
        after_edit = client.get(f"/api/tasks/{task['id']}").json()
        both_exist = [client.get(f"/api/workspace/pages/{p}").status_code for p in (first, second)]
    assert early.status_code == 200 and early.json()["irreversibleConfirmedAt"]
    assert after_edit["status"] == "awaiting_confirmation"
    assert after_edit["irreversibleConfirmedAt"] is None
    assert after_edit["parameters"] == {"pageId": second}
    assert both_exist == [200, 200]
    (updated,) = [e for e in events if e["type"] == "task_updated"]
    assert updated["taskId"] == task["id"] and updated["data"]["changed"] == ["parameters"]
    assert updated["data"]["parametersHash"] == after_edit["parametersHash"]
    assert updated["data"]["confirmationVoided"] is True


def test_execute_answers_202_for_an_irreversible_task(server: Server) -> None:
    with server.client() as client:
        cid = new_conversation(client)
        page_id = _make_page(client, cid, "gamma")
        response = client.post(
            "/api/assistant/execute",
            json={
                "conversationId": cid,
                "createdByAgentId": "webEngineer",
                "taskType": "delete_page",
                "parameters": {"pageId": page_id},
                "summary": "Delete the Gamma page",
            },
        )
        still = client.get(f"/api/workspace/pages/{page_id}").status_code
    assert response.status_code == 202
    body = response.json()
    assert body["status"] == "awaiting_confirmation" and body["taskId"]
    assert still == 200


def test_a_failing_task_fails_the_run_cancels_later_groups_and_says_so(server: Server) -> None:
    with server.client() as client:
        cid = new_conversation(client)
        run = _run(
            client,
            cid,
            [
                _task("A", "create_ticket", {"title": "Sibling finishes"}),
                _task(
                    "A",
                    "webhook.call",
                    {"url": "http://169.254.169.254/latest", "method": "GET"},
                    "notificationAgent",
                    summary="Fetch the instance settings",
                ),
                _task("B", "create_ticket", {"title": "Never happens"}),
            ],
        )
        events = _approve_and_finish(client, cid, run["id"])
        card = client.get(f"/api/runs/{run['id']}").json()
    statuses = [[t["status"] for t in g["tasks"]] for g in card["groups"]]
    assert card["status"] == "failed"
    assert statuses == [["completed", "failed"], ["cancelled"]]
    failed = card["groups"][0]["tasks"][1]
    assert failed["result"]["error"]["code"] == "outbound_denied"
    final = hans_says(events)[-1]
    assert not final.startswith("Done")
    assert "I tried to fetch the instance settings, but it did not work" in final
    assert "public" in final, "a recovery path is proposed"
    assert "Never happens" in final
    assert events[-1]["data"]["status"] == "failed"


def test_tasks_of_a_group_overlap_and_the_next_group_waits(server: Server) -> None:
    with server.client() as client:
        cid = new_conversation(client)
        run = _run(
            client,
            cid,
            [
                *[_task("A", "wait", {"seconds": 0.4}, "schedulerAgent") for _ in range(3)],
                _task("B", "wait", {"seconds": 0}, "schedulerAgent"),
            ],
        )
        events = _approve_and_finish(client, cid, run["id"])
    stamps: dict[str, dict[str, datetime]] = {}
    for e in events:
        if e["type"] == "task_status":
            stamps.setdefault(e["taskId"], {})[e["data"]["status"]] = datetime.fromisoformat(
                e["createdAt"]
            )
    group_a = [t["id"] for t in run["groups"][0]["tasks"]]
    group_b = run["groups"][1]["tasks"][0]["id"]
    starts = [stamps[t]["in_progress"] for t in group_a]
    ends = [stamps[t]["completed"] for t in group_a]
    assert max(starts) < min(ends), "all three were running at the same time"
    assert stamps[group_b]["in_progress"] >= max(ends), "group B starts after group A ended"
