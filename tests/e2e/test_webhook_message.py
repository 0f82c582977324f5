"""The seed's messaging webhook through the real server (issue 31 item 2): a message POSTed
as the seed sends it gets 202 and a turn for the assistant it is addressed to, in a
conversation opened in the caller's tenant; a second delivery of it gets the same answer and
no second turn; a wrong tenant or a bad body is refused and leaves nothing. An external
assistant registered with ``webhooks.message`` gets each message addressed to it POSTed to
a local target, signed, through the outbound guard, retried after a failure."""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import standardwebhooks
from apikeys import bearer, create_key
from test_completion_webhooks import Receiver

from harness import Server, events_until, poll_until, running_server

TENANT = "acme"


@pytest.fixture(scope="module")
def target() -> Iterator[Receiver]:
    found = Receiver(failures=1)  # the first attempt fails: the delivery is tried again
    yield found
    found.close()


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory, target: Receiver) -> Iterator[Server]:
    env = {
        "HANSA_OUTBOUND_ALLOW": f"127.0.0.1:{target.port}",
        "HANSA_WEBHOOK_BACKOFF_SECONDS": "0.2",
        "HANSA_SECRET_KEY": "uF8QmrqnyzWaTVb3tHJ9ZyE3sWc7kFfqx1SLOTWwDZw=",
    }
    with running_server(tmp_path_factory.mktemp("webhook-message"), env=env) as server:
        yield server


@pytest.fixture(scope="module")
def admin(keyed: Server) -> Iterator[httpx.Client]:
    key = create_key(keyed, TENANT)
    with keyed.client(headers=bearer(key)) as client:
        yield client


def _message(content: str, to: str = "assistant:technicalLead", **more: Any) -> dict[str, Any]:
    return {
        "id": str(uuid.uuid4()),
        "conversationId": str(uuid.uuid4()),
        "orgId": TENANT,
        "from": {"principalId": "user-42", "principalType": "user"},
        "to": {"principalId": to, "principalType": "assistant"},
        "content": content,
        "contentType": "text/plain",
        "sequence": 1,
        "priority": "normal",
        "createdAt": "2026-11-27T10:30:00Z",
        **more,
    }


def _turns(client: httpx.Client, cid: str) -> list[dict[str, Any]]:
    return [e for e in client.get(f"/api/conversations/{cid}/timeline").json() if e["turnId"]]


@pytest.mark.parametrize(
    "content",
    ["The error is in the logs", "Plan a blog post for the launch", "hello there"],
)
def test_a_message_gets_a_turn_for_the_addressed_assistant_once(
    admin: httpx.Client, content: str
) -> None:
    body = _message(content)
    first = admin.post("/api/webhook/message", json=body)
    assert first.status_code == 202, first.text
    accepted = first.json()
    assert accepted["id"] == body["id"] and accepted["duplicate"] is False
    cid = accepted["conversationId"]
    events = events_until(
        admin, cid, lambda e: e["type"] == "done" and e["turnId"] == accepted["turnId"]
    )
    (routing,) = [e for e in events if e["type"] == "routing"]
    assert routing["data"]["agentId"] == "technicalLead", "the addressed one, not by keywords"
    said = [e for e in events if e["type"] == "message" and e["data"]["author"] == "user"]
    assert [e["data"]["content"] for e in said] == [content]
    again = admin.post("/api/webhook/message", json=body)
    assert again.status_code == 202
    assert again.json() == {**accepted, "duplicate": True}
    messages = admin.get(f"/api/conversations/{cid}/messages").json()
    users = [m for m in messages if m["kind"] == "user"]
    assert len(users) == 1 and users[0]["metadata"]["webhook"]["id"] == body["id"]
    assert len({e["turnId"] for e in _turns(admin, cid)}) == 1, "no second turn"
    convo = admin.get(f"/api/conversations/{cid}").json()
    assert convo["currentAgent"] == "technicalLead"
    assert convo["user"] == {"id": "user-42"}, "the sender is who the conversation is with"


def test_deliveries_of_one_message_at_once_store_it_once(admin: httpx.Client) -> None:
    body = _message("Is anyone there?")
    answers: list[httpx.Response] = []
    gate = threading.Barrier(4)

    def deliver() -> None:
        gate.wait()
        answers.append(admin.post("/api/webhook/message", json=body))

    racing = [threading.Thread(target=deliver) for _ in range(4)]
    for t in racing:
        t.start()
    for t in racing:
        t.join()
    assert [a.status_code for a in answers] == [202] * 4, [a.text for a in answers]
    told = [a.json() for a in answers]
    assert len({(a["turnId"], a["conversationId"], a["messageId"]) for a in told}) == 1
    assert sorted(a["duplicate"] for a in told) == [False, True, True, True]
    cid = told[0]["conversationId"]
    messages = admin.get(f"/api/conversations/{cid}/messages").json()
    assert len([m for m in messages if m["kind"] == "user"]) == 1


def test_the_next_message_of_that_conversation_joins_it(admin: httpx.Client) -> None:
    first = _message("Why is the site slow?")
    cid = admin.post("/api/webhook/message", json=first).json()["conversationId"]
    later = _message("And the logs?", conversationId=first["conversationId"], sequence=2)
    answer = admin.post("/api/webhook/message", json=later).json()
    assert answer["conversationId"] == cid
    done = events_until(
        admin, cid, lambda e: e["type"] == "done" and e["turnId"] == answer["turnId"]
    )
    assert done[-1]["data"]["status"] == "completed"


