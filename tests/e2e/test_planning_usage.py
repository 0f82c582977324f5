"""A planning turn says what its model call used (issue 32, Also): ``context_usage`` is
written for a turn Hans planned, not only for one an agent answered."""

from __future__ import annotations

import json
from pathlib import Path

from harness import new_conversation, running_server, turn


def test_a_planning_turn_emits_context_usage(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"purpose": "plan", "text": "I would rather not."}]))
    with running_server(tmp_path, model=f"scripted:{script}") as server, server.client() as client:
        cid = new_conversation(client)
        events = turn(client, cid, "Install the newsletter form on the site")
        calls = client.get("/api/llm-calls", params={"conversationId": cid}).json()

    planned = [c for c in calls if c["success"]]
    assert planned, calls
    (usage,) = [e for e in events if e["type"] == "context_usage"]
    data = usage["data"]
    assert data["promptTokens"] == planned[-1]["promptTokens"] > 0
    assert data["contextWindow"] == 8192 and data["estimate"] == "chars/4"
    assert data["sections"] == {}, "the planner's prompt is not fitted by section"
    types = [e["type"] for e in events]
    assert types.index("context_usage") < types.index("done")
