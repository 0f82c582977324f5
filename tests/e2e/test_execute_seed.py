"""``POST /api/assistant/execute`` as seed 000 writes it (§8.3, §12.2): the seed's own request
bodies, byte for byte but for the ``"uuid"`` placeholders, add their task to the run they
name, under the same laws, and answer with the seed's ``details``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from apikeys import client as keyed_client
from apikeys import create_key

from harness import Server, events_until, new_conversation, run_done, running_server, waits

SEED_8_3 = """{
  "runId": "uuid",
  "conversationId": "uuid",
  "projectId": "uuid",
  "createdByAgentId": "webEngineer",
  "taskType": "create_page",
  "parameters": {
    "cms": "wordpress",
    "title": "About Aquaverter",
    "slug": "about-aquaverter",
    "contentHtml": "<h1>About Aquaverter</h1>..."
  },
  "summary": "Create new About page for Aquaverter site"
}"""
"""Seed 000 §8.3, "Execution API usage", verbatim."""

SEED_12_2 = """{
  "runId": "uuid",
  "conversationId": "uuid",
  "projectId": "uuid",
  "createdByAgentId": "webEngineer",
  "taskType": "create_page",
  "parameters": {
    "cms": "wordpress",
    "title": "Services",
    "slug": "services",
    "contentHtml": "<h1>Services</h1>..."
  },
  "summary": "Create Services page"
}"""
"""Seed 000 §12.2, "Execution route with reversibility controls", the request verbatim."""


def _body(seed: str, *, run_id: str, cid: str, pid: str) -> bytes:
    """The seed's body with its placeholders filled in, and nothing else changed."""
    filled = (
        seed.replace('"runId": "uuid"', f'"runId": "{run_id}"')
        .replace('"conversationId": "uuid"', f'"conversationId": "{cid}"')
        .replace('"projectId": "uuid"', f'"projectId": "{pid}"')
    )
    return filled.encode()


def _execute(client: httpx.Client, body: bytes) -> httpx.Response:
    return client.post(
        "/api/assistant/execute", content=body, headers={"Content-Type": "application/json"}
    )


def _run(client: httpx.Client, cid: str, pid: str, seconds: float) -> str:
    body = {"conversationId": cid, "projectId": pid, "title": "Site work", "tasks": waits("A")}
    body["tasks"][0]["parameters"]["seconds"] = seconds
    response = client.post("/api/runs", json=body)
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, str, str]]:
    """A server with a key of tenant ``acme`` and one of tenant ``globex``."""
    with running_server(tmp_path_factory.mktemp("execute-seed")) as server:
        yield server, create_key(server, "acme"), create_key(server, "globex")


def test_the_seed_bodies_add_their_tasks_to_the_named_run(keyed: tuple[Server, str, str]) -> None:
    server, acme, _ = keyed
    with keyed_client(server, acme) as client:
        pid = client.post(
            "/api/projects",
            json={
                "name": "Aquaverter",
                "domain": "aquaverter.ca",
                "cmsPlatform": "wordpress",
                "config": {"workspaceDrafts": True},
            },
        ).json()["id"]
        cid = new_conversation(client, projectId=pid)
        run_id = _run(client, cid, pid, seconds=2)

        # §8.3 while the run awaits approval: the task joins it, and runs when it does
        about = _execute(client, _body(SEED_8_3, run_id=run_id, cid=cid, pid=pid))
        waiting = client.get(f"/api/runs/{run_id}").json()
        approved = client.post(f"/api/runs/{run_id}/approve")
        # §12.2 while it runs: the task joins after the work planned before it, and the call
        # answers once it is done, with the seed's details
        services = _execute(client, _body(SEED_12_2, run_id=run_id, cid=cid, pid=pid))
        events_until(client, cid, run_done(run_id))
        card = client.get(f"/api/runs/{run_id}").json()
        page = client.get(services.json()["details"]["url"])

        # the run is over: nothing joins it any more
        late = _execute(client, _body(SEED_12_2, run_id=run_id, cid=cid, pid=pid))

    assert about.status_code == 202, about.text
    assert about.json()["runId"] == run_id and about.json()["status"] == "open"
    assert [g["stepGroup"] for g in waiting["groups"]] == ["A", "B"]
    assert waiting["groups"][1]["tasks"][0]["id"] == about.json()["taskId"]
    assert approved.status_code == 200, approved.text

    assert services.status_code == 200, services.text
    answer: dict[str, Any] = services.json()
    assert answer["runId"] == run_id and answer["status"] == "completed"
    details = answer["details"]
    # {cmsId, url}; no WordPress is connected, so the page is in the workspace (its id a ULID)
    assert details["cmsId"] == details["pageId"] and details["url"]
    assert page.status_code == 200 and "<title>Services</title>" in page.text

    assert card["status"] == "completed"
    groups = {g["stepGroup"]: g["tasks"] for g in card["groups"]}
    assert list(groups) == ["A", "B", "C"]
    (added_about,) = groups["B"]
    (added_services,) = groups["C"]
    assert added_about["id"] == about.json()["taskId"]
    assert added_services["id"] == answer["taskId"]
    assert added_about["summary"] == "Create new About page for Aquaverter site"
    assert added_services["parameters"]["cms"] == "wordpress", "the seed's cms is kept"
    assert added_services["projectId"] == pid and added_services["createdByAgentId"] == (
        "webEngineer"
    )
    assert all(t["status"] == "completed" for tasks in groups.values() for t in tasks)
    assert added_services["isReversibleBySystem"] is True

    assert late.status_code == 409, late.text
    assert late.json()["error"]["code"] == "conflict"


def test_a_run_that_is_not_there_or_not_this_conversations_is_refused(
    keyed: tuple[Server, str, str],
) -> None:
    server, acme, globex = keyed
    with keyed_client(server, acme) as client:
        pid = client.post("/api/projects", json={"name": "Aquaverter"}).json()["id"]
        cid = new_conversation(client, projectId=pid)
        other_cid = new_conversation(client, projectId=pid)
        run_id = _run(client, cid, pid, seconds=0)
        # the seed's body as it stands: its "uuid" names no run
        placeholder = _execute(client, SEED_12_2.encode())
        elsewhere = _execute(client, _body(SEED_12_2, run_id=run_id, cid=other_cid, pid=pid))
        card = client.get(f"/api/runs/{run_id}").json()
    with keyed_client(server, globex) as other:
        theirs = new_conversation(other)
        foreign = _execute(other, _body(SEED_12_2, run_id=run_id, cid=theirs, pid=pid))

    assert placeholder.status_code == 404, placeholder.text
    assert placeholder.json()["error"]["code"] == "not_found"
    assert elsewhere.status_code == 409, elsewhere.text
    assert foreign.status_code == 404, foreign.text
    assert "another conversation" not in foreign.text, "nothing said about another tenant's run"
    assert [g["stepGroup"] for g in card["groups"]] == ["A"], "nothing joined the run"
