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

from harness import Server, running_server, wordpress_project

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


ANSWERS = "language: English; audience: homeowners in Quebec; SEO: water softeners; layout C"


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
    calls = client.get("/api/llm-calls", params={"conversationId": cid}).json()
    (usage,) = events[-1].usage  # the turn's model calls, as AG-UI counts tokens
    assert usage.input_tokens == sum(c["promptTokens"] for c in calls) > 0
    assert usage.output_tokens == sum(c["completionTokens"] for c in calls) > 0
    assert usage.total_tokens == usage.input_tokens + usage.output_tokens


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


def _resume(thread: str, run: str, interrupt_id: str, **entry: Any) -> dict[str, Any]:
    """A run that answers ``interrupt_id``; its ``messages`` are the client's old ones."""
    body = _input(thread, run, ("user", "Please create a new webpage called Services"))
    return {**body, "resume": [{"interruptId": interrupt_id, "status": "resolved", **entry}]}


def _interrupt(events: list[Any]) -> Any:
    """The one interrupt the run finished with (its outcome must be an interrupt)."""
    last = events[-1]
    assert isinstance(last, core.RunFinishedEvent), last
    assert isinstance(last.outcome, core.RunFinishedInterruptOutcome), last.outcome
    (waits,) = last.outcome.interrupts
    return waits


def test_a_plan_awaiting_approval_is_an_interrupt_and_resume_approves_it(
    client: httpx.Client,
) -> None:
    """A question and a plan end their runs as AG-UI interrupts, not as a success; each
    next run answers with ``resume``, the approving one streams the plan's run to Hans's
    summary."""
    wordpress_project(client)
    thread = "thread-plan"
    body = _input(thread, "run-1", ("user", "Please create a new webpage called Services"))
    cid, first = _run(client, "chief", body)
    asked = _interrupt(first)
    _, second = _run(client, "chief", _resume(thread, "run-2", asked.id, payload="Aquaverter"))
    questions = _interrupt(second)
    _, third = _run(client, "chief", _resume(thread, "run-3", questions.id, payload=ANSWERS))
    plan = _interrupt(third)
    _, done = _run(client, "chief", _resume(thread, "run-4", plan.id, payload=True))

    assert asked.reason == "question" and "Which project" in (asked.message or "")
    assert asked.id.startswith("question:") and asked.response_schema["type"] == "string"
    assert questions.reason == "question", "the plan's questions"
    run_id = plan.metadata["runId"]
    assert plan.reason == "approval" and plan.id == f"approval:{run_id}"
    assert "yes, proceed" in (plan.message or "")
    assert plan.response_schema["type"] == ["boolean", "string"]
    for events, run in ((first, "run-1"), (second, "run-2"), (third, "run-3")):
        assert (events[-1].thread_id, events[-1].run_id) == (thread, run)
    finished = done[-1]
    assert isinstance(finished.outcome, core.RunFinishedSuccessOutcome)
    statuses = [
        e.value["data"]["status"]
        for e in _of(done, core.CustomEvent)
        if e.name == "hansa.run_status" and e.value["runId"] == run_id
    ]
    assert statuses[-1] == "completed", "the approving run streams the plan's run"
    assert "Services" in _said(done), "Hans sums the run up"
    assert _stored(client, cid, "assistant")[-1] in _said(done), "his summary is streamed"
    card = client.get(f"/api/runs/{run_id}").json()
    assert card["status"] == "completed"
    users = _stored(client, cid, "user")
    assert users[1:] == ["Aquaverter", ANSWERS, "yes, proceed"], "each resume posted its answer"


def test_cancelling_the_interrupt_drops_the_plan(client: httpx.Client) -> None:
    wordpress_project(client, name="Dropped")
    thread = "thread-drop"
    said = ("user", "Please create a new webpage called Services for Dropped")
    _, first = _run(client, "chief", _input(thread, "run-1", said))
    waits = _interrupt(first)
    while waits.reason == "question":
        answer = "Dropped" if "Which project" in (waits.message or "") else ANSWERS
        _, more = _run(client, "chief", _resume(thread, "run-q", waits.id, payload=answer))
        waits = _interrupt(more)
    entry = {"interruptId": waits.id, "status": "cancelled"}
    body = {**_input(thread, "run-x", said), "resume": [entry]}
    _, dropped = _run(client, "chief", body)

    assert waits.reason == "approval"
    assert isinstance(dropped[-1].outcome, core.RunFinishedSuccessOutcome)
    card = client.get(f"/api/runs/{waits.metadata['runId']}").json()
    assert card["status"] == "cancelled"


def test_a_resume_that_answers_nothing_is_refused_and_posts_nothing(
    client: httpx.Client,
) -> None:
    cid, _ = _run(client, "chief", _input("thread-idle", "run-1", ("user", "Hello there")))
    before = _stored(client, cid, "user")
    idle = client.post("/ag-ui/chief", json=_resume("thread-idle", "r", "question:x", payload="x"))
    unknown = client.post("/ag-ui/chief", json=_resume("no-such-thread", "r", "x", payload="x"))
    wordpress_project(client, name="Waiting")
    said = ("user", "Please create a new webpage called Services for Waiting")
    _, asked = _run(client, "chief", _input("thread-wait", "run-1", said))
    waits = _interrupt(asked)
    other = client.post("/ag-ui/chief", json=_resume("thread-wait", "r", "approval:zz", payload=1))
    empty = client.post("/ag-ui/chief", json=_resume("thread-wait", "r", waits.id))

    for refused in (idle, unknown, other):
        assert refused.status_code == 409, refused.text
        assert refused.json()["error"]["details"]["field"] == "resume"
    assert "nothing to resume" in idle.json()["error"]["message"]
    assert other.json()["error"]["details"]["interruptId"] == waits.id
    assert empty.status_code == 422 and empty.json()["error"]["details"]["field"] == (
        "resume.payload"
    )
    assert _stored(client, cid, "user") == before
    threads = client.get("/api/conversations").json()
    assert "no-such-thread" not in json.dumps(threads), "a refused resume opens no thread"
