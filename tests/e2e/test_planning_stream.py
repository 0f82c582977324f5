"""Planning turns stream their text as replies do (issue 32), against the real server.

Hans's planning messages (his questions, the plan, "starting the run now") reach a streaming
client as ``text_delta`` events under the id their ``message`` then carries, before it; the
OpenAI-compatible stream and AG-UI relay them as they relay a reply's. A plan the model
drafts shows its steps (``planning`` thinking entries) while the model is still writing.

The server writes at most ``FLUSH_CHARS`` characters a delta, so that a message of a few
lines comes as several deltas, as a reply's text does.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from ag_ui import core
from httpx_sse import connect_sse
from pydantic import TypeAdapter

from harness import Server, api, new_conversation, running_server, turn, wordpress_project

FLUSH_CHARS = 40
ANSWERS = "language: English; audience: homeowners in Quebec; SEO: water softeners; layout C"
AGUI: TypeAdapter[core.Event] = TypeAdapter(core.Event)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    env = {"HANSA_DELTA_FLUSH_CHARS": str(FLUSH_CHARS)}
    with running_server(tmp_path_factory.mktemp("planning-stream"), env=env) as s:
        yield s


def _streamed(events: list[dict[str, Any]]) -> list[str]:
    """Each assistant message of a turn, checked to have streamed: its ``text_delta`` events
    (same id, same agent and run) come before it, and their text is its content."""
    said = [e for e in events if e["type"] == "message" and e["data"]["kind"] == "assistant"]
    assert said, "the turn says something"
    deltas = [e for e in events if e["type"] == "text_delta"]
    for msg in said:
        mine = [d for d in deltas if d["data"]["messageId"] == msg["data"]["messageId"]]
        assert mine, f"not streamed: {msg['data']['content'][:60]!r}"
        assert "".join(d["data"]["delta"] for d in mine) == msg["data"]["content"]
        assert all(d["seq"] < msg["seq"] for d in mine), "the deltas come before the message"
        assert all(len(d["data"]["delta"]) <= FLUSH_CHARS for d in mine)
        assert {(d["agentId"], d["runId"]) for d in mine} == {(msg["agentId"], msg["runId"])}
    ids = {m["data"]["messageId"] for m in said}
    assert {d["data"]["messageId"] for d in deltas} <= ids, "no delta of a message never said"
    return [m["data"]["content"] for m in said]


def test_a_planning_turns_messages_stream_as_text_deltas(server: Server) -> None:
    with server.client() as client:
        cid = new_conversation(client, projectId=wordpress_project(client))
        asked = turn(client, cid, "Please create a new webpage called Services")
        planned = turn(client, cid, ANSWERS)
        approved = turn(client, cid, "yes, proceed")
        stored = client.get(f"/api/conversations/{cid}/messages").json()

    (questions,) = _streamed(asked)
    (plan_text,) = _streamed(planned)
    (starting,) = _streamed(approved)
    assert "Before I plan this I need a few details" in questions
    assert "Here is the plan" in plan_text and "yes, proceed" in plan_text
    assert starting.startswith("Thanks — starting the run now")
    # the plan's message (written with its run, in the run's transaction) names the run
    plan = next(e for e in planned if e["type"] == "plan")
    said = next(e for e in planned if e["type"] == "message" and e["data"]["kind"] == "assistant")
    assert said["runId"] == plan["data"]["runId"]
    # non-streaming readers see the same messages as before, once each
    assistant = [m["content"] for m in stored if m["kind"] == "assistant"]
    assert assistant[:3] == [questions, plan_text, starting]


def test_the_openai_stream_and_agui_relay_a_planning_message_in_pieces(server: Server) -> None:
    """With no project in focus Hans asks which project the change is for: a planning
    message, streamed in several chunks by both protocols."""
    ask = "Please create a new webpage called Pricing"
    body = {"model": "chief", "messages": [{"role": "user", "content": ask}], "stream": True}
    with server.client() as client:
        pieces: list[str] = []
        with client.stream("POST", "/v1/chat/completions", json=body) as response:
            assert response.status_code == 200
            cid = response.headers["X-Hansa-Conversation-Id"]
            for line in response.iter_lines():
                if line.startswith("data: ") and line != "data: [DONE]":
                    for choice in json.loads(line[6:])["choices"]:
                        pieces.append(choice["delta"].get("content") or "")
        openai_said = _assistant(client, cid)
        agui, agui_cid = _agui(client, ask)
        agui_said = _assistant(client, agui_cid)

    content = [p for p in pieces if p]
    assert "".join(content) == openai_said[-1] and "Which project" in openai_said[-1]
    assert len(content) > 1, "the message came in pieces, as a reply's text does"
    texts = [e for e in agui if isinstance(e, core.TextMessageContentEvent)]
    assert "".join(e.delta for e in texts) == agui_said[-1]
    assert len(texts) > 1 and len({e.message_id for e in texts}) == 1
    starts = [e for e in agui if isinstance(e, core.TextMessageStartEvent)]
    ends = [e for e in agui if isinstance(e, core.TextMessageEndEvent)]
    assert len(starts) == len(ends) == 1


def _assistant(client: httpx.Client, cid: str) -> list[str]:
    messages = client.get(f"/api/conversations/{cid}/messages").json()
    return [m["content"] for m in messages if m["kind"] == "assistant"]


def _agui(client: httpx.Client, text: str) -> tuple[list[Any], str]:
    body = {
        "threadId": "planning-stream",
        "runId": "run-1",
        "messages": [{"id": "m1", "role": "user", "content": text}],
        "state": {},
        "tools": [],
        "context": [],
        "forwardedProps": {},
    }
    events: list[Any] = []
    with connect_sse(client, "POST", "/ag-ui/chief", json=body) as source:
        assert source.response.status_code == 200, source.response.read()
        events = [AGUI.validate_json(sse.data) for sse in source.iter_sse()]
    return events, source.response.headers["X-Hansa-Conversation-Id"]


STEPS = [
    ("Point shop.aquaverter.ca at the new host", "create_ticket", "schedulerAgent"),
    ("Write down the new host's address", "entity.create", "researchAgent"),
]
PLAN = {
    "intent": "Move the shop to the new host.",
    "title": "Shop move",
    "stages": [
        {
            "group": "A",
            "title": "Move",
            "steps": [  # the summary first: a step is shown as soon as it is written
                {
                    "summary": STEPS[0][0],
                    "ref": "ticket",
                    "owner": STEPS[0][2],
                    "taskType": STEPS[0][1],
                    "parameters": {"title": "Point shop.aquaverter.ca at the new host"},
                },
                {
                    "summary": STEPS[1][0],
                    "ref": "note",
                    "owner": STEPS[1][2],
                    "taskType": STEPS[1][1],
                    "parameters": {"entityType": "document", "name": "New host"},
                },
            ],
        },
    ],
}
WRITING_SECONDS = 12
"""How long the scripted model takes to write the plan, spread over its pieces: most of it
after the first step's summary, so that the test sees the step while the model writes."""


