"""One agent directory (issue 27 item 1) over the real server: an agent a tenant registers
with ``POST /api/agents`` is the same agent on every surface — chat, the OpenAI bridge,
AG-UI, the Agent Protocol, MCP's "ask the team", sessions, schedules and rules — while
another tenant, and an id nobody registered, get a clear 404 (or a 422 naming the field
the caller sent)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from apikeys import bearer, create_key

from harness import Server, events_until, new_conversation, running_server

AGENT = "deskBot"


@pytest.fixture(scope="module")
def tenants(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, str, str]]:
    """A server, an admin key of ``acme`` (which registers ``deskBot``) and one of ``globex``."""
    with running_server(tmp_path_factory.mktemp("directory")) as server:
        acme, globex = create_key(server, "acme"), create_key(server, "globex")
        with server.client(headers=bearer(acme)) as admin:
            made = admin.post(
                "/api/agents",
                json={"id": AGENT, "displayName": "Desk Bot", "capabilities": ["tickets"]},
            )
            assert made.status_code == 201, made.text
        yield server, acme, globex


@pytest.fixture
def acme(tenants: tuple[Server, str, str]) -> Iterator[httpx.Client]:
    server, key, _ = tenants
    with server.client(headers=bearer(key), timeout=30) as c:
        yield c


@pytest.fixture
def globex(tenants: tuple[Server, str, str]) -> Iterator[httpx.Client]:
    server, _, key = tenants
    with server.client(headers=bearer(key), timeout=30) as c:
        yield c


def _ag_ui(thread: str, text: str) -> dict[str, Any]:
    return {
        "threadId": thread,
        "runId": f"{thread}-run",
        "messages": [{"id": "m1", "role": "user", "content": text}],
        "state": {},
        "tools": [],
        "context": [],
        "forwardedProps": {},
    }


def _done(event: dict[str, Any]) -> bool:
    return bool(event["type"] == "done")


def _completion(model: str) -> dict[str, Any]:
    return {"model": model, "messages": [{"role": "user", "content": "Hello there"}]}


def test_every_listing_shows_the_registered_agent_to_its_tenant_only(
    acme: httpx.Client, globex: httpx.Client
) -> None:
    for c, sees in ((acme, True), (globex, False)):
        agents = [a["id"] for a in c.get("/api/agents").json()]
        models = [m["id"] for m in c.get("/v1/models").json()["data"]]
        assistants = c.post("/ap/assistants/search", json={"limit": 100}).json()
        found = [a["assistant_id"] for a in assistants]
        one = c.get(f"/ap/assistants/{AGENT}")
        assert (AGENT in agents, AGENT in models, AGENT in found) == (sees, sees, sees)
        assert agents[0] == models[0] == found[0] == "chief"
        assert one.status_code == (200 if sees else 404), one.text


def test_the_registered_agent_answers_on_every_surface(acme: httpx.Client) -> None:
    completion = acme.post("/v1/chat/completions", json=_completion(AGENT))
    assert completion.status_code == 200, completion.text
    assert completion.json()["model"] == AGENT

    with acme.stream("POST", f"/ag-ui/{AGENT}", json=_ag_ui("t-desk", "Hello")) as ag_ui:
        body = ag_ui.read().decode()
    assert ag_ui.status_code == 200, body
    assert "RUN_FINISHED" in body

    waited = acme.post(
        "/ap/runs/wait",
        json={"assistant_id": AGENT, "input": {"messages": [{"role": "user", "content": "Hi"}]}},
    )
    assert waited.status_code == 200, waited.text

    cid = new_conversation(acme, activeAgentId=AGENT)
    posted = acme.post(f"/api/conversations/{cid}/messages", json={"content": "Hello there"})
    assert posted.status_code == 202, posted.text
    events = events_until(acme, cid, _done)
    routed = [e for e in events if e["type"] == "routing"]
    assert routed and routed[-1]["data"]["agentId"] == AGENT, "the agent it was given, not Hans"


def test_another_tenant_and_an_unknown_id_are_refused_with_the_callers_field(
    acme: httpx.Client, globex: httpx.Client
) -> None:
    for c, agent in ((globex, AGENT), (acme, "nobodyBot")):
        completion = c.post("/v1/chat/completions", json=_completion(agent))
        ag_ui = c.post(f"/ag-ui/{agent}", json=_ag_ui("t-none", "Hello"))
        ap = c.post(
            "/ap/runs/wait",
            json={"assistant_id": agent, "input": {"messages": [{"role": "user", "content": "x"}]}},
        )
        assert (completion.status_code, ag_ui.status_code, ap.status_code) == (404, 404, 404)
        opened = c.post("/api/conversations", json={"activeAgentId": agent})
        assert opened.status_code == 422
        assert opened.json()["error"]["details"]["field"] == "activeAgentId"
        session = c.post("/api/agent-sessions", json={"agentId": agent, "goal": "watch the queue"})
        assert session.status_code == 422, session.text
        assert session.json()["error"]["details"]["field"] == "agentId"
        schedule = c.post(
            "/api/schedules",
            json={
                "name": "daily",
                "cron": "0 9 * * *",
                "action": {"type": "message", "content": "Status?", "agentId": agent},
            },
        )
        assert schedule.status_code == 422, schedule.text
        assert schedule.json()["error"]["details"]["field"] == "action.agentId"


def test_rules_may_route_to_the_tenants_registered_agent(
    acme: httpx.Client, globex: httpx.Client
) -> None:
    rule = {
        "name": "desk questions",
        "trigger": "message.received",
        "conditions": {
            "logic": "and",
            "conditions": [
                {"field": "message.content", "operator": "contains", "value": "printer"}
            ],
        },
        "actions": [{"type": "route", "params": {"agentId": AGENT}}],
    }
    made = acme.post("/api/rules", json=rule)
    refused = globex.post("/api/rules", json=rule)
    assert made.status_code == 201, made.text
    assert refused.status_code == 422, refused.text
    cid = new_conversation(acme)
    acme.post(f"/api/conversations/{cid}/messages", json={"content": "The printer is jammed"})
    routed = [e for e in events_until(acme, cid, _done) if e["type"] == "routing"]
    assert routed[-1]["data"]["agentId"] == AGENT
    acme.delete(f"/api/rules/{made.json()['id']}")
