"""Secrets are write-only on the paths the canary test of test_outside_systems does not
walk (issue 14 item 4): a task's result read back from ``POST /api/assistant/execute``
(its ``details``), the ``task_status`` and ``entity_patch`` events, the planning state a
model-drafted plan leaves in the conversation's metadata, Hans's plan message, and the
handoff's snapshot of that plan, through the real server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from harness import events_until, new_conversation, running_server, turn

HEADER_TOKEN = "canary-header-7Qx2"
QUERY_KEY = "canary-query-9Lm4"
FIELD_TOKEN = "canary-field-3Vb8"
URL_PASSWORD = "canary-userinfo-5Ty1"
CANARIES = (HEADER_TOKEN, QUERY_KEY, FIELD_TOKEN, URL_PASSWORD)

DRAFT = {
    "intent": "File a ticket and tell the status page.",
    "title": "Ticket and status page",
    "stages": [
        {
            "group": "A",
            "title": "File it",
            "steps": [
                {
                    "ref": "ticket",
                    "owner": "technicalLead",
                    "taskType": "create_ticket",
                    "parameters": {"title": "Contact form is broken"},
                    "summary": "File a ticket for the broken contact form",
                }
            ],
        },
        {
            "group": "B",
            "title": "Tell the status page",
            "steps": [
                {
                    "ref": "hook",
                    "owner": "notificationAgent",
                    "taskType": "webhook.call",
                    "parameters": {
                        "url": f"https://status.example.com/hook?api_key={QUERY_KEY}",
                        "method": "POST",
                        "headers": {"Authorization": f"Bearer {HEADER_TOKEN}"},
                        "body": {"ticket": "{{ticket.ticketId}}"},
                    },
                    "summary": f"Notify https://status.example.com/hook?api_key={QUERY_KEY}",
                }
            ],
        },
    ],
}


ASK = "Please create a ticket for the broken contact form and notify the status hook"
"""A request no playbook fits: the model drafts the plan (``DRAFT``)."""


def _execute(client: httpx.Client, cid: str, task_type: str, params: dict[str, Any]) -> Any:
    return client.post(
        "/api/assistant/execute",
        json={
            "conversationId": cid,
            "createdByAgentId": "fileAgent",
            "taskType": task_type,
            "parameters": params,
        },
    )


def test_results_events_and_the_planning_state_never_show_a_secret(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"purpose": "plan", "text": json.dumps(DRAFT)}]))
    seen: list[str] = []

    def keep(response: httpx.Response) -> None:  # every answer but the streams (read below)
        if "event-stream" not in response.headers.get("content-type", ""):
            seen.append(response.read().decode())

    with (
        running_server(tmp_path, model=f"scripted:{script}") as server,
        server.client(event_hooks={"response": [keep]}) as client,
    ):
        cid = new_conversation(client)
        fields = {"apiToken": FIELD_TOKEN, "mirror": f"https://ops:{URL_PASSWORD}@m.example/"}
        vault = {"entityType": "document", "name": "Vault", "fields": fields}
        created = _execute(client, cid, "entity.create", vault)
        entity_id = created.json()["details"]["entityId"]
        read = _execute(client, cid, "entity.read", {"entityId": entity_id})
        updated = _execute(
            client, cid, "entity.update", {"entityId": entity_id, "patch": {"apiToken": "new"}}
        )
        read_task = client.get(f"/api/tasks/{read.json()['taskId']}")

        planned = turn(client, cid, ASK)
        convo = client.get(f"/api/conversations/{cid}")
        messages = client.get(f"/api/conversations/{cid}/messages")
        handoff = client.post(f"/api/conversations/{cid}/handoff", json={"reason": "a person"})
        last = client.get(f"/api/conversations/{cid}").json()["lastSeq"]
        everything = events_until(client, cid, lambda e: e["seq"] == last)

    assert [r.status_code for r in (created, read, updated)] == [200, 200, 200], read.text
    data = read.json()["details"]["entity"]["data"]
    assert data["apiToken"] == "***", "execute's details mask a result's secrets"
    assert data["mirror"] == "https://***@m.example/"
    assert updated.json()["details"]["previous"] == {"apiToken": "***"}
    assert read_task.json()["result"]["entity"]["data"]["apiToken"] == "***"
    statuses = [e for e in everything if e["type"] == "task_status" and e["data"].get("result")]
    assert any(e["data"]["result"].get("entity") for e in statuses)
    patches = [e for e in everything if e["type"] == "entity_patch"]
    assert patches and patches[0]["data"]["patch"]["apiToken"] == "***"

    assert any(e["type"] == "plan" for e in planned), [e["type"] for e in planned]
    state = convo.json()["metadata"]["planning"]
    hook = state["plan"]["stages"][1]["steps"][0]
    assert hook["parameters"]["headers"]["Authorization"] == "***"
    assert hook["parameters"]["url"].endswith("api_key=***")
    assert hook["summary"].endswith("api_key=***")
    assert "api_key=***" in messages.text, "Hans's plan message names the step masked"
    assert handoff.status_code == 201, handoff.text
    snapshot_hook = handoff.json()["snapshot"]["plan"]["plan"]["stages"][1]["steps"][0]
    assert snapshot_hook["parameters"]["headers"]["Authorization"] == "***"

    assert len(seen) >= 9
    for body in [*seen, json.dumps(everything), server.log_path.read_text(errors="replace")]:
        for canary in CANARIES:
            assert canary not in body, (canary, body[:2000])
