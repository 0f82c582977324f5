"""Prompt graphs run over the real server (seed 001): one task per node on the run
scheduler, templates filled from inputs and earlier nodes, branches not taken skipped, a
wait held durably (through kill -9)."""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from test_webhooks import Target

from harness import (
    FAST,
    Server,
    hans_says,
    new_conversation,
    poll_until,
    post,
    running_server,
    turn,
)

Run = dict[str, Any]
ANSWER = "All systems go: the status check answered."


@pytest.fixture(scope="module")
def target() -> Iterator[Target]:
    t = Target()
    yield t
    t.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, target: Target) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("graphs")
    script = tmp / "analyst.json"
    step = {"purpose": "graph_node", "promptHas": ["Status: GET, for hello"], "text": ANSWER}
    script.write_text(json.dumps([step]))
    slow = tmp / "slow.json"
    slow.write_text(json.dumps([{"purpose": "graph_node", "text": "slow", "delaySeconds": 2}] * 4))
    (tmp / "hansa.toml").write_text(
        f'[agents.researchAgent]\nmodel = "scripted:{script}"\n'
        f'[agents.fileAgent]\nmodel = "scripted:{slow}"\n'
    )
    env = {"HANSA_OUTBOUND_ALLOW": f"127.0.0.1:{target.port}"}
    args = ("--config", str(tmp / "hansa.toml"))
    with running_server(tmp, extra_args=args, env=env) as s:
        yield s


@pytest.fixture
def client(server: Server) -> Iterator[httpx.Client]:
    with server.client() as c:
        yield c


def _graph(client: httpx.Client, components: list[Any], edges: list[Any]) -> str:
    made = client.post("/api/graphs", json={"name": "g", "components": components, "edges": edges})
    assert made.status_code == 201, made.text
    return str(made.json()["id"])


def _run(client: httpx.Client, graph_id: str, cid: str, **body: Any) -> Run:
    started = client.post(f"/api/graphs/{graph_id}/runs", json={"conversationId": cid, **body})
    assert started.status_code == 201, started.text
    return dict(started.json())


def _until(
    client: httpx.Client, run_id: str, ok: Callable[[Run], bool], seconds: float = 30
) -> Run:
    return poll_until(client, f"/api/runs/{run_id}", ok, seconds=seconds)


def _ended(card: Run) -> bool:
    return card["status"] in ("completed", "failed", "cancelled")


def _nodes(card: Run) -> dict[str, dict[str, Any]]:
    return {t["nodeId"]: t for g in card["groups"] for t in g["tasks"]}


def _said(client: httpx.Client, cid: str) -> list[str]:
    found = client.get(f"/api/conversations/{cid}/messages").json()
    return [m["content"] for m in found if m["kind"] == "assistant"]


def test_the_seeds_graph_calls_a_service_asks_a_model_and_says_the_answer(
    client: httpx.Client, target: Target
) -> None:
    url = f"http://127.0.0.1:{target.port}/status"
    prompt = "Status: {{fetch.result.body.received}}, for {{message.content}}"
    graph_id = _graph(
        client,
        [
            {"id": "fetch", "type": "service.call", "config": {"url": url}},
            {
                "id": "analyze",
                "type": "llm.invoke",
                "config": {"prompt": prompt, "agentId": "researchAgent"},
            },
            {"id": "tell", "type": "message.send", "config": {"text": "{{llmResponse}}"}},
        ],
        [{"from": "fetch", "to": "analyze"}, {"from": "analyze", "to": "tell"}],
    )
    cid = new_conversation(client)
    before = len(target.requests)
    started = _run(client, graph_id, cid, inputs={"message": {"content": "hello"}})
    assert started["status"] == "running"
    done = _until(client, started["id"], _ended)
    assert done["status"] == "completed", done
    nodes = _nodes(done)
    assert [t["status"] for t in nodes.values()] == ["completed"] * 3
    assert nodes["analyze"]["dependsOn"] == [nodes["fetch"]["id"]]
    assert nodes["analyze"]["createdByAgentId"] == "researchAgent"
    assert nodes["tell"]["result"] == {"text": ANSWER}
    assert [m for m in target.requests[before:] if m[0] == "GET"] != []
    assert _said(client, cid) == [ANSWER], "the node's message, once"
    calls = client.get("/api/llm-calls", params={"runId": started["id"]}).json()
    assert [c["nodeId"] for c in calls] == ["analyze"]


