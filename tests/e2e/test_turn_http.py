"""A conversation turn end to end, over the real server's HTTP and SSE."""

from __future__ import annotations

import pytest

from harness import Server, new_conversation, post, stream


def _turn_events(events: list[dict], turn_id: str) -> list[dict]:
    return [e for e in events if e["turnId"] == turn_id]


def test_seo_request_is_routed_to_dana_and_streams_to_done(server: Server) -> None:
    with server.client() as client:
        cid = new_conversation(client)
        posted = post(client, cid, "Please improve our SEO traffic")
        events = stream(client, cid)

    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    types = [e["type"] for e in events]
    assert types[0] == "message" and events[0]["data"]["author"] == "user"
    assert types.count("done") == 1 and types[-1] == "done"
    assert all(e["turnId"] == posted["turnId"] for e in events)

    routing = next(e for e in events if e["type"] == "routing")
    assert routing["data"]["agentId"] == "growthLead"
    assert routing["data"]["previousAgentId"] == "chief"
    status = next(e for e in events if e["type"] == "status")
    assert status["data"]["text"] == "Hans is handing this off to Growth Lead Dana"
    thinking = [e["data"]["summary"] for e in events if e["type"] == "thinking"]
    assert "Hans is choosing Growth Lead based on SEO intent" in thinking

    deltas = [e for e in events if e["type"] == "text_delta"]
    answer = next(
        e for e in events if e["type"] == "message" and e["data"]["author"] == "assistant"
    )
    assert deltas, "the answer is streamed"
    assert "".join(d["data"]["delta"] for d in deltas).strip() == answer["data"]["content"]
    assert answer["agentId"] == "growthLead"
    assert types.index("routing") < types.index("text_delta") < types.index("done")


def test_history_reload_matches_the_live_stream(server: Server) -> None:
    with server.client() as client:
        cid = new_conversation(client)
        post(client, cid, "Please improve our SEO traffic")
        live = stream(client, cid)
        replay = stream(client, cid)
        messages = client.get(f"/api/conversations/{cid}/messages").json()
        convo = client.get(f"/api/conversations/{cid}").json()

    assert replay == live
    announced = [
        e["data"]["messageId"] for e in live if e["type"] in ("message", "status", "thinking")
    ]
    assert [m["id"] for m in messages] == announced
    assert [m["kind"] for m in messages][0] == "user"
    assert {"status", "thinking", "assistant"} <= {m["kind"] for m in messages}
    assert convo["state"] == "idle" and convo["currentAgent"] == "growthLead"
    assert convo["lastSeq"] == live[-1]["seq"]


def test_reconnect_with_last_event_id_yields_exactly_the_missing_events(server: Server) -> None:
    with server.client() as client:
        cid = new_conversation(client)
        post(client, cid, "Create a new page called Services")
        full = stream(client, cid)
        for cut in (1, len(full) // 2, len(full) - 1):
            rest = stream(client, cid, last_event_id=cut)
            assert [e["seq"] for e in rest] == [e["seq"] for e in full[cut:]]
            assert rest == full[cut:]
        after = stream(client, cid, after=3)
    assert after == full[3:]


def test_a_second_message_continues_with_the_routed_agent(server: Server) -> None:
    with server.client() as client:
        cid = new_conversation(client)
        post(client, cid, "Please improve our SEO traffic")
        first = stream(client, cid)
        second_turn = post(client, cid, "and what next?")
        events = stream(client, cid, after=first[-1]["seq"], turn_id=second_turn["turnId"])
    routing = next(e for e in events if e["type"] == "routing")
    assert routing["data"]["agentId"] == "growthLead"
    assert routing["data"]["ruleId"] is None
    assert not any(e["type"] == "status" for e in events), "no handoff chip when nobody changes"


def test_active_agent_from_the_request_is_honoured_when_no_rule_matches(server: Server) -> None:
    with server.client() as client:
        cid = new_conversation(client)
        turn = post(client, cid, "hello, can you help?", activeAgentId="researchAgent")
        events = stream(client, cid, turn_id=turn["turnId"])
        convo = client.get(f"/api/conversations/{cid}").json()
    routing = next(e for e in events if e["type"] == "routing")
    assert routing["data"]["agentId"] == "researchAgent"
    assert convo["currentAgent"] == "researchAgent"


def test_project_context_reaches_the_thinking_stream(server: Server) -> None:
    with server.client() as client:
        project = client.post(
            "/api/projects",
            json={
                "name": "Aquaverter",
                "domain": "aquaverter.ca",
                "cmsPlatform": "wordpress",
                "config": {"workspaceDrafts": True},
            },
        ).json()
        cid = new_conversation(client, projectId=project["id"])
        post(client, cid, "Please improve our SEO traffic")
        events = stream(client, cid)
    thinking = [e["data"]["summary"] for e in events if e["type"] == "thinking"]
    assert "Hans is checking the context of Aquaverter (wordpress, aquaverter.ca)" in thinking


def test_timeline_and_llm_calls_describe_the_turn(server: Server) -> None:
    with server.client() as client:
        cid = new_conversation(client)
        post(client, cid, "Please improve our SEO traffic")
        stream(client, cid)
        timeline = client.get(f"/api/conversations/{cid}/timeline").json()
        calls = client.get("/api/llm-calls", params={"conversationId": cid}).json()
    kinds = [t["kind"] for t in timeline]
    assert kinds[0] == "message" and timeline[0]["actor"] == "user"
    assert "routing" in kinds and kinds[-1] == "done"
    routing = timeline[kinds.index("routing")]
    assert routing["summary"] == "Hans routed the request to Growth Lead Dana (SEO intent)"
    assert set(timeline[0]) >= {"time", "actor", "kind", "runId", "summary"}
    assert len(calls) == 1
    call = calls[0]
    assert call["provider"] == "scripted" and call["agentId"] == "growthLead"
    assert call["success"] is True and call["error"] is None
    assert call["promptTokens"] > 0 and call["completionTokens"] > 0
    assert call["totalTokens"] == call["promptTokens"] + call["completionTokens"]
    assert call["latencyMs"] >= 0 and call["costUsd"] == 0.0


@pytest.mark.parametrize("after", [0, 2])
def test_websocket_replays_and_accepts_messages(server: Server, after: int) -> None:
    import json

    from websockets.sync.client import connect

    with server.client() as client:
        cid = new_conversation(client)
    url = server.url.replace("http://", "ws://") + f"/api/conversations/{cid}/ws?after={after}"
    with connect(url, open_timeout=10) as ws:
        ws.send(json.dumps({"type": "message", "content": "Is our SSL certificate still valid?"}))
        frames = []
        while True:
            frame = json.loads(ws.recv(timeout=30))
            frames.append(frame)
            if frame.get("type") == "done":
                break
        ws.send(json.dumps({"type": "message", "content": "   "}))
        refused = json.loads(ws.recv(timeout=30))
    accepted = [f for f in frames if f.get("type") == "accepted"]
    events = [f for f in frames if "seq" in f]
    assert len(accepted) == 1
    assert [e["seq"] for e in events] == list(range(after + 1, after + 1 + len(events)))
    assert next(e for e in events if e["type"] == "routing")["data"]["agentId"] == "technicalLead"
    assert refused["type"] == "error" and refused["error"]["code"] == "invalid_input"