def test_another_tenant_is_refused_and_a_bad_body_leaves_nothing(
    keyed: Server, admin: httpx.Client
) -> None:
    before = len(admin.get("/api/conversations").json())
    cases = [
        (_message("hi", orgId="someone-else"), "orgId"),
        (_message("hi", to="assistant:nobody"), "to.principalId"),
        (_message("  "), "content"),
        ({**_message("hi"), "to": {"principalId": "x"}}, "to.principalType"),
        ({**_message("hi"), "conversationId": "c" * 37}, "conversationId"),
    ]
    for body, field in cases:
        refused = admin.post("/api/webhook/message", json=body)
        assert refused.status_code == 422, refused.text
        assert field in json.dumps(refused.json()["error"]), (field, refused.text)
    human = {**_message("hi"), "to": {"principalId": "chief", "principalType": "user"}}
    refused = admin.post("/api/webhook/message", json=human)
    assert refused.json()["error"]["details"]["field"] == "to.principalType"
    other = create_key(keyed, "other-org")
    theirs = admin.post("/api/webhook/message", json=_message("hi"), headers=bearer(other))
    assert theirs.status_code == 422 and theirs.json()["error"]["details"]["field"] == "orgId"
    nobody = httpx.post(f"{keyed.url}/api/webhook/message", json=_message("hi"))
    assert nobody.status_code == 401
    assert len(admin.get("/api/conversations").json()) == before


def test_an_external_assistant_gets_its_messages_posted_signed(
    admin: httpx.Client, target: Receiver
) -> None:
    registered = admin.post(
        "/api/agents",
        json={"id": "logBot", "displayName": "Log Bot", "webhooks": {"message": target.url}},
    )
    assert registered.status_code == 201, registered.text
    agent = registered.json()
    secret = agent["webhookSecret"]
    assert agent["webhooks"] == {"message": target.url} and secret.startswith("whsec_")
    assert secret not in json.dumps(admin.get("/api/agents").json()), "shown once"
    body = _message("Look at the error logs please", to="assistant:logBot")
    accepted = admin.post("/api/webhook/message", json=body).json()
    cid = accepted["conversationId"]
    events = events_until(
        admin, cid, lambda e: e["type"] == "done" and e["turnId"] == accepted["turnId"]
    )
    said = [e["data"]["content"] for e in events if e["type"] == "message"]
    assert said == [body["content"]], "Hansa does not answer for it: it answers on its own"
    assert any("Log Bot is answering" in e["data"].get("text", "") for e in events)
    hook = agent["messageWebhookId"]
    log = poll_until(
        admin,
        f"/api/webhooks/{hook}/deliveries",
        lambda a: any(d["status"] == "succeeded" for d in a),
    )
    assert [d["status"] for d in sorted(log, key=lambda d: d["attempt"])] == [
        "retrying",
        "succeeded",
    ], log
    raw, headers = target.got[-1]
    sent: dict[str, Any] = standardwebhooks.Webhook(secret).verify(raw.decode(), headers)
    data = sent["data"]
    assert sent["type"] == "agent.message"
    assert data["to"] == {"principalId": "logBot", "principalType": "assistant"}
    assert data["from"] == body["from"] and data["id"] == body["id"]
    assert data["content"] == body["content"] and data["conversationId"] == cid
    assert data["turnId"] == accepted["turnId"] and data["orgId"] == TENANT
    posted = admin.post(
        "/api/agents",
        json={"id": "farBot", "displayName": "Far", "webhooks": {"message": "http://10.0.0.1/x"}},
    )
    assert posted.status_code == 422 and posted.json()["error"]["details"]["field"] == (
        "webhooks.message"
    )
    assert admin.get("/api/agents/farBot").status_code in (404, 405)
    changed = admin.patch("/api/agents/logBot", json={"webhooks": {"message": target.url}})
    assert changed.status_code == 200, changed.text
    renewed = changed.json()
    new_hook, new_secret = renewed["messageWebhookId"], renewed["webhookSecret"]
    assert new_hook != hook and new_secret not in (None, secret)
    assert admin.get(f"/api/webhooks/{hook}/deliveries").status_code == 404, "replaced"
    refused = admin.patch("/api/agents/logBot", json={"webhooks": {"message": "ftp://x/y"}})
    assert refused.status_code == 422
    assert admin.get("/api/agents").json()[-1]["messageWebhookId"] == new_hook, "kept"
    again = _message("And the error logs of today?", to="logBot")
    later = admin.post("/api/webhook/message", json=again).json()
    poll_until(
        admin,
        f"/api/webhooks/{new_hook}/deliveries",
        lambda a: any(d["status"] == "succeeded" for d in a),
    )
    raw, headers = target.got[-1]
    resent = standardwebhooks.Webhook(new_secret).verify(raw.decode(), headers)
    assert resent["data"]["turnId"] == later["turnId"]
    removed = admin.delete("/api/agents/logBot")
    assert removed.status_code == 204
    assert admin.get(f"/api/webhooks/{new_hook}/deliveries").status_code == 404
