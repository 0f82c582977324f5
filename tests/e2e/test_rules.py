"""Rules over HTTP, through the real server: stored, evaluated on messages, audited, acted on."""

from __future__ import annotations

from typing import Any

import httpx

from harness import Server, events_until, new_conversation, run_done, turn

REFUND = {
    "name": "refunds go to client success",
    "priority": 10,
    "trigger": "message.received",
    "conditions": {
        "logic": "and",
        "conditions": [
            {"field": "message.content", "operator": "words", "value": ["refund"]},
            {"field": "context.tier", "operator": "not_exists"},
        ],
    },
    "actions": [
        {"type": "context.update", "params": {"set": {"topic": "billing"}}},
        {"type": "route", "params": {"agentId": "clientSuccess", "reason": "refund request"}},
    ],
}


def _rule(client: httpx.Client, body: dict[str, Any]) -> dict[str, Any]:
    created = client.post("/api/rules", json=body)
    assert created.status_code == 201, created.text
    rule: dict[str, Any] = created.json()
    return rule


def _of(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == kind]


def test_a_matching_rule_is_audited_and_its_actions_take_effect(server: Server) -> None:
    with server.client() as client:
        rule = _rule(client, REFUND)
        cid = new_conversation(client)
        events = turn(client, cid, "I would like a refund for last month")
        convo = client.get(f"/api/conversations/{cid}").json()
        plain = turn(client, new_conversation(client), "How is the weather")
        client.delete(f"/api/rules/{rule['id']}")

    (evaluated,) = _of(events, "rule_evaluated")
    firing = next(f for f in evaluated["data"]["firings"] if f["ruleId"] == rule["id"])
    assert evaluated["data"]["trigger"] == "message.received" and firing["matched"]
    words, tier = firing["conditions"]
    assert words == {
        "field": "message.content",
        "operator": "words",
        "value": ["refund"],
        "actual": "I would like a refund for last month",
        "matched": True,
        "found": "refund",
        "timedOut": False,
    }
    assert tier["operator"] == "not_exists" and tier["matched"]
    routing = _of(events, "routing")[0]["data"]
    assert routing["agentId"] == "clientSuccess" and routing["ruleId"] == rule["id"]
    assert convo["metadata"]["context"] == {"topic": "billing"}
    assert [e["seq"] for e in events] == sorted(e["seq"] for e in events)
    assert not [f for f in _of(plain, "rule_evaluated")[0]["data"]["firings"] if f["matched"]]


def test_a_disabled_rule_does_not_fire_and_a_config_rule_is_read_only(server: Server) -> None:
    with server.client() as client:
        rule = _rule(client, {**REFUND, "name": "disabled later"})
        patched = client.patch(f"/api/rules/{rule['id']}", json={"enabled": False})
        events = turn(client, new_conversation(client), "A refund please")
        listed = client.get("/api/rules").json()
        config = next(r for r in listed if r["source"] == "config")
        refused = client.delete(f"/api/rules/{config['id']}")
        client.delete(f"/api/rules/{rule['id']}")

    assert patched.status_code == 200 and patched.json()["enabled"] is False
    assert patched.json()["version"] == 2
    assert not any(
        f["ruleId"] == rule["id"]
        for e in _of(events, "rule_evaluated")
        for f in e["data"]["firings"]
    )
    assert _of(events, "routing")[0]["data"]["agentId"] != "clientSuccess"
    assert config["trigger"] == "message.received" and config["actions"][0]["type"] == "route"
    assert refused.status_code == 409


def test_invalid_rules_are_refused_with_what_is_wrong(server: Server) -> None:
    def leaf(**changes: Any) -> dict[str, Any]:
        condition = {"field": "message.content", "operator": "contains", "value": "x", **changes}
        return {**REFUND, "conditions": {"conditions": [condition]}}

    deep: dict[str, Any] = {"conditions": []}
    for _ in range(6):
        deep = {"logic": "or", "conditions": [deep]}
    cases = {
        "operator": leaf(operator="like"),
        "field": leaf(field="secrets.password"),
        "compile": leaf(operator="matches", value="(unclosed"),
        "trigger": {**REFUND, "trigger": "message.deleted"},
        "action": {**REFUND, "actions": [{"type": "launch_rockets"}]},
        "deeper": {**REFUND, "conditions": deep},
        "agent": {**REFUND, "actions": [{"type": "route", "params": {"agentId": "nobody"}}]},
    }
    with server.client() as client:
        answers = {name: client.post("/api/rules", json=body) for name, body in cases.items()}
        stored = [r for r in client.get("/api/rules").json() if r["source"] == "api"]

    for name, answer in answers.items():
        assert answer.status_code == 422, (name, answer.text)
        assert "error" in answer.json(), name
    assert "does not compile" in answers["compile"].text
    assert "launch_rockets" in answers["action"].text
    assert "deeper" in answers["deeper"].text
    assert not [r for r in stored if r["name"] == REFUND["name"]]