def test_a_model_drafted_plan_shows_its_steps_while_the_model_writes(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    step = {"purpose": "plan", "text": json.dumps(PLAN), "delaySeconds": WRITING_SECONDS}
    script.write_text(json.dumps([step]))
    env = {"HANSA_DELTA_FLUSH_CHARS": str(FLUSH_CHARS)}
    with (
        running_server(tmp_path, model=f"scripted:{script}", env=env) as server,
        server.client() as client,
    ):
        project = client.post("/api/projects", json={"name": "Aquaverter"}).json()
        cid = new_conversation(client, projectId=project["id"])
        posted = api(client).post_message(cid, "Please move the shop to the new host")
        seen: list[dict[str, Any]] = []
        said_then: list[str] | None = None
        turn_then = ""
        for ev in api(client).events(cid, after=posted["seq"], until_done=posted["turnId"]):
            seen.append(ev)
            if said_then is None and _step_entries(seen):
                # the first step is shown: the model is still writing, nothing is said yet
                said_then = _assistant(client, cid)
                turn_then = client.get(f"/api/conversations/{cid}").json()["state"]

    entries = _step_entries(seen)
    assert entries == [f"Hans is planning step {i}: {s}" for i, (s, _, _) in enumerate(STEPS, 1)]
    assert said_then == [], "the step was shown before the plan's message was written"
    assert turn_then != "waiting_for_user"
    first_step = next(e["seq"] for e in seen if _is_step_entry(e))
    plan = next(e for e in seen if e["type"] == "plan")
    (message,) = [e for e in seen if e["type"] == "message" and e["data"]["kind"] == "assistant"]
    assert first_step < plan["seq"] < message["seq"]
    # the plan is the model's, as before: its steps as written, shown in the message
    (stage,) = plan["data"]["plan"]["stages"]
    assert [(s["summary"], s["taskType"], s["owner"]) for s in stage["steps"]] == STEPS
    assert all(summary in message["data"]["content"] for summary, _, _ in STEPS)
    assert _streamed([e for e in seen if e["turnId"] == posted["turnId"]])


def _is_step_entry(ev: dict[str, Any]) -> bool:
    return (
        ev["type"] == "thinking"
        and ev["data"]["phase"] == "planning"
        and ev["data"]["summary"].startswith("Hans is planning step ")
    )


def _step_entries(events: list[dict[str, Any]]) -> list[str]:
    return [e["data"]["summary"] for e in events if _is_step_entry(e)]