def test_a_condition_takes_one_branch_and_skips_the_other(client: httpx.Client) -> None:
    graph_id = _graph(
        client,
        [
            {
                "id": "check",
                "type": "condition",
                "config": {"value": "{{context.tier}}", "in": ["gold"]},
            },
            {"id": "vip", "type": "message.send", "config": {"text": "A specialist calls you."}},
            {"id": "usual", "type": "message.send", "config": {"text": "We answer within a day."}},
            {"id": "thanks", "type": "message.send", "config": {"text": "Thanks, {{user.name}}."}},
        ],
        [
            {"from": "check", "to": "vip", "when": "true"},
            {"from": "check", "to": "usual", "when": "false"},
            {"from": "vip", "to": "thanks"},
            {"from": "usual", "to": "thanks"},
        ],
    )
    seen: dict[str, tuple[dict[str, str], list[str]]] = {}
    for tier in ("gold", "silver"):
        cid = new_conversation(client)
        inputs = {"context": {"tier": tier}, "user": {"name": "Ada"}}
        done = _until(client, _run(client, graph_id, cid, inputs=inputs)["id"], _ended)
        assert done["status"] == "completed", done
        statuses = {node: t["status"] for node, t in _nodes(done).items()}
        seen[tier] = (statuses, _said(client, cid))
    gold, silver = seen["gold"], seen["silver"]
    assert gold[0] == {
        "check": "completed",
        "vip": "completed",
        "usual": "skipped",
        "thanks": "completed",
    }
    assert gold[1] == ["A specialist calls you.", "Thanks, Ada."]
    assert silver[0] == {
        "check": "completed",
        "vip": "skipped",
        "usual": "completed",
        "thanks": "completed",
    }
    assert silver[1] == ["We answer within a day.", "Thanks, Ada."]


def test_a_missing_variable_fails_its_node_under_the_law_of_clarity(client: httpx.Client) -> None:
    graph_id = _graph(
        client,
        [
            {"id": "greet", "type": "message.send", "config": {"text": "Hi {{user.name}}"}},
            {"id": "after", "type": "message.send", "config": {"text": "never said"}},
        ],
        [{"from": "greet", "to": "after"}],
    )
    cid = new_conversation(client)
    done = _until(client, _run(client, graph_id, cid)["id"], _ended)
    nodes = _nodes(done)
    assert done["status"] == "failed"
    assert nodes["greet"]["status"] == "failed" and "user.name" in nodes["greet"]["error"]
    assert nodes["after"]["status"] == "cancelled"
    (explained,) = _said(client, cid)  # Hans explains a failed graph; "never said" is not said
    assert "greet" in explained and "user.name" in explained


def test_injected_template_text_renders_literally(client: httpx.Client) -> None:
    graph_id = _graph(
        client,
        [
            {
                "id": "echo",
                "type": "message.send",
                "config": {"text": "You said: {{message.content}} {{__class__}}"},
            }
        ],
        [],
    )
    cid = new_conversation(client)
    inputs = {"message": {"content": "{{user.secret}}"}, "user": {"secret": "s3cr3t"}}
    done = _until(client, _run(client, graph_id, cid, inputs=inputs)["id"], _ended)
    assert done["status"] == "completed"
    assert _said(client, cid) == ["You said: {{user.secret}} {{__class__}}"]


def test_a_node_may_not_name_a_model_the_operator_did_not_offer(client: httpx.Client) -> None:
    graph_id = _graph(
        client,
        [
            {
                "id": "ask",
                "type": "llm.invoke",
                "config": {"prompt": "hi", "model": "scripted:/etc/passwd"},
            }
        ],
        [],
    )
    done = _until(client, _run(client, graph_id, new_conversation(client))["id"], _ended)
    (task,) = _nodes(done).values()
    assert task["status"] == "failed" and task["result"]["error"]["code"] == "model_not_allowed"


LOOP_GRAPH = (
    [
        {
            "id": "each",
            "type": "loop",
            "config": {
                "items": "{{context.names}}",
                "itemKey": "name",
                "indexKey": "i",
                "maxIterations": 5,
            },
        },
        {"id": "greet", "type": "message.send", "config": {"text": "{{i}}: Hello {{name}}"}},
        {
            "id": "tally",
            "type": "message.send",
            "config": {"text": "{{each.result.count}} greeted"},
        },
    ],
    [{"from": "each", "to": "greet"}, {"from": "greet", "to": "tally"}],
)


