"""AG-UI (issue 21 item 4) against the real server: ``POST /ag-ui/{agent_id}`` streams a turn
as AG-UI events, each one read with the ``ag-ui-protocol`` package's own models.

One server, with an API key; Hans (``chief``) has the default scripted model (it echoes),
the Research Agent a script that calls a tool.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from ag_ui import core
from apikeys import bearer, create_key
from httpx_sse import connect_sse
from pydantic import TypeAdapter

from harness import Server, running_server

HEADER = "X-Hansa-Conversation-Id"
EVENTS: TypeAdapter[core.Event] = TypeAdapter(core.Event)
LISTED = {"entityType": "task", "limit": 5}
SCRIPT = [
    {"text": "Let me look.", "toolCalls": [{"name": "entity.list", "arguments": LISTED}]},
    {"text": "There are no tasks yet."},
]


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, str]]:
    tmp = tmp_path_factory.mktemp("agui")
    script = tmp / "research.json"
    script.write_text(json.dumps(SCRIPT))
    (tmp / "hansa.toml").write_text(f'[agents.researchAgent]\nmodel = "scripted:{script}"\n')
    with running_server(tmp, extra_args=("--config", str(tmp / "hansa.toml"))) as server:
        yield server, create_key(server, "acme")


@pytest.fixture
def client(keyed: tuple[Server, str]) -> Iterator[httpx.Client]:
    server, key = keyed
    with server.client(headers=bearer(key)) as c:
        yield c


def _input(thread: str, run: str, *said: tuple[str, str]) -> dict[str, Any]:
    messages = [
        {"id": f"m{i}", "role": role, "content": text} for i, (role, text) in enumerate(said)
    ]
    return {
        "threadId": thread,
        "runId": run,
        "messages": messages,
        "state": {},
        "tools": [],
        "context": [],
        "forwardedProps": {},
    }


def _run(client: httpx.Client, agent: str, body: dict[str, Any]) -> tuple[str, list[Any]]:
    """The run's conversation (the header) and its events, each parsed by ``ag_ui.core``."""
    events: list[Any] = []
    with connect_sse(client, "POST", f"/ag-ui/{agent}", json=body) as source:
        assert source.response.status_code == 200, source.response.read()
        assert source.response.headers["content-type"].startswith("text/event-stream")
        for sse in source.iter_sse():
            ev = EVENTS.validate_json(sse.data)
            assert ev.type.value == json.loads(sse.data)["type"]
            assert not ev.model_extra, f"fields AG-UI does not have: {ev.model_extra}"
            events.append(ev)
    return source.response.headers[HEADER], events


def _check_lifecycle(events: list[Any], thread: str, run: str) -> None:
    """RUN_STARTED first, RUN_FINISHED last; every text, tool call and step opened, then
    closed, with nothing else inside a text or a tool call."""
    first, last = events[0], events[-1]
    assert isinstance(first, core.RunStartedEvent) and isinstance(last, core.RunFinishedEvent)
    assert (first.thread_id, first.run_id) == (last.thread_id, last.run_id) == (thread, run)
    assert isinstance(last.outcome, core.RunFinishedSuccessOutcome)
    text: str | None = None
    texts: set[str] = set()
    calls: list[str] = []
    step: str | None = None
    for ev in events[1:-1]:
        assert not isinstance(ev, core.RunStartedEvent | core.RunFinishedEvent | core.RunErrorEvent)
        if text is not None:  # inside a text: its content, then its end
            assert isinstance(ev, core.TextMessageContentEvent | core.TextMessageEndEvent), ev
            assert ev.message_id == text and (not hasattr(ev, "delta") or ev.delta)
            text = None if isinstance(ev, core.TextMessageEndEvent) else text
        elif isinstance(ev, core.TextMessageStartEvent):
            assert ev.message_id not in texts and ev.role == "assistant"
            text = ev.message_id
            texts.add(text)
        elif isinstance(ev, core.ToolCallStartEvent):
            calls.append(ev.tool_call_id)
        elif isinstance(ev, core.ToolCallArgsEvent | core.ToolCallEndEvent):
            assert ev.tool_call_id == calls[-1]
        elif isinstance(ev, core.ToolCallResultEvent):
            assert ev.tool_call_id in calls
        elif isinstance(ev, core.StepStartedEvent):
            assert step is None
            step = ev.step_name
        elif isinstance(ev, core.StepFinishedEvent):
            assert ev.step_name == step
            step = None
        else:
            assert isinstance(ev, core.StateSnapshotEvent | core.CustomEvent), ev
    assert text is None and step is None


def _of(events: list[Any], kind: type[Any]) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]


