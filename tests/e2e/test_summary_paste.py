"""The rolling summary keeps a pasted document and folds the chatter around it (seed 002
§5.3, §5.4; issue 32 item 5), over the real server with the scripted model.

A user pastes a contract, then chats on past the budget (eight messages after the summary,
two kept word for word): the summary job's structured answer folds the chatter into the
prose and updates the supervisor's state; the next prompt holds the whole paste and the
summary but not the early chatter (``promptHas``/``promptLacks``). The versions read back
newest first. A summarizer answering malformed JSON leaves the state alone and still keeps
the paste.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
from apikeys import create_key

from harness import events_until, new_conversation, running_server, turn

CLAUSE = "Clause 7: the supplier ships every order within 14 days of payment."
PASTE = "Supply contract, please review it with me.\n" + "\n".join(
    [f"Clause {n}: the parties agree to term {n} as written in annex {n}." for n in range(40)]
    + [CLAUSE]
)
CHATTER = [
    "Good morning, how are you today?",
    "Which clause worries you most in there?",
    "And what about the payment terms?",
    "Thanks, let us look at the shipping now.",
]
PROSE = "The user pasted a supply contract and asked about its payment terms."
ANSWER = {
    "summary": PROSE,
    "keptMessageIds": [],
    "droppedMessageIds": [],
    "stateUpdates": [  # the first past the state's size: refused
        {"agentId": "chief", "op": "set", "key": "notes", "value": "x" * 17_000},
        {"agentId": "chief", "op": "set", "key": "goal", "value": "review the supply contract"},
    ],
}
ENV = {
    "HANSA_SUMMARY_AFTER_MESSAGES": "8",
    "HANSA_HISTORY_MESSAGES": "2",
    "HANSA_SUMMARY_AFTER_CHARS": "0",
    "HANSA_SUMMARY_PASTE_CHARS": "1000",
}


def _script(summary_text: str, later: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"purpose": "reply", "text": "Fine, thank you."},
        {"purpose": "reply", "text": "I have read the contract."},
        *({"purpose": "reply", "text": f"Answer {n}."} for n in range(3)),
        {
            "purpose": "summary",
            "text": summary_text,
            "promptHas": ["Scope: global", "Pasted documents kept word for word", CHATTER[0]],
            "promptLacks": [CLAUSE],  # the paste is not the summarizer's to fold
        },
        later,
    ]


def _converse(c: httpx.Client) -> tuple[str, list[dict[str, Any]]]:
    cid = new_conversation(c)
    turn(c, cid, CHATTER[0])
    turn(c, cid, PASTE)
    for text in CHATTER[1:]:
        turn(c, cid, text)
    updated = events_until(c, cid, lambda e: e["type"] == "summary_updated")
    return cid, updated


def test_a_paste_stays_word_for_word_while_the_chatter_is_summarised(tmp_path: Path) -> None:
    later = {
        "purpose": "reply",
        "text": "Within 14 days, as clause 7 says.",
        "promptHas": [CLAUSE, PROSE, CHATTER[3]],
        "promptLacks": [CHATTER[0], "Answer 0."],
    }
    second = {**ANSWER, "summary": "Later: the user asked about delivery.", "stateUpdates": []}
    more = [
        *({"purpose": "reply", "text": f"More {n}."} for n in range(3)),
        {"purpose": "summary", "text": json.dumps(second), "promptHas": [PROSE]},
    ]
    script = tmp_path / "script.json"
    script.write_text(json.dumps([*_script(json.dumps(ANSWER), later), *more]))
    with (
        running_server(tmp_path, f"scripted:{script}", env=ENV) as server,
        server.client() as c,
    ):
        cid, updated = _converse(c)
        last = turn(c, cid, "How fast must they ship?")
        listed = c.get(f"/api/conversations/{cid}/summaries")
        one = c.get(f"/api/conversations/{cid}/summaries/1")
        unknown = c.get(f"/api/conversations/{cid}/summaries/2")
        state = c.get(f"/api/conversations/{cid}/agent-state", params={"agentId": "chief"})
        messages = c.get(f"/api/conversations/{cid}/messages").json()
        for n in range(3):
            done = turn(c, cid, f"One more question, number {n}.")
        events_until(
            c,
            cid,
            lambda e: e["type"] == "summary_updated" and e["data"]["version"] == 2,
            after=done[-1]["seq"],
        )
        both = c.get(f"/api/conversations/{cid}/summaries").json()
        newest = c.get(f"/api/conversations/{cid}/summaries", params={"limit": 1}).json()
        older = c.get(f"/api/conversations/{cid}/summaries", params={"before": 2}).json()
        bad_limit = c.get(f"/api/conversations/{cid}/summaries", params={"limit": 0})
        other = create_key(server, "globex")
        as_other = {"Authorization": f"Bearer {other}"}
        foreign = [
            c.get(f"/api/conversations/{cid}/summaries", headers=as_other).status_code,
            c.get(f"/api/conversations/{cid}/summaries/1", headers=as_other).status_code,
        ]

    summary = next(e for e in updated if e["type"] == "summary_updated")["data"]
    assert summary["version"] == 1 and summary["modelFailed"] is False
    assert summary["summarizedMessages"] == 7, "the chatter before the cut, not the paste"
    announced = [e for e in updated if e["type"] == "agent_state"]
    assert announced and announced[-1]["data"]["state"] == {"goal": "review the supply contract"}
    assert last[-1]["data"]["status"] == "completed"
    assert [m["content"] for m in messages if m["kind"] == "assistant"][-1] == (
        "Within 14 days, as clause 7 says."
    ), "the scripted step matched: the paste and the prose in, the early chatter out"
    usage = next(e for e in last if e["type"] == "context_usage")["data"]
    assert usage["sections"]["kept"] > len(PASTE) // 4

    assert listed.status_code == 200 and [v["version"] for v in listed.json()] == [1]
    paste_id = next(m["id"] for m in messages if m["content"] == PASTE)
    first = listed.json()[0]
    assert first == one.json()
    assert first["text"] == PROSE and first["facts"]["keptMessageIds"] == [paste_id]
    assert paste_id not in first["facts"]["droppedMessageIds"]
    assert len(first["facts"]["droppedMessageIds"]) == 7
    assert first["facts"]["stateUpdates"] == [
        {"agentId": "chief", "set": {"goal": "review the supply contract"}, "append": {}}
    ]
    assert unknown.status_code == 404
    assert [v["version"] for v in both] == [2, 1], "newest first"
    assert [v["version"] for v in newest] == [2] and older == [first]
    assert both[0]["facts"]["keptMessageIds"] == [paste_id], "the paste is still kept"
    assert bad_limit.status_code == 422
    assert state.json()["agentStates"][0]["state"] == {"goal": "review the supply contract"}
    assert foreign == [404, 404], "another tenant reads no version"


def test_a_malformed_summarizer_answer_changes_no_state_and_keeps_the_paste(
    tmp_path: Path,
) -> None:
    later = {"purpose": "reply", "text": "Fourteen days.", "promptHas": [CLAUSE, CHATTER[0]]}
    bad = '{"summary": "cut off", "stateUpdates": [{"agentId": "chief", "op": "set", "key"'
    script = tmp_path / "script.json"
    script.write_text(json.dumps(_script(bad, later)))
    with (
        running_server(tmp_path, f"scripted:{script}", env=ENV) as server,
        server.client() as c,
    ):
        cid, updated = _converse(c)
        last = turn(c, cid, "How fast must they ship?")
        (version,) = c.get(f"/api/conversations/{cid}/summaries").json()
        state = c.get(f"/api/conversations/{cid}/agent-state", params={"agentId": "chief"})

    summary = next(e for e in updated if e["type"] == "summary_updated")["data"]
    assert summary["modelFailed"] is True
    assert not [e for e in updated if e["type"] == "agent_state"]
    assert state.json()["agentStates"][0]["version"] == 0
    assert version["modelFailed"] is True and version["facts"]["stateUpdates"] == []
    assert CHATTER[0] in version["text"], "an extract of the folded messages"
    assert version["facts"]["keptMessageIds"], "the paste is kept by code all the same"
    assert last[-1]["data"]["status"] == "completed"
