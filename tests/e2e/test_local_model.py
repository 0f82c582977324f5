"""A real turn with the embedded model (SmolLM2 through llama.cpp), over HTTP."""

from __future__ import annotations

import pytest

from harness import new_conversation, post, running_server, stream


@pytest.mark.slow
def test_a_real_turn_with_the_local_model(tmp_path) -> None:
    with running_server(tmp_path, model="local") as server, server.client(timeout=300) as client:
        cid = new_conversation(client)
        turn = post(client, cid, "Please improve our SEO traffic")
        events = stream(client, cid, turn_id=turn["turnId"])
        calls = client.get("/api/llm-calls", params={"conversationId": cid}).json()

    types = [e["type"] for e in events]
    assert types[-1] == "done" and events[-1]["data"]["status"] == "completed", types
    answer = next(e for e in events if e["type"] == "message" and e["data"]["kind"] == "assistant")
    assert answer["agentId"] == "growthLead"
    assert answer["data"]["content"].strip(), "the model wrote something"
    deltas = "".join(e["data"]["delta"] for e in events if e["type"] == "text_delta")
    assert deltas.strip() == answer["data"]["content"]
    (call,) = calls
    assert call["provider"] == "local" and call["success"] is True
    assert call["promptTokens"] > 0 and call["completionTokens"] > 0
