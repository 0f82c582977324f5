"""Agent principals (seed 001) over the real server: an admin registers an agent with its
capabilities and gets it a token; the token acts only as that agent and only within its
capabilities (the law of allowed scope, at plan time and before execution), and may not
do what a person decides (approve, confirm, manage)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from apikeys import client, create_key, error_code
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from harness import Server, events_until, new_conversation, post, running_server, waits


@pytest.fixture(scope="module")
def acme(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, str]]:
    """A server and an admin key of tenant ``acme``."""
    with running_server(tmp_path_factory.mktemp("agents")) as s:
        yield s, create_key(s, "acme", "admin")


def _register(admin: httpx.Client, agent_id: str, capabilities: list[str]) -> str:
    """Register the agent; a token for it."""
    made = admin.post(
        "/api/agents",
        json={"id": agent_id, "displayName": f"{agent_id} bot", "capabilities": capabilities},
    )
    assert made.status_code == 201, made.text
    token = admin.post(f"/api/agents/{agent_id}/tokens", json={"name": "ci"})
    assert token.status_code == 201, token.text
    assert token.json()["role"] == "agent" and token.json()["agentId"] == agent_id
    return str(token.json()["key"])


def _execute(c: httpx.Client, cid: str, agent: str, task_type: str, params: dict[str, Any]) -> Any:
    return c.post(
        "/api/assistant/execute",
        json={
            "conversationId": cid,
            "createdByAgentId": agent,
            "taskType": task_type,
            "parameters": params,
        },
    )


def test_admins_register_agents_beside_the_roster(acme: tuple[Server, str]) -> None:
    server, key = acme
    with client(server, key) as admin:
        _register(admin, "helpdeskBot", ["tickets"])
        roster_clash = admin.post("/api/agents", json={"id": "chief", "displayName": "Fake Hans"})
        again = admin.post("/api/agents", json={"id": "helpdeskBot", "displayName": "Again"})
        listed = admin.get("/api/agents").json()
        roster_token = admin.post("/api/agents/chief/tokens")
    assert roster_clash.status_code == 409 and again.status_code == 409
    ids = [a["id"] for a in listed]
    assert ids[0] == "chief" and len(ids) == 15 and ids[-1] == "helpdeskBot"
    registered = listed[-1]
    assert registered["capabilities"] == ["tickets"] and registered["visible"] is False
    assert roster_token.status_code == 404, "the roster acts inside Hansa: no tokens"


def test_an_agent_token_acts_as_its_agent_within_its_capabilities(
    acme: tuple[Server, str],
) -> None:
    server, key = acme
    with client(server, key) as admin:
        token = _register(admin, "ticketBot", ["tickets"])
        cid = new_conversation(admin)
    with client(server, token) as bot:
        me = bot.get("/api/me").json()
        ticket = _execute(bot, cid, "ticketBot", "create_ticket", {"title": "Printer jam"})
        out_of_scope = _execute(
            bot,
            cid,
            "ticketBot",
            "entity.create",
            {"entityType": "document", "name": "Secret plan"},
        )
        impostor = _execute(
            bot,
            cid,
            "fileAgent",
            "entity.create",
            {"entityType": "document", "name": "Secret plan"},
        )
        said = bot.post(f"/api/conversations/{cid}/messages", json={"content": "Ticket filed."})
        messages = bot.get(f"/api/conversations/{cid}/messages").json()
        timeline = bot.get(f"/api/conversations/{cid}/timeline")
    assert me == {
        "tenantId": "acme",
        "principal": {"kind": "agent", "id": "ticketBot", "role": "agent"},
    }
    assert ticket.status_code == 200 and ticket.json()["status"] == "completed", ticket.text
    assert out_of_scope.status_code == 403 and error_code(out_of_scope) == "scope_denied"
    assert "workspace" in out_of_scope.json()["error"]["message"]
    assert impostor.status_code == 403 and error_code(impostor) == "forbidden"
    assert said.status_code == 202 and said.json()["turnId"] is None
    assert timeline.status_code == 200 and "Ticket filed." in timeline.text
    mine = [m for m in messages if m["id"] == said.json()["messageId"]]
    assert mine and mine[0]["agentId"] == "ticketBot" and mine[0]["kind"] == "assistant"
    assert all(m["kind"] != "user" for m in messages), "it spoke as itself, never as the user"
    with client(server, key) as admin:  # a person's message next: its turn is the only one
        posted = post(admin, cid, "thanks")
        log = events_until(admin, cid, lambda e: e["type"] == "done" and e["turnId"] is not None)
    assert {e["turnId"] for e in log if e["turnId"]} == {posted["turnId"]}, (
        "an agent's message starts no turn"
    )


def test_the_laws_hold_a_registered_agent_to_its_capabilities_in_plans_too(
    acme: tuple[Server, str],
) -> None:
    server, key = acme
    with client(server, key) as admin:
        _register(admin, "waitBot", ["wait"])
        cid = new_conversation(admin)
        tasks = waits("A") + [
            {
                "stepGroup": "B",
                "taskType": "create_ticket",
                "parameters": {"title": "x"},
                "createdByAgentId": "waitBot",
            }
        ]
        mixed = admin.post("/api/runs", json={"conversationId": cid, "title": "t", "tasks": tasks})
        ok = [{**t, "createdByAgentId": "waitBot"} for t in waits("A")]
        planned = admin.post("/api/runs", json={"conversationId": cid, "title": "t", "tasks": ok})
        run_id = planned.json()["id"]
        approved = admin.post(f"/api/runs/{run_id}/approve")
        events_until(admin, cid, lambda e: e["type"] == "done" and e["runId"] == run_id)
        finished = admin.get(f"/api/runs/{run_id}").json()
    assert mixed.status_code == 403 and error_code(mixed) == "scope_denied"
    assert planned.status_code == 201 and approved.status_code == 200
    assert finished["status"] == "completed", finished


def test_an_agent_token_may_not_decide_for_people(acme: tuple[Server, str]) -> None:
    server, key = acme
    with client(server, key) as admin:
        token = _register(admin, "nosyBot", ["wait", "tickets"])
        cid = new_conversation(admin)
        run = admin.post(
            "/api/runs", json={"conversationId": cid, "title": "t", "tasks": waits("A")}
        ).json()
    with client(server, token) as bot:
        refused = {
            "approve": bot.post(f"/api/runs/{run['id']}/approve"),
            "confirm": bot.post(
                f"/api/tasks/{run['groups'][0]['tasks'][0]['id']}/confirm",
                json={"parametersHash": "x" * 64},
            ),
            "plan": bot.post(
                "/api/runs", json={"conversationId": cid, "title": "t", "tasks": waits("A")}
            ),
            "keys": bot.get("/api/keys"),
            "agents": bot.post("/api/agents", json={"id": "other", "displayName": "Other"}),
            "token": bot.post("/api/agents/nosyBot/tokens"),
            "projects": bot.get("/api/projects"),
            "chat": bot.post("/api/assistant/chat", json={"messages": []}),
            "claim as another": bot.post(
                f"/api/conversations/{cid}/claims",
                json={"turnId": "t", "assistantKey": "someoneElse"},
            ),
        }
        run_after = bot.get(f"/api/runs/{run['id']}").json()
    assert {k: r.status_code for k, r in refused.items()} == dict.fromkeys(refused, 403)
    assert run_after["status"] == "awaiting_approval"
    url = server.url.replace("http://", "ws://") + f"/api/conversations/{cid}/ws"
    with pytest.raises(InvalidStatus) as ws:
        with connect(url, open_timeout=10, additional_headers={"Authorization": f"Bearer {token}"}):
            pass
    assert ws.value.response.status_code == 403, "its WebSocket would post as the user"
    assert b'"code":"forbidden"' in ws.value.response.body.replace(b" ", b"")


def test_a_revoked_agent_token_stops_at_once(tmp_path: Path) -> None:
    with running_server(tmp_path) as server:
        key = create_key(server, "acme", "admin")
        with client(server, key) as admin:
            token = _register(admin, "tempBot", ["wait"])
            token_id = next(k["id"] for k in admin.get("/api/keys").json() if k["agentId"])
            assert admin.delete(f"/api/keys/{token_id}").status_code == 204
        with client(server, token) as bot:
            assert bot.get("/api/me").status_code == 401


def test_admins_change_and_remove_registered_agents(acme: tuple[Server, str]) -> None:
    server, key = acme
    member, other_tenant = create_key(server, "acme", "member"), create_key(server, "globex")
    with client(server, key) as admin:
        token = _register(admin, "editBot", ["wait"])
        cid = new_conversation(admin)
        with client(server, token) as bot:
            before = _execute(bot, cid, "editBot", "create_ticket", {"title": "Too soon"})
        changed = admin.patch(
            "/api/agents/editBot",
            json={"displayName": "Edit Bot", "capabilities": ["wait", "tickets", "tickets"]},
        )
        nulls = {
            field: admin.patch("/api/agents/editBot", json={field: None})
            for field in ("displayName", "role", "roleSummary", "capabilities", "color")
        }
        renamed = admin.patch("/api/agents/editBot", json={"id": "otherBot"})
        roster = {
            "patch": admin.patch("/api/agents/chief", json={"displayName": "Fake Hans"}),
            "delete": admin.delete("/api/agents/chief"),
        }
        listed = admin.get("/api/agents").json()
        with client(server, token) as bot:
            after = _execute(bot, cid, "editBot", "create_ticket", {"title": "Now allowed"})
            by_itself = bot.patch("/api/agents/editBot", json={"capabilities": ["workspace"]})
        refused = {}
        for who, secret in (("member", member), ("other tenant", other_tenant)):
            with client(server, secret) as c:
                refused[who] = [
                    c.patch("/api/agents/editBot", json={"displayName": "Mine"}).status_code,
                    c.delete("/api/agents/editBot").status_code,
                ]
        removed = admin.delete("/api/agents/editBot")
        with client(server, token) as bot:
            me_after = bot.get("/api/me")
        gone = {
            "list": [a["id"] for a in admin.get("/api/agents").json()],
            "patch": admin.patch("/api/agents/editBot", json={"displayName": "x"}).status_code,
            "delete": admin.delete("/api/agents/editBot").status_code,
            "token": admin.post("/api/agents/editBot/tokens").status_code,
        }
        tokens = [k for k in admin.get("/api/keys").json() if k["agentId"] == "editBot"]

    assert before.status_code == 403 and error_code(before) == "scope_denied"
    assert changed.status_code == 200, changed.text
    assert changed.json()["displayName"] == "Edit Bot"
    assert changed.json()["capabilities"] == ["wait", "tickets"]
    assert changed.json()["avatar"]["initials"] == "EB"
    assert {f: r.status_code for f, r in nulls.items()} == dict.fromkeys(nulls, 422)
    assert all(error_code(r) == "validation_error" for r in nulls.values())
    assert renamed.status_code == 422, "an agent's id does not change"
    assert {k: r.status_code for k, r in roster.items()} == {"patch": 409, "delete": 409}
    mine = next(a for a in listed if a["id"] == "editBot")
    assert mine["displayName"] == "Edit Bot" and mine["capabilities"] == ["wait", "tickets"]
    assert after.status_code == 200, "its token acts with its new capabilities at once"
    assert by_itself.status_code == 403 and error_code(by_itself) == "forbidden"
    assert refused == {"member": [403, 403], "other tenant": [404, 404]}
    assert removed.status_code == 204
    assert me_after.status_code == 401, "a removed agent's token stops at once"
    assert "editBot" not in gone.pop("list")
    assert gone == {"patch": 404, "delete": 404, "token": 404}
    assert tokens and all(k["revokedAt"] for k in tokens)