def _said(events: list[Any]) -> str:
    return "".join(e.delta for e in _of(events, core.TextMessageContentEvent))


def _stored(client: httpx.Client, cid: str, kind: str) -> list[str]:
    messages = client.get(f"/api/conversations/{cid}/messages").json()
    return [m["content"] for m in messages if m["kind"] == kind]


def test_a_run_streams_the_turn_as_agui_events(client: httpx.Client) -> None:
    cid, events = _run(client, "chief", _input("thread-1", "run-1", ("user", "Hi, Hans!")))

    _check_lifecycle(events, "thread-1", "run-1")
    assert isinstance(events[1], core.StateSnapshotEvent)
    snapshots = [e.snapshot for e in _of(events, core.StateSnapshotEvent)]
    assert all(s["conversationId"] == cid for s in snapshots)
    assert snapshots[-1]["activeAgentId"] == "chief"
    assert snapshots[-1]["conversationState"] in ("idle", "waiting_for_user")
    (start,) = _of(events, core.TextMessageStartEvent)
    assert start.name == "chief"
    assert [_said(events)] == _stored(client, cid, "assistant")
    assert "Hi, Hans!" in _said(events), "the scripted model echoes"
    assert {e.step_name for e in _of(events, core.StepStartedEvent)} >= {"routing", "reply"}
    custom = {e.name for e in _of(events, core.CustomEvent)}
    assert {"hansa.thinking", "hansa.routing"} <= custom
    assert events[-1].result == {"conversationId": cid}


def test_the_same_thread_continues_its_conversation(client: httpx.Client) -> None:
    first = ("user", "What should we do first?")
    cid, events = _run(client, "chief", _input("thread-2", "run-1", first))
    again = _input("thread-2", "run-2", first, ("assistant", _said(events)), ("user", "And then?"))
    same, more = _run(client, "chief", again)
    other, _ = _run(client, "chief", _input("thread-3", "run-1", ("user", "Hello")))
    by_id, _ = _run(client, "chief", _input(cid, "run-3", ("user", "By its id")))

    assert same == cid and by_id == cid and other != cid
    _check_lifecycle(more, "thread-2", "run-2")
    users = _stored(client, cid, "user")
    assert users == ["What should we do first?", "And then?", "By its id"], (
        "only the last user message is posted each time"
    )
    assert _stored(client, cid, "assistant")[1] == _said(more)


def test_a_tool_call_shows_as_tool_call_events(client: httpx.Client) -> None:
    body = _input("thread-4", "run-1", ("user", "Which tasks do we have?"))
    cid, events = _run(client, "researchAgent", body)

    _check_lifecycle(events, "thread-4", "run-1")
    kinds = [e.type.value for e in events if e.type.value.startswith(("TEXT", "TOOL"))]
    assert kinds == [
        "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END",
        "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_RESULT",
        "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END",
    ]  # fmt: skip
    (start,) = _of(events, core.ToolCallStartEvent)
    (args,) = _of(events, core.ToolCallArgsEvent)
    (result,) = _of(events, core.ToolCallResultEvent)
    assert start.tool_call_name == "entity.list" and json.loads(args.delta) == LISTED
    assert result.tool_call_id == start.tool_call_id and result.role == "tool"
    assert json.loads(result.content) == {"entities": [], "total": 0}
    before, after = _of(events, core.TextMessageStartEvent)
    assert after.message_id == f"{before.message_id}-2" and after.name == "researchAgent"
    (answer,) = _stored(client, cid, "assistant")
    assert _said(events) == answer == "Let me look.\n\nThere are no tasks yet."
    assert _of(events, core.StateSnapshotEvent)[-1].snapshot["activeAgentId"] == "researchAgent"


def test_refusals_keep_hansas_error_shape(keyed: tuple[Server, str], client: httpx.Client) -> None:
    server, _ = keyed
    unknown = client.post("/ag-ui/noSuchAgent", json=_input("t", "r", ("user", "Hi")))
    no_user = client.post("/ag-ui/chief", json=_input("t", "r", ("assistant", "Hi")))
    invalid = client.post("/ag-ui/chief", json={"threadId": "t"})
    with server.client() as anonymous:
        no_key = anonymous.post("/ag-ui/chief", json=_input("t", "r", ("user", "Hi")))

    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "not_found"
    assert "'noSuchAgent' is not an agent" in unknown.json()["error"]["message"]
    assert no_user.status_code == 422 and no_user.json()["error"]["details"]["field"] == "messages"
    assert invalid.status_code == 422 and invalid.json()["error"]["code"] == "validation_error"
    assert no_key.status_code == 401 and no_key.json()["error"]["code"] == "unauthenticated"