def test_the_dry_run_answers_without_writing(server: Server) -> None:
    with server.client() as client:
        rule = _rule(client, {**REFUND, "name": "dry"})
        cid = new_conversation(client)
        before = client.get(f"/api/conversations/{cid}/timeline").json()
        tried = client.post(
            "/api/rules/test",
            json={"trigger": "message.received", "facts": {"message": {"content": "refund!"}}},
        )
        after = client.get(f"/api/conversations/{cid}/timeline").json()
        client.delete(f"/api/rules/{rule['id']}")

    firings = tried.json()["firings"]
    mine = next(f for f in firings if f["ruleId"] == rule["id"])
    assert mine["matched"] and mine["actions"][1]["type"] == "route"
    assert firings.index(mine) == 0  # the rules stage runs before the routing rules
    assert any(f["ruleId"] == "growth" for f in firings)  # routing rules are shown too
    assert before == after


def test_a_task_action_runs_at_once_and_a_handoff_ends_the_turn(server: Server) -> None:
    ticket = {
        **REFUND,
        "name": "urgent tickets",
        "conditions": {
            "conditions": [{"field": "message.content", "operator": "contains", "value": "urgent"}]
        },
        "actions": [{"type": "create_ticket", "params": {"title": "Urgent request"}}],
    }
    human = {
        **REFUND,
        "name": "humans for lawyers",
        "conditions": {
            "conditions": [
                {"field": "message.content", "operator": "matches", "value": r"\blawyers?\b"}
            ]
        },
        "actions": [{"type": "handoff.create", "params": {"reason": "legal question"}}],
    }
    with server.client() as client:
        rules = [_rule(client, ticket), _rule(client, human)]
        cid = new_conversation(client)
        first = turn(client, cid, "This is urgent, please look at it")
        run_id = next(e for e in first if e["type"] == "run_created")["runId"]
        finished = events_until(client, cid, run_done(run_id), after=first[-1]["seq"])
        card = client.get(f"/api/runs/{run_id}").json()
        other = new_conversation(client)
        handed = turn(client, other, "I need to talk to a lawyer")
        state = client.get(f"/api/conversations/{other}").json()["state"]
        for rule in rules:
            client.delete(f"/api/rules/{rule['id']}")

    task = card["groups"][0]["tasks"][0]
    assert card["status"] == "completed" and task["taskType"] == "create_ticket"
    assert any(e["type"] == "run_status" and e["data"]["status"] == "running" for e in first)
    assert finished[-1]["type"] == "done"
    assert state == "handoff_pending"
    kinds = [e["type"] for e in handed]
    assert "handoff" in kinds and "text_delta" not in kinds
    assert not [e for e in _of(handed, "message") if e["data"]["kind"] == "assistant"]
    assert handed[-1]["type"] == "done"


def test_each_rule_keeps_its_last_firings(server: Server) -> None:
    zebra = {
        **REFUND,
        "name": "zebra sightings",
        "conditions": {
            "conditions": [{"field": "message.content", "operator": "words", "value": ["zebra"]}]
        },
        "actions": [{"type": "context.update", "params": {"set": {"animal": "zebra"}}}],
    }
    created = {
        "name": "new conversations are tagged",
        "trigger": "conversation.created",
        "conditions": {
            "conditions": [{"field": "conversation.title", "operator": "eq", "value": "zoo"}]
        },
        "actions": [{"type": "context.update", "params": {"set": {"tagged": True}}}],
    }
    with server.client() as client:
        rule = _rule(client, zebra)
        untouched = client.get(f"/api/rules/{rule['id']}").json()
        first, second = new_conversation(client), new_conversation(client)
        turn(client, first, "I saw a zebra")
        turn(client, new_conversation(client), "I saw a giraffe")
        turn(client, second, "Two zebras now")
        firings = client.get(f"/api/rules/{rule['id']}/firings").json()
        newest = client.get(f"/api/rules/{rule['id']}/firings", params={"limit": 1}).json()
        too_many = client.get(f"/api/rules/{rule['id']}/firings", params={"limit": 21})
        one = client.get(f"/api/rules/{rule['id']}").json()
        listed = next(r for r in client.get("/api/rules").json() if r["id"] == rule["id"])
        config = next(r for r in client.get("/api/rules").json() if r["source"] == "config")
        config_firings = client.get(f"/api/rules/{config['id']}/firings")
        tagger = _rule(client, created)
        zoo = new_conversation(client, title="zoo")
        events_until(client, zoo, lambda e: e["type"] == "rule_evaluated")
        tagged = client.get(f"/api/rules/{tagger['id']}/firings").json()
        client.delete(f"/api/rules/{rule['id']}")
        client.delete(f"/api/rules/{tagger['id']}")
        gone = client.get(f"/api/rules/{rule['id']}/firings")
        unknown = client.get("/api/rules/no-such-rule/firings")

    assert untouched["lastFiredAt"] is None
    assert [f["conversationId"] for f in firings] == [second, first]
    assert firings[0]["id"] > firings[1]["id"]
    assert all(f["ruleId"] == rule["id"] and f["trigger"] == "message.received" for f in firings)
    assert firings[0]["actions"] == zebra["actions"]
    assert newest == firings[:1]
    assert too_many.status_code == 422
    assert one["lastFiredAt"] == listed["lastFiredAt"] == firings[0]["createdAt"]
    assert config["lastFiredAt"] is None
    assert config_firings.status_code == 200 and config_firings.json() == []
    assert [(f["trigger"], f["conversationId"]) for f in tagged] == [("conversation.created", zoo)]
    assert gone.status_code == 404 and unknown.status_code == 404
