"""Usage is honest (issue 31 item 3): a model call cut before it answered (a turn cancelled,
a turn handed to a person, a graph's llm.invoke node preempted) is recorded all the same,
with ``status`` ``cancelled``, its tokens so far estimated and marked so, and counted by
GET /api/usage. The scripted model streams every answer over a few seconds, so each cut
lands mid-stream."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from harness import Server, events_until, new_conversation, poll_until, post, running_server

STREAM_SECONDS = 20.0
"""How long each answer takes to stream: far longer than any test waits for a cut."""


@pytest.fixture(scope="module")
def slow(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("cut_calls")
    script = tmp / "script.json"
    script.write_text(json.dumps({"delaySeconds": STREAM_SECONDS}))
    with running_server(tmp, model=f"scripted:{script}") as server:
        yield server


def _streaming(client: httpx.Client, cid: str) -> str:
    """Post a message and wait for its reply's first text; the turn's id."""
    posted = post(client, cid, "hello there, how are you?")
    events_until(client, cid, lambda e: e["type"] == "text_delta")
    return posted.turn_id


def _cut_calls(client: httpx.Client, query: str) -> list[dict[str, Any]]:
    """The call records of ``query`` once one of them is cancelled (it is stored as the cut
    turn or step winds down, a moment after the ``done``)."""
    found: Any = poll_until(
        client,
        f"/api/llm-calls?{query}",
        lambda calls: any(c["status"] == "cancelled" for c in calls),
    )
    return list(found)


def _assert_cut(call: dict[str, Any], *, streamed: bool = True) -> None:
    """A cut call's record: its prompt counted, and the text it streamed (a reply shows its
    text as it streams; a node's call is cut at whatever point it had reached)."""
    assert call["status"] == "cancelled" and call["success"] is False
    assert call["estimated"] is True, "the provider never said: the tokens are estimated"
    assert call["promptTokens"] > 0, call
    assert call["completionTokens"] > 0 or not streamed, call
    assert call["totalTokens"] == call["promptTokens"] + call["completionTokens"]


def test_a_cancelled_turn_leaves_its_call_recorded_and_counted(slow: Server) -> None:
    with slow.client() as client:
        cid = new_conversation(client)
        turn_id = _streaming(client, cid)
        cancelled = client.post(f"/api/turns/{turn_id}/cancel")
        assert cancelled.status_code == 200, cancelled.text
        calls = _cut_calls(client, f"conversationId={cid}")
        usage = client.get("/api/usage", params={"conversationId": cid}).json()

    cut = [c for c in calls if c["status"] == "cancelled"]
    assert len(cut) == 1 and cut[0]["turnId"] == turn_id
    _assert_cut(cut[0])
    totals = usage["totals"]
    assert totals["calls"] == len(calls)
    assert totals["cancelledCalls"] == 1
    assert totals["estimatedTokens"] == cut[0]["totalTokens"]
    assert totals["totalTokens"] == sum(c["totalTokens"] for c in calls)


def test_a_turn_handed_to_a_person_leaves_its_call_recorded(slow: Server) -> None:
    with slow.client() as client:
        cid = new_conversation(client)
        turn_id = _streaming(client, cid)
        handed = client.post(f"/api/conversations/{cid}/handoff", json={"reason": "billing"})
        assert handed.status_code == 201, handed.text
        calls = _cut_calls(client, f"conversationId={cid}")

    cut = [c for c in calls if c["status"] == "cancelled"]
    assert [c["turnId"] for c in cut] == [turn_id]
    _assert_cut(cut[0])


def test_a_turn_a_newer_message_interrupts_leaves_its_call_recorded(slow: Server) -> None:
    with slow.client() as client:
        cid = new_conversation(client)
        first = _streaming(client, cid)
        newer = post(client, cid, "never mind, this instead", multitaskStrategy="interrupt")
        calls = _cut_calls(client, f"conversationId={cid}")

    cut = [c for c in calls if c["status"] == "cancelled"]
    assert [c["turnId"] for c in cut] == [first]
    assert newer.turn_id != first
    _assert_cut(cut[0])


