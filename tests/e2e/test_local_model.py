"""A real turn with the embedded model (SmolLM2 through llama.cpp), over HTTP."""

from __future__ import annotations

import re

import pytest

from hansa.engine.planning import answers
from harness import (
    hans_says,
    new_conversation,
    post,
    running_server,
    stream,
    turn,
    wordpress_project,
)


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


@pytest.mark.slow
def test_the_local_models_reading_of_an_answer_is_json_and_invents_nothing(tmp_path) -> None:
    # the rules cannot place this answer (one sentence for four questions): the embedded
    # model reads it under the reader's grammar, and only the user's own words may be kept
    said = "It's for homeowners in Ontario with hard water, and make it look like our brochure"
    with running_server(tmp_path, model="local") as server, server.client(timeout=900) as client:
        cid = new_conversation(client, projectId=wordpress_project(client))
        turn(client, cid, "Please create a new webpage called Services")
        answered = turn(client, cid, said)
        calls = client.get("/api/llm-calls", params={"conversationId": cid}).json()
        planning = client.get(f"/api/conversations/{cid}").json()["metadata"].get("planning")

    reads = [c for c in calls if c["nodeId"] == "planner"]
    assert reads, "the model was asked what the answer says"
    assert all(c["success"] for c in reads), [c.get("error") for c in reads]
    plan = next((e["data"]["plan"] for e in answered if e["type"] == "plan"), None)
    requirements = (plan or (planning or {}).get("plan", {})).get("requirements", [])
    for r in requirements:
        if r.get("source") == "user":
            assert answers.written(r["value"], said), f"{r['name']}: {r['value']!r} was made up"
    for line in "\n".join(hans_says(answered)).splitlines():
        if line.startswith(("I understood", "Audience:", "Language:", "Layout:", "SEO angle:")):
            for quoted in re.findall(r"“([^”]+)”", line):
                assert answers.written(quoted.rstrip("…"), said), f"Hans made up {quoted!r}"
