"""The rolling summary and the context budget over the real server (seed 002 §4, §5).

A scripted model answers four turns; the fourth passes the history's budget (six
messages), so a summary job folds the early messages into summary v1 (the model's
``summary`` step); the fifth turn's prompt must still hold the first message's id and
decision (``promptHas``), and its ``context_usage`` reports the window and its sections.
"""

from __future__ import annotations

import json
from pathlib import Path

from harness import events_until, new_conversation, running_server, turn

BANNER_ID = "01JQ7ZP3V5K2M8N4R6T9W1X3Y5"
DECISION = f"We decided the sale banner is teal; it is entity {BANNER_ID}."
SUMMARY = "The user plans a spring sale; the team answers their questions."

STEPS = [
    *({"purpose": "reply", "text": f"Noted, part {n}."} for n in range(4)),
    {
        "purpose": "summary",
        "text": json.dumps(
            {"summary": SUMMARY, "keptMessageIds": [], "droppedMessageIds": [], "stateUpdates": []}
        ),
        "promptHas": [DECISION],
    },
    {
        "purpose": "reply",
        "text": "Teal, as you decided.",
        "promptHas": [f"Ids mentioned: {BANNER_ID}", f"- {DECISION}", SUMMARY],
    },
]


def test_a_long_conversation_is_summarised_and_the_next_prompt_keeps_the_early_decision(
    tmp_path: Path,
) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps(STEPS))
    env = {
        "HANSA_SUMMARY_AFTER_MESSAGES": "6",
        "HANSA_HISTORY_MESSAGES": "2",
        "HANSA_SUMMARY_AFTER_CHARS": "0",
    }
    with running_server(tmp_path, f"scripted:{script}", env=env) as server, server.client() as c:
        cid = new_conversation(c)
        first = turn(c, cid, DECISION)
        for part in range(3):
            done = turn(c, cid, f"Tell me more, part {part}.")
        updated = events_until(c, cid, lambda e: e["type"] == "summary_updated")
        later = turn(c, cid, "Remind me what we settled on.")
        messages = c.get(f"/api/conversations/{cid}/messages").json()

    (summary,) = [e for e in updated if e["type"] == "summary_updated"]
    assert summary["seq"] > done[-1]["seq"], "written after the fourth turn ended"
    assert summary["data"]["version"] == 1 and summary["data"]["summarizedMessages"] == 6
    assert summary["data"]["keptIds"] == 1 and summary["data"]["modelFailed"] is False
    assert later[-1]["type"] == "done" and later[-1]["data"]["status"] == "completed"
    assert [m["content"] for m in messages if m["kind"] == "assistant"][-1] == (
        "Teal, as you decided."
    ), "the scripted step matched: its prompt held the id, the decision and the summary"
    first_usage = next(e for e in first if e["type"] == "context_usage")["data"]
    usage = next(e for e in later if e["type"] == "context_usage")["data"]
    assert first_usage["contextWindow"] == usage["contextWindow"] == 8_192
    assert first_usage["summaryVersion"] is None and usage["summaryVersion"] == 1
    assert usage["estimate"] == "chars/4"
    assert usage["sections"]["summary"] > 0 and usage["sections"]["history"] > 0
    assert usage["sections"]["reply"] == 256 and usage["dropped"] == []
    assert sum(usage["sections"].values()) <= usage["contextWindow"]
