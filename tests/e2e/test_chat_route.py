"""``POST /api/assistant/chat``: seed 000 §12.1's contract, and routing per keyword family."""

from __future__ import annotations

import pytest

from harness import Server

FAMILIES = [
    ("Can you share the delivery timeline?", "deliveryLead"),
    ("Our client wants an account review", "clientSuccess"),
    ("Refresh our brand visuals", "creativeLead"),
    ("Please improve our SEO traffic", "growthLead"),
    ("Is the SSL on our server healthy?", "technicalLead"),
    ("Any tips for our page layout?", "webEngineer"),
    ("Good morning!", "chief"),
]


@pytest.mark.parametrize(("text", "agent"), FAMILIES)
def test_each_keyword_family_is_routed_over_http(server: Server, text: str, agent: str) -> None:
    with server.client() as client:
        response = client.post(
            "/api/assistant/chat",
            json={
                "conversationId": None,
                "messages": [{"role": "user", "content": text}],
                "activeAgentId": "chief",
            },
        )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["routedAgentId"] == agent
    assert body["messages"][0]["agentId"] == agent


def test_response_matches_seed_contract(server: Server) -> None:
    request = {
        "conversationId": None,
        "messages": [{"role": "user", "content": "Please create a new service page."}],
        "activeAgentId": "chief",
        "projectContext": {
            "projectId": "not-stored-in-hansa",
            "projectName": "Aquaverter",
            "projectDomain": "aquaverter.ca",
            "cmsPlatform": "wordpress",
        },
    }
    with server.client() as client:
        body = client.post("/api/assistant/chat", json=request).json()
        follow_up = client.post(
            "/api/assistant/chat",
            json={
                "conversationId": body["conversationId"],
                "messages": [{"role": "user", "content": "Thanks!"}],
            },
        ).json()
        history = client.get(f"/api/conversations/{body['conversationId']}/messages").json()
        run = client.get(f"/api/runs/{body['runCreated']['runId']}").json()

    assert set(body) == {"conversationId", "messages", "thinking", "routedAgentId", "runCreated"}
    # Hans plans: the run exists, in planning, from his first question (§12.1)
    assert set(body["runCreated"]) == {"runId", "title"}
    assert run["status"] == "planning" and run["title"] == body["runCreated"]["title"]
    assert len(body["messages"]) == 1
    message = body["messages"][0]
    assert set(message) == {"id", "role", "agentId", "content"}
    assert message["role"] == "assistant" and message["content"]
    # Aquaverter's WordPress is described, not connected: Hans says so before anything else
    assert "Aquaverter's WordPress site is not connected" in message["content"]
    assert body["thinking"] and all(set(t) == {"kind", "summary"} for t in body["thinking"])
    kinds = [t["kind"] for t in body["thinking"]]
    assert kinds[0] == "routing"
    summaries = [t["summary"] for t in body["thinking"]]
    assert "Hans is checking the context of Aquaverter (wordpress, aquaverter.ca)" in summaries

    assert follow_up["conversationId"] == body["conversationId"]
    # a change Hans plans stays with him (§12.1): no handoff to a specialist who never speaks
    assert body["routedAgentId"] == "chief" and follow_up["routedAgentId"] == "chief"
    assert body["messages"][0]["agentId"] == "chief"
    users = [m["content"] for m in history if m["kind"] == "user"]
    assert users == ["Please create a new service page.", "Thanks!"]


def test_chat_without_a_user_message_is_refused(server: Server) -> None:
    with server.client() as client:
        response = client.post(
            "/api/assistant/chat", json={"messages": [{"role": "assistant", "content": "hi"}]}
        )
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "invalid_input"