def test_a_preempted_model_node_leaves_its_call_recorded(slow: Server) -> None:
    components = [
        {"id": "draft", "type": "llm.invoke", "config": {"prompt": "Draft {{topic}}"}},
        {"id": "after", "type": "message.send", "config": {"content": "Drafted."}},
    ]
    body = {"name": "cut", "components": components, "edges": [{"from": "draft", "to": "after"}]}
    with slow.client() as client:
        cid = new_conversation(client)
        graph = client.post("/api/graphs", json=body)
        assert graph.status_code == 201, graph.text
        run = client.post(
            f"/api/graphs/{graph.json()['id']}/runs",
            json={"conversationId": cid, "inputs": {"topic": "pools"}},
        ).json()
        started = events_until(
            client,
            cid,
            lambda e: e["type"] == "task_status" and e["data"]["status"] == "in_progress",
        )
        task_id = started[-1]["taskId"]
        preempted = client.post(f"/api/tasks/{task_id}/preempt")
        assert preempted.status_code == 200, preempted.text
        calls = _cut_calls(client, f"runId={run['id']}")
        usage = client.get("/api/usage", params={"runId": run["id"]}).json()

    assert len(calls) == 1
    assert calls[0]["nodeId"] == "draft" and calls[0]["runId"] == run["id"]
    _assert_cut(calls[0], streamed=False)
    assert usage["totals"]["cancelledCalls"] == 1
    assert usage["byRun"][0]["totalTokens"] == calls[0]["totalTokens"]


def test_a_settle_timeout_cuts_its_slow_model_node_and_the_run_goes_on(slow: Server) -> None:
    """``parallel`` ``settle`` with a timeout (issue 31 item 6): the child still running at
    the timeout is cancelled, the run and the node after the fork go on, and the model call
    the timeout cut is recorded."""
    components = [
        {"id": "fan", "type": "parallel", "config": {"strategy": "settle", "timeout": 500}},
        {"id": "quick", "type": "message.send", "config": {"content": "quick done"}},
        {"id": "ponder", "type": "llm.invoke", "config": {"prompt": "take your time"}},
        {"id": "after", "type": "message.send", "config": {"content": "went on"}},
    ]
    edges = [
        {"from": "fan", "to": "quick"},
        {"from": "fan", "to": "ponder"},
        {"from": "quick", "to": "after"},
        {"from": "ponder", "to": "after"},
    ]
    with slow.client() as client:
        cid = new_conversation(client)
        graph = client.post("/api/graphs", json={"name": "fan", "components": components,
                                                 "edges": edges})  # fmt: skip
        assert graph.status_code == 201, graph.text
        run = client.post(
            f"/api/graphs/{graph.json()['id']}/runs", json={"conversationId": cid}
        ).json()
        card = poll_until(
            client,
            f"/api/runs/{run['id']}",
            lambda c: c["status"] in ("completed", "failed", "cancelled"),
        )
        calls = _cut_calls(client, f"runId={run['id']}")
        said = [
            m["content"]
            for m in client.get(f"/api/conversations/{cid}/messages").json()
            if m["kind"] == "assistant"
        ]

    nodes = {t["nodeId"]: t for g in card["groups"] for t in g["tasks"]}
    assert card["status"] == "completed", nodes
    assert nodes["quick"]["status"] == "completed"
    assert nodes["ponder"]["status"] == "cancelled"
    assert "fan timed out after 500 ms" in nodes["ponder"]["error"]
    assert nodes["after"]["status"] == "completed"
    assert said == ["quick done", "went on"]
    (cut,) = calls
    assert cut["nodeId"] == "ponder"
    _assert_cut(cut, streamed=False)
