"""A graph's run on the run card (issue 18 item 4): its nodes in layers with their ids, types
and live statuses, its edges drawn between them, the branch not taken shown skipped."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from playwright.sync_api import Page, expect

from harness import new_conversation

NAME = "Tiered answer"
COMPONENTS = [
    {"id": "check", "type": "condition", "config": {"value": "{{context.tier}}", "in": ["gold"]}},
    {"id": "vip", "type": "message.send", "config": {"text": "A specialist calls you."}},
    {"id": "usual", "type": "message.send", "config": {"text": "We answer within a day."}},
    {"id": "thanks", "type": "message.send", "config": {"text": "Thanks, {{user.name}}."}},
    {"id": "pause", "type": "wait", "config": {"seconds": 2}},
    {"id": "bye", "type": "message.send", "config": {"text": "That was all."}},
]
EDGES = [
    {"from": "check", "to": "vip", "when": "true"},
    {"from": "check", "to": "usual", "when": "false"},
    {"from": "vip", "to": "thanks"},
    {"from": "usual", "to": "thanks"},
    {"from": "thanks", "to": "pause"},
    {"from": "pause", "to": "bye"},
]
# Every status a graph node's box takes on, live, in order, with its badge's text.
WATCH_NODES = """() => {
    window.__nodeStatuses = {};
    new MutationObserver((records) => {
        for (const r of records) {
            const el = r.target;
            if (!el.matches('.graph-node')) continue;
            const badge = el.querySelector('.badge').textContent;
            (window.__nodeStatuses[el.dataset.node] ||= []).push([el.dataset.status, badge]);
        }
    }).observe(document.body, {subtree: true, attributes: true, attributeFilter: ['data-status']});
}"""
SHOWN = {"wait.durable": "wait"}  # the task type a node's box names otherwise


def _nodes(card: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["nodeId"]: t for g in card["groups"] for t in g["tasks"]}


def _ended(api: Any, run_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 30
    while True:
        card: dict[str, Any] = api.get(f"/api/runs/{run_id}")
        if card["status"] in ("completed", "failed", "cancelled"):
            return card
        assert time.monotonic() < deadline, card["status"]
        time.sleep(0.1)


def test_a_graph_run_is_drawn_as_its_nodes_and_edges_with_live_status(
    page: Page, panel, api, artifacts: Path
) -> None:
    graph = api.post("/api/graphs", {"name": NAME, "components": COMPONENTS, "edges": EDGES})
    waits = [c["id"] for c in graph["components"] if c["type"] == "wait"]
    cid = new_conversation(api.client)
    panel.open(cid)
    page.evaluate(WATCH_NODES)
    page.evaluate("document.body.dataset.sameDocument = 'yes'")  # gone if the page reloads

    inputs = {"context": {"tier": "gold"}, "user": {"name": "Ada"}}
    started = api.post(f"/api/graphs/{graph['id']}/runs", {"conversationId": cid, "inputs": inputs})
    card = page.locator(f".run-card[data-run='{started['id']}']")
    boxes = card.get_by_role("list", name="Graph nodes").get_by_role("listitem")
    expect(boxes).to_have_count(len(graph["components"]))
    expect(card.locator(".run-group")).to_have_count(0)  # a graph, not step groups
    page.screenshot(path=str(artifacts / "graph_run_card_live.png"))

    done = _ended(api, started["id"])
    assert done["status"] == "completed", done
    nodes = _nodes(done)
    for node_id, task in nodes.items():
        box = boxes.and_(card.locator(f"[data-node='{node_id}']"))
        expect(box).to_have_attribute("data-status", task["status"])
        expect(box).to_contain_text(node_id)
        expect(box).to_contain_text(SHOWN.get(task["taskType"], task["taskType"]))
    skipped = [n for n, t in nodes.items() if t["status"] == "skipped"]
    taken = {n: t["result"]["branch"] for n, t in nodes.items() if t["taskType"] == "condition"}
    untaken = [
        e["to"] for e in graph["edges"] if e["from"] in taken and e["when"] != taken[e["from"]]
    ]
    assert skipped == untaken != [], nodes
    for node_id in skipped:
        expect(card.locator(f".graph-node[data-node='{node_id}'] .badge")).to_have_text("Skipped")
    for wait in waits:
        expect(card.locator(f".graph-node[data-node='{wait}'] .badge")).to_have_text("Done")

    seen = page.evaluate("window.__nodeStatuses")
    for wait in waits:  # held, not yet due, then done, live
        assert ["open", "Waiting"] in seen[wait] and seen[wait][-1] == ["completed", "Done"], seen
    assert page.evaluate("document.body.dataset.sameDocument") == "yes", "no reload"

    edges = card.locator("svg.graph-edges path")
    expect(edges).to_have_count(len(graph["edges"]))
    assert all(d and d.startswith("M") for d in [e.get_attribute("d") for e in edges.all()])
    expect(card.locator("svg.graph-edges")).to_have_attribute("aria-hidden", "true")
    labels = sorted(card.locator("svg.graph-edges text").all_text_contents())
    assert labels == sorted(e["when"] for e in graph["edges"] if e.get("when"))
    # the layers: every edge goes down the card, from its source's box to its target's
    tops = {n: card.locator(f".graph-node[data-node='{n}']").bounding_box() for n in nodes}
    for edge in graph["edges"]:
        above, below = tops[edge["from"]], tops[edge["to"]]
        assert above and below and above["y"] + above["height"] <= below["y"], edge

    page.reload()  # drawn the same from the conversation's history
    expect(boxes).to_have_count(len(nodes))
    for node_id, task in nodes.items():
        expect(card.locator(f".graph-node[data-node='{node_id}']")).to_have_attribute(
            "data-status", task["status"]
        )
    expect(edges).to_have_count(len(graph["edges"]))


def test_a_graph_node_waiting_for_consent_offers_review_and_confirm(page: Page, panel, api) -> None:
    components = [
        {"id": "hello", "type": "message.send", "config": {"text": "Sending the order."}},
        {
            "id": "order",
            "type": "service.call",
            "config": {"url": "https://example.com/orders", "method": "POST", "body": {"n": 1}},
        },
    ]
    edges = [{"from": "hello", "to": "order"}]
    graph = api.post("/api/graphs", {"name": "Order", "components": components, "edges": edges})
    cid = new_conversation(api.client)
    started = api.post(f"/api/graphs/{graph['id']}/runs", {"conversationId": cid})
    panel.open(cid)
    card = page.locator(f".run-card[data-run='{started['id']}']")
    waiting = [c["id"] for c in graph["components"] if c["type"] == "service.call"]
    for node_id in waiting:
        box = card.locator(f".graph-node[data-node='{node_id}']")
        expect(box).to_have_attribute("data-status", "awaiting_confirmation")
        expect(box.locator(".badge")).to_have_text("Needs your confirmation")
        box.get_by_role("button", name=f"Review and confirm: {node_id}").click()
        expect(page.get_by_role("dialog")).to_be_visible()