def test_a_loop_runs_its_body_once_per_item_in_order(client: httpx.Client) -> None:
    graph_id = _graph(client, *LOOP_GRAPH)
    cid = new_conversation(client)
    inputs = {"context": {"names": ["Ada", "Bo", "Cy"]}}
    done = _until(client, _run(client, graph_id, cid, inputs=inputs)["id"], _ended)
    assert done["status"] == "completed", done
    assert _said(client, cid) == ["0: Hello Ada", "1: Hello Bo", "2: Hello Cy", "3 greeted"]
    nodes = _nodes(done)
    copies = [nodes[f"greet[{i}]"] for i in range(3)]
    assert {c["parentTaskId"] for c in copies} == {nodes["greet"]["id"]}
    assert nodes["greet"]["result"] == {
        "results": [{"text": f"{i}: Hello {n}"} for i, n in enumerate(["Ada", "Bo", "Cy"])]
    }


def test_a_loop_past_its_bound_is_refused(client: httpx.Client) -> None:
    graph_id = _graph(client, *LOOP_GRAPH)
    cid = new_conversation(client)
    inputs = {"context": {"names": [f"n{i}" for i in range(10_000)]}}
    done = _until(client, _run(client, graph_id, cid, inputs=inputs)["id"], _ended)
    nodes = _nodes(done)
    assert done["status"] == "failed"
    assert nodes["each"]["status"] == "failed"
    assert [n for n in nodes if n.startswith("greet[")] == [], "no body was made"
    assert all("Hello" not in m for m in _said(client, cid))


def test_a_rule_runs_a_graph_with_the_message_it_matched(client: httpx.Client) -> None:
    graph_id = _graph(
        client,
        [{"id": "ack", "type": "message.send", "config": {"text": "On it: {{message.content}}"}}],
        [],
    )
    rule = {
        "name": "status checks run the status graph",
        "trigger": "message.received",
        "conditions": {
            "logic": "and",
            "conditions": [{"field": "message.content", "operator": "words", "value": ["uptime"]}],
        },
        "actions": [{"type": "graph.run", "params": {"graphId": graph_id}}],
    }
    created = client.post("/api/rules", json=rule)
    assert created.status_code == 201, created.text
    refused = client.post(
        "/api/rules", json={**rule, "actions": [{"type": "graph.run", "params": {}}]}
    )
    cid = new_conversation(client)
    post(client, cid, "What is our uptime this week?")
    deadline = time.monotonic() + 30
    while "On it: What is our uptime this week?" not in _said(client, cid):
        assert time.monotonic() < deadline, _said(client, cid)
        time.sleep(0.1)
    client.delete(f"/api/rules/{created.json()['id']}")
    assert refused.status_code == 422 and "graphId" in refused.json()["error"]["message"]


def test_a_graph_updates_the_context_and_moves_the_conversation(client: httpx.Client) -> None:
    graph_id = _graph(
        client,
        [
            {"id": "note", "type": "context.update", "config": {"set": {"stage": "triaged"}}},
            {"id": "close", "type": "state.transition", "config": {"to": "resolved"}},
            {"id": "again", "type": "state.transition", "config": {"to": "agent_active"}},
        ],
        [{"from": "note", "to": "close"}, {"from": "close", "to": "again"}],
    )
    cid = new_conversation(client)
    done = _until(client, _run(client, graph_id, cid)["id"], _ended)
    convo = client.get(f"/api/conversations/{cid}").json()
    nodes = _nodes(done)
    assert [nodes[n]["status"] for n in ("note", "close", "again")] == [
        "completed",
        "completed",
        "failed",
    ]
    assert "cannot move to agent_active" in nodes["again"]["error"]
    assert convo["context"]["stage"] == "triaged"
    assert convo["state"] == "resolved", "the refused move changed nothing"


def test_a_handoff_node_pauses_the_graph_until_the_person_gives_it_back(
    client: httpx.Client,
) -> None:
    graph_id = _graph(
        client,
        [
            {
                "id": "ask",
                "type": "handoff.create",
                "config": {"reason": "a person should check the refund", "priority": "high"},
            },
            {"id": "after", "type": "message.send", "config": {"text": "Back with the team."}},
        ],
        [{"from": "ask", "to": "after"}],
    )
    cid = new_conversation(client)
    run_id = _run(client, graph_id, cid)["id"]
    paused = _until(client, run_id, lambda r: r["status"] == "paused")
    (handed,) = [h for h in client.get("/api/handoffs").json() if h["conversationId"] == cid]
    state = client.get(f"/api/conversations/{cid}").json()["state"]
    client.post(f"/api/handoffs/{handed['id']}/accept", json={"assignee": "Ana"})
    client.post(f"/api/handoffs/{handed['id']}/return")
    done = _until(client, run_id, _ended)

    assert _nodes(paused)["after"]["status"] == "open", "nothing ran while a person had it"
    assert handed["reason"] == "a person should check the refund" and handed["priority"] == "high"
    assert handed["requestedBy"] == {"kind": "graph", "id": run_id}
    assert state == "handoff_pending"
    assert done["status"] == "completed"
    assert _said(client, cid)[-1] == "Back with the team."


