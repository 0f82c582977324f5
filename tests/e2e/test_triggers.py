"""The four triggers that are not a message: a new conversation, a context change, a
handoff and a timer, each firing the tenant's rules through the real server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from harness import Server, events_until, new_conversation, running_server


def _rule(client: httpx.Client, trigger: str, actions: list[dict[str, Any]], **more: Any) -> str:
    body = {"name": f"on {trigger}", "trigger": trigger, "actions": actions, **more}
    created = client.post("/api/rules", json=body)
    assert created.status_code == 201, created.text
    rule_id: str = created.json()["id"]
    return rule_id


def _say(text: str) -> list[dict[str, Any]]:
    return [{"type": "message.send", "params": {"content": text}}]


def _evaluated(trigger: str) -> Any:
    return lambda ev: ev["type"] == "rule_evaluated" and ev["data"]["trigger"] == trigger


def _said(events: list[dict[str, Any]]) -> list[str]:
    return [e["data"]["content"] for e in events if e["type"] == "message"]


def test_conversation_created_context_updated_and_handoff_requested_fire(server: Server) -> None:
    with server.client() as client:
        rules = [
            _rule(client, "conversation.created", _say("Welcome! Ask me anything.")),
            _rule(
                client,
                "context.updated",
                _say("Gold support is on it."),
                conditions={
                    "conditions": [
                        {"field": "context.tier", "operator": "eq", "value": "gold"},
                    ]
                },
            ),
            _rule(
                client,
                "handoff.requested",
                [{"type": "context.update", "params": {"set": {"escalated": True}}}],
                conditions={
                    "conditions": [
                        {"field": "handoff.reason", "operator": "contains", "value": "legal"},
                    ]
                },
            ),
        ]
        cid = new_conversation(client)
        created = events_until(client, cid, _evaluated("conversation.created"))
        welcome = events_until(client, cid, lambda e: e["type"] == "message", after=0)
        silver = client.patch(f"/api/conversations/{cid}", json={"context": {"tier": "silver"}})
        gold = client.patch(f"/api/conversations/{cid}", json={"context": {"tier": "gold"}})
        after_gold = events_until(client, cid, _evaluated("context.updated"), after=0)
        changed = [e for e in after_gold if _evaluated("context.updated")(e)]
        while not any(f["matched"] for e in changed for f in e["data"]["firings"]):
            more = events_until(
                client, cid, _evaluated("context.updated"), after=after_gold[-1]["seq"]
            )
            after_gold += more
            changed = [e for e in after_gold if _evaluated("context.updated")(e)]
        gold_said = events_until(
            client, cid, lambda e: e["type"] == "message" and "Gold" in e["data"]["content"]
        )
        client.post(f"/api/conversations/{cid}/handoff", json={"reason": "a legal question"})
        events_until(client, cid, _evaluated("handoff.requested"))
        convo = client.get(f"/api/conversations/{cid}").json()
        for rule_id in rules:
            client.delete(f"/api/rules/{rule_id}")

    assert created[-1]["data"]["firings"][0]["matched"]
    assert _said(welcome) == ["Welcome! Ask me anything."]
    assert silver.status_code == gold.status_code == 200
    assert gold.json()["metadata"]["context"] == {"tier": "gold"}
    silver_seen, gold_seen = changed[0]["data"], changed[-1]["data"]
    assert silver_seen["firings"] == [] and silver_seen["skipped"] == 1  # evaluated, no match
    assert gold_seen["firings"][0]["conditions"][0]["actual"] == "gold"
    assert "Gold support is on it." in _said(gold_said)
    assert convo["state"] == "handoff_pending"
    assert convo["metadata"]["context"] == {"tier": "gold", "escalated": True}


def test_a_timer_rule_fires_on_schedule_and_after_a_restart(tmp_path: Path) -> None:
    with running_server(tmp_path) as first, first.client() as client:
        cid = new_conversation(client)
        schedule = {"everySeconds": 1, "conversationId": cid}
        _rule(client, "timer.fired", _say("tick"), schedule=schedule)
        ticks = events_until(client, cid, _evaluated("timer.fired"), timeout=20)
    with running_server(tmp_path) as second, second.client() as client:
        later = events_until(client, cid, _evaluated("timer.fired"), after=ticks[-1]["seq"])
        more = events_until(client, cid, _evaluated("timer.fired"), after=later[-1]["seq"])

    fired = [e["data"]["firings"][0] for e in (ticks[-1], later[-1], more[-1])]
    assert all(f["matched"] for f in fired)
    assert _said(later + more).count("tick") == 2
