"""Entity tools reachable from chat (issue 19 item 3), over the real server.

Scripted models call the tools; each test talks to an agent of its own.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from harness import Server, execute_task, new_conversation, running_server, turn

BRAND_REQUEST = "Create a document called Brand book and link it to the goal Consistent brand"
SSL_REQUEST = "Create a task to renew the SSL certificate"

SCRIPTS: dict[str, list[dict[str, Any]]] = {
    "creativeLead": [  # routed here by "brand"
        {
            "toolCalls": [
                {
                    "name": "entity.create",
                    "arguments": {"entityType": "document", "name": "Brand book"},
                }
            ]
        },
        {
            "toolCalls": [
                {
                    "name": "entity.link",
                    "arguments": {
                        "fromType": "document",
                        "fromName": "Brand book",
                        "toType": "goal",
                        "toName": "Consistent brand",
                        "relation": "supports",
                    },
                }
            ]
        },
        {"text": "Brand book is made and supports the goal Consistent brand."},
    ],
    "fileAgent": [  # handed the SSL task by Hans: the Technical Lead has no workspace tools
        {
            "toolCalls": [
                {
                    "name": "entity.create",
                    "arguments": {"entityType": "task", "name": "Renew the SSL certificate"},
                }
            ]
        },
        {"text": "The task is on the list."},
    ],
    "researchAgent": [  # chosen by the caller (activeAgentId)
        {
            "toolCalls": [
                {
                    "name": "entity.search",
                    "arguments": {"query": "pricing", "entityTypes": ["document"]},
                },
                {"name": "entity.list", "arguments": {"entityType": "task", "limit": 5}},
                {
                    "name": "entity.create",
                    "arguments": {
                        "entityType": "document",
                        "name": "Orphan",
                        "parentId": "no-such-id",
                    },
                },
            ]
        },
        {"text": "Two pricing documents and one task."},
    ],
}


@pytest.fixture(scope="module")
def scripts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("entity-tools")


@pytest.fixture(scope="module")
def server(scripts: Path) -> Iterator[Server]:
    config = []
    for agent, steps in SCRIPTS.items():
        script = scripts / f"{agent}.json"
        script.write_text(json.dumps(steps))
        config.append(f'[agents.{agent}]\nmodel = "scripted:{script}"\n')
    (scripts / "hansa.toml").write_text("\n".join(config))
    with running_server(scripts, extra_args=("--config", str(scripts / "hansa.toml"))) as s:
        yield s


@pytest.fixture
def client(server: Server) -> Iterator[httpx.Client]:
    with server.client() as c:
        yield c


def _of(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == kind]


def test_a_workspace_request_creates_and_links_through_the_agents_tools(
    client: httpx.Client,
) -> None:
    cid = new_conversation(client)
    goal = execute_task(
        client,
        cid,
        "fileAgent",
        "entity.create",
        {"entityType": "goal", "name": "Consistent brand"},
    )["entityId"]

    events = turn(client, cid, BRAND_REQUEST)

    assert _of(events, "routing")[0]["data"]["agentId"] == "creativeLead"
    thinking = [e["data"]["summary"] for e in _of(events, "thinking")]
    assert any("workspace request" in t and "document, goal" in t for t in thinking), thinking
    calls, results = _of(events, "tool_call"), _of(events, "tool_result")
    assert [c["data"]["name"] for c in calls] == ["entity.create", "entity.link"]
    assert all(r["data"]["ok"] for r in results), results
    doc = results[0]["data"]["result"]["entityId"]

    stored = client.get(f"/api/workspace/entities/{doc}")
    assert stored.status_code == 200, stored.text
    body = stored.json()
    assert (body["kind"], body["name"]) == ("document", "Brand book")
    assert [(e["fromId"], e["toId"], e["relation"]) for e in body["edges"]] == [
        (doc, goal, "supports")
    ]
    assert client.get(f"/api/workspace/entities/{goal}").json()["edges"] == body["edges"]

    made = [e for e in _of(events, "operation") if e["data"]["entityName"] == "Brand book"]
    assert [(o["data"]["action"], o["data"]["entityType"], o["data"]["status"]) for o in made] == [
        ("create", "document", "start"),
        ("create", "document", "success"),
    ]
    start, success = made
    assert start["data"]["entityId"] is None and success["data"]["entityId"] == doc
    assert start["seq"] < success["seq"] < results[0]["seq"]
    assert start["data"]["name"] == "create document “Brand book”: start"
    edge_ops = [
        o["data"]["status"] for o in _of(events, "operation") if o["data"]["entityType"] == "edge"
    ]
    assert edge_ops == ["start", "success"]
    patches = [e["data"] for e in _of(events, "entity_patch")]
    assert {"entity": "document", "entityId": doc, "patch": {"name": "Brand book"}} in patches
    assert any(p["entity"] == "edge" and p["patch"]["toId"] == goal for p in patches)

    states = _of(events, "agent_state")
    assert [s["data"]["version"] for s in states] == [1, 2]
    last = states[-1]["data"]
    assert last["agentId"] == "creativeLead"
    assert last["state"]["entities"] == [{"id": doc, "kind": "document", "name": "Brand book"}]
    assert last["state"]["dependencies"] == [{"from": doc, "to": goal, "rel": "supports"}]
    answer = [e for e in events if e["type"] == "message" and e["data"]["kind"] == "assistant"]
    assert "supports the goal" in answer[0]["data"]["content"]


def test_a_workspace_request_goes_to_an_agent_that_may_change_the_workspace(
    client: httpx.Client,
) -> None:
    cid = new_conversation(client)

    events = turn(client, cid, SSL_REQUEST)

    assert _of(events, "routing")[0]["data"]["agentId"] == "technicalLead"
    chips = [e["data"]["text"] for e in _of(events, "status")]
    assert "Hans is handing this off to File Agent Finn" in chips
    result = _of(events, "tool_result")[0]["data"]
    assert result["ok"] and _of(events, "tool_call")[0]["agentId"] == "fileAgent"
    task = client.get(f"/api/workspace/entities/{result['result']['entityId']}").json()
    assert (task["kind"], task["name"]) == ("task", "Renew the SSL certificate")
    answer = [e for e in events if e["type"] == "message" and e["data"]["kind"] == "assistant"]
    assert answer[0]["agentId"] == "fileAgent"
    assert client.get(f"/api/conversations/{cid}").json()["currentAgent"] == "fileAgent"


def test_search_list_and_metadata_answer_without_content(client: httpx.Client) -> None:
    pid = client.post("/api/projects", json={"name": "Pricing project"}).json()["id"]
    cid = new_conversation(client, projectId=pid)  # the tools see this project's entities

    def make(kind: str, name: str, fields: dict[str, Any] | None = None) -> str:
        params = {"entityType": kind, "name": name, "fields": fields or {}}
        made = execute_task(client, cid, "fileAgent", "entity.create", params, projectId=pid)
        return str(made["entityId"])

    notes = make(
        "document", "Pricing notes", {"description": "What we charge", "content": "x" * 500}
    )
    faq = make("document", "Pricing FAQ")
    review = make("task", "Review pricing")

    events = turn(client, cid, "What do we have about pricing?", activeAgentId="researchAgent")
    # the scripted model cannot read ids it was told: metadata runs as a task of its own
    meta = execute_task(
        client,
        cid,
        "researchAgent",
        "entity.metadata",
        {"entityIds": [notes, "no-such-id"]},
        projectId=pid,
    )

    results = {r["data"]["name"]: r["data"] for r in _of(events, "tool_result")}
    found = results["entity.search"]["result"]
    assert [e["id"] for e in found["entities"]] == [faq, notes] and found["more"] is False
    assert all("data" not in e and "content" not in e for e in found["entities"])
    listed = results["entity.list"]["result"]
    assert (listed["total"], [e["id"] for e in listed["entities"]]) == (1, [review])
    orphan = results["entity.create"]
    assert not orphan["ok"] and orphan["error"]["code"] == "not_found"
    statuses = [
        o["data"]["status"] for o in _of(events, "operation") if o["data"]["entityName"] == "Orphan"
    ]
    assert statuses == ["start", "error"], "a started change that failed says so"
    actions = {o["data"]["action"] for o in _of(events, "operation")}
    assert {"search", "list"} <= actions
    assert meta["missing"] == ["no-such-id"]
    (described,) = meta["entities"]
    assert described["description"] == "What we charge" and described["contentLength"] == 500
    assert described["fields"] == ["content", "description"] and "content" not in described