def test_a_handoff_node_meeting_an_open_handoff_leaves_no_run_stuck(
    client: httpx.Client,
) -> None:
    """A person has the conversation already: the node finds that handoff, nothing is paused,
    and the graph goes on to its end (its run used to stay ``running`` with no job)."""
    graph_id = _graph(
        client,
        [
            {"id": "ask", "type": "handoff.create", "config": {"reason": "again"}},
            {"id": "after", "type": "message.send", "config": {"content": "Still here."}},
        ],
        [{"from": "ask", "to": "after"}],
    )
    cid = new_conversation(client)
    opened = client.post(f"/api/conversations/{cid}/handoff", json={"reason": "billing"})
    assert opened.status_code == 201, opened.text
    started = client.post(f"/api/graphs/{graph_id}/runs", json={"conversationId": cid})
    assert started.status_code == 201, started.text
    done = _until(client, started.json()["id"], _ended, seconds=10)
    assert done["status"] == "completed", done


SLOW = {
    "id": "slow",
    "type": "llm.invoke",
    "config": {"prompt": "take your time", "agentId": "fileAgent"},
}


def _seconds(card: Run) -> float:
    started, ended = (datetime.fromisoformat(card[k]) for k in ("createdAt", "updatedAt"))
    return (ended - started).total_seconds()


def test_parallel_any_ends_at_the_fastest_child_and_cuts_the_slow_one(client: httpx.Client) -> None:
    graph_id = _graph(
        client,
        [
            {"id": "race", "type": "parallel", "config": {"strategy": "any"}},
            {"id": "fast", "type": "wait", "config": {"seconds": 0.2}},
            SLOW,
            {
                "id": "join",
                "type": "message.send",
                "config": {"text": "{{race.result.winner}} won"},
            },
        ],
        [
            {"from": "race", "to": "fast"},
            {"from": "race", "to": "slow"},
            {"from": "fast", "to": "join"},
            {"from": "slow", "to": "join"},
        ],
    )
    cid = new_conversation(client)
    done = _until(client, _run(client, graph_id, cid)["id"], _ended)
    nodes = _nodes(done)
    assert done["status"] == "completed", done
    assert nodes["slow"]["status"] == "cancelled"
    assert "another branch of race finished first" in nodes["slow"]["error"]
    assert _said(client, cid) == ["fast won"]
    assert _seconds(done) < 2, "the slow child (2 s) was not waited for"


def test_parallel_any_over_durable_waits_ends_when_the_first_wait_is_over(
    client: httpx.Client,
) -> None:
    """The slow wait, held for its due time, loses and is skipped; the run then ends (it
    used to stay ``running``: the job saw the skipped wait as still held, and quit)."""
    graph_id = _graph(
        client,
        [
            {"id": "race", "type": "parallel", "config": {"strategy": "any"}},
            {"id": "fast", "type": "wait", "config": {"seconds": 0.2}},
            {"id": "slow", "type": "wait", "config": {"seconds": 60}},
        ],
        [{"from": "race", "to": "fast"}, {"from": "race", "to": "slow"}],
    )
    cid = new_conversation(client)
    done = _until(client, _run(client, graph_id, cid)["id"], _ended, seconds=10)
    nodes = _nodes(done)
    assert done["status"] == "completed", done
    assert nodes["fast"]["status"] == "completed"
    assert nodes["slow"]["status"] == "skipped"
    assert "another branch of race finished first" in nodes["slow"]["error"]


def test_parallel_settle_goes_on_past_a_failing_child(client: httpx.Client) -> None:
    graph_id = _graph(
        client,
        [
            {"id": "both", "type": "parallel", "config": {"strategy": "settle"}},
            {"id": "ok", "type": "message.send", "config": {"text": "fine"}},
            {"id": "bad", "type": "message.send", "config": {"text": "{{user.missing}}"}},
            {
                "id": "report",
                "type": "message.send",
                "config": {
                    "text": "{{both.result.errors.0.node}} failed, "
                    "{{both.result.successes.0.node}} worked"
                },
            },
        ],
        [
            {"from": "both", "to": "ok"},
            {"from": "both", "to": "bad"},
            {"from": "ok", "to": "report"},
            {"from": "bad", "to": "report"},
        ],
    )
    cid = new_conversation(client)
    done = _until(client, _run(client, graph_id, cid)["id"], _ended)
    assert done["status"] == "completed", done
    assert _nodes(done)["bad"]["status"] == "failed"
    assert _said(client, cid) == ["fine", "bad failed, ok worked"]


def test_a_parallel_timeout_stops_its_children_and_fails_the_run(client: httpx.Client) -> None:
    graph_id = _graph(
        client,
        [
            {"id": "fan", "type": "parallel", "config": {"strategy": "all", "timeoutMs": 300}},
            SLOW,
            {"id": "after", "type": "message.send", "config": {"text": "never said"}},
        ],
        [{"from": "fan", "to": "slow"}, {"from": "slow", "to": "after"}],
    )
    cid = new_conversation(client)
    done = _until(client, _run(client, graph_id, cid)["id"], _ended)
    nodes = _nodes(done)
    assert done["status"] == "failed"
    assert nodes["slow"]["status"] == "failed"
    assert "fan timed out after 300 ms" in nodes["slow"]["error"]
    assert nodes["after"]["status"] == "cancelled"
    assert _seconds(done) < 2, "stopped at the timeout, not after the slow child"
    assert "never said" not in _said(client, cid)


def test_an_agent_with_a_default_graph_answers_with_it(tmp_path: Path) -> None:
    components = [
        {
            "id": "echo",
            "type": "message.send",
            "config": {"text": "Graph heard: {{message.content}}"},
        }
    ]
    with running_server(tmp_path) as first, first.client() as c:
        graph_id = _graph(c, components, [])
    config = tmp_path / "hansa.toml"
    config.write_text(f'[agents.seoSpecialist]\ndefault_graph_id = "{graph_id}"\n')
    with running_server(tmp_path, extra_args=("--config", str(config))) as server:
        with server.client() as c:
            cid = new_conversation(c)
            events = turn(c, cid, "Check our meta tags", activeAgentId="seoSpecialist")
            deadline = time.monotonic() + 30
            while "Graph heard: Check our meta tags" not in _said(c, cid):
                assert time.monotonic() < deadline, _said(c, cid)
                time.sleep(0.1)
            said = _said(c, cid)
    assert hans_says(events) == ["I am running “g” for this."]
    assert said.count("Graph heard: Check our meta tags") == 1


def test_a_wait_survives_kill_9_and_the_run_completes_once(tmp_path: Path) -> None:
    components = [
        {"id": "hello", "type": "message.send", "config": {"text": "Back in a moment."}},
        {"id": "pause", "type": "wait", "config": {"seconds": 6}},
        {"id": "back", "type": "message.send", "config": {"text": "I am back."}},
    ]
    edges = [{"from": "hello", "to": "pause"}, {"from": "pause", "to": "back"}]
    with running_server(tmp_path, env=FAST) as doomed, doomed.client() as c:
        graph_id = _graph(c, components, edges)
        cid = new_conversation(c)
        run_id = _run(c, graph_id, cid)["id"]
        waiting = _until(c, run_id, lambda r: _nodes(r)["pause"]["scheduledAt"] is not None)
        os.kill(doomed.process.pid, signal.SIGKILL)
        doomed.process.wait(10)
    assert _nodes(waiting)["back"]["status"] == "open"
    with running_server(tmp_path, env=FAST) as server, server.client() as c:
        done = _until(c, run_id, _ended, seconds=60)
        said = _said(c, cid)
    assert done["status"] == "completed", done
    assert said == ["Back in a moment.", "I am back."]
    assert _nodes(done)["pause"]["result"] == {"waitedSeconds": 6.0}


def test_a_condition_that_compares_a_word_with_a_number_does_not_hold(
    client: httpx.Client,
) -> None:
    """The rules' evaluator (one condition language): ``gt`` of a word is false, as in a
    rule; the first graph conditions failed the node instead."""
    graph_id = _graph(
        client,
        [
            {
                "id": "check",
                "type": "condition",
                "config": {"condition": {"field": "context.n", "operator": "gt", "value": 3}},
            },
            {"id": "big", "type": "message.send", "config": {"content": "big"}},
        ],
        [{"from": "check", "to": "big", "when": "true"}],
    )
    cid = new_conversation(client)
    done = _until(
        client, _run(client, graph_id, cid, inputs={"context": {"n": "many"}})["id"], _ended
    )
    nodes = _nodes(done)
    assert done["status"] == "completed", done
    assert nodes["check"]["result"]["branch"] == "false"
    assert nodes["check"]["result"]["conditions"][0]["actual"] == "many"
    assert nodes["big"]["status"] == "skipped"
