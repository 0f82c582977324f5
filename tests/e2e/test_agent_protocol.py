"""The Agent Protocol / LangGraph-compatible surface (issue 21 item 3), driven by
``langgraph-sdk``'s own client against the real server: assistants are agents, threads are
conversations, a run is a turn and what came of it, up to a plan's run and Hans's summary."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from apikeys import bearer, create_key
from langgraph_sdk import get_sync_client
from langgraph_sdk.client import SyncLangGraphClient

from harness import Server, running_server, wordpress_project

ANSWERS = "language: English; audience: homeowners in Quebec; SEO: water softeners; layout C"


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, str]]:
    with running_server(tmp_path_factory.mktemp("ap")) as server:
        yield server, create_key(server, "acme")


@pytest.fixture
def client(keyed: tuple[Server, str]) -> Iterator[SyncLangGraphClient]:
    server, key = keyed
    with get_sync_client(url=f"{server.url}/ap", api_key=key) as opened:
        yield opened


def _said(values: dict[str, Any]) -> list[str]:
    return [m["content"] for m in values["messages"] if m["type"] == "ai"]


def _hansa(server: Server, key: str) -> httpx.Client:
    return server.client(headers=bearer(key))


def test_assistants_are_the_tenants_agents(
    keyed: tuple[Server, str], client: SyncLangGraphClient
) -> None:
    found = client.assistants.search(limit=100)
    web = client.assistants.get("webEngineer")
    chief = client.assistants.search(graph_id="chief")

    assert found[0]["assistant_id"] == "chief"
    assert {"webEngineer", "growthLead"} <= {a["assistant_id"] for a in found}
    assert web["graph_id"] == "webEngineer" and web["name"] == "Web Engineer Nico"
    assert [a["assistant_id"] for a in chief] == ["chief"]
    with pytest.raises(httpx.HTTPStatusError) as missing:
        client.assistants.get("nobody")
    assert missing.value.response.status_code == 404


def test_a_run_is_a_turn_in_the_threads_conversation(
    keyed: tuple[Server, str], client: SyncLangGraphClient
) -> None:
    server, key = keyed
    thread = client.threads.create(metadata={"customer": "ada"})
    tid = thread["thread_id"]
    values = client.runs.wait(
        tid, "chief", input={"messages": [{"role": "user", "content": "Hi there!"}]}
    )
    again = client.runs.wait(
        tid, "growthLead", input={"messages": [{"type": "human", "content": "Any SEO tips?"}]}
    )
    runs = client.runs.list(tid)
    state = client.threads.get_state(tid)
    found = client.threads.search(metadata={"customer": "ada"})
    with _hansa(server, key) as hansa:
        stored = hansa.get(f"/api/conversations/{tid}/messages").json()

    assert thread["status"] == "idle" and thread["metadata"] == {"customer": "ada"}
    assert [m["content"] for m in values["messages"] if m["type"] == "human"] == ["Hi there!"]
    assert len(_said(values)) == 1 and "__interrupt__" not in values
    assert _said(again)[:1] == _said(values) and len(_said(again)) == 2
    users = [m["content"] for m in stored if m["kind"] == "user"]
    assert users == ["Hi there!", "Any SEO tips?"], "each run posted its message"
    assert [r["status"] for r in runs] == ["success", "success"]
    assert runs[0]["assistant_id"] == "growthLead", "the newest first, answered by the agent"
    assert state["values"] == again and state["next"] == [] and state["interrupts"] == []
    assert [t["thread_id"] for t in found] == [tid]
    assert client.threads.get(tid)["status"] == "idle"


def test_a_plan_is_an_interrupt_and_resuming_runs_it_to_hans_summary(
    keyed: tuple[Server, str], client: SyncLangGraphClient
) -> None:
    server, key = keyed
    with _hansa(server, key) as hansa:
        wordpress_project(hansa)
    tid = client.threads.create()["thread_id"]

    first = client.runs.wait(
        tid,
        "chief",
        input={
            "messages": [{"role": "user", "content": "Please create a new webpage called Services"}]
        },
    )
    asked = first["__interrupt__"][0]["value"]
    second = client.runs.wait(tid, "chief", command={"resume": "Aquaverter"})
    third = client.runs.wait(tid, "chief", command={"resume": ANSWERS})
    plan = third["__interrupt__"][0]["value"]
    waiting = client.threads.get(tid)
    state = client.threads.get_state(tid)
    done = client.runs.wait(tid, "chief", command={"resume": True})
    last = client.runs.list(tid, limit=1)[0]
    with _hansa(server, key) as hansa:
        card = hansa.get(f"/api/runs/{plan['runId']}").json()

    assert asked["kind"] == "question" and "Which project" in asked["question"]
    assert second["__interrupt__"][0]["value"]["kind"] == "question", "the plan's questions"
    assert plan["kind"] == "approval" and "yes, proceed" in plan["question"]
    assert waiting["status"] == "interrupted" and list(waiting["interrupts"]) == [
        f"approval:{plan['runId']}"
    ]
    assert state["next"] == ["chief"] and state["tasks"][0]["interrupts"][0]["value"] == plan
    assert card["status"] == "completed", "the run waited for the plan's run to end"
    assert "__interrupt__" not in done
    assert _said(done)[-1] != _said(third)[-1], "Hans summed the run up"
    assert "Services" in _said(done)[-1]
    assert last["status"] == "success" and last["metadata"]["runId"] == plan["runId"]
    assert client.threads.get(tid)["status"] == "idle"


def test_a_streamed_run_sends_metadata_messages_values_then_end(
    keyed: tuple[Server, str], client: SyncLangGraphClient
) -> None:
    tid = client.threads.create()["thread_id"]
    parts = list(
        client.runs.stream(
            tid,
            "chief",
            input={"messages": [{"role": "user", "content": "What can the team do?"}]},
            stream_mode=["values", "updates", "messages-tuple", "custom"],
        )
    )
    kinds = [p.event for p in parts]
    final = [p.data for p in parts if p.event == "values"][-1]
    chunks = [p.data[0]["content"] for p in parts if p.event == "messages"]
    customs = {p.data["type"] for p in parts if p.event == "custom"}
    joined = list(client.runs.join_stream(tid, parts[0].data["run_id"]))

    assert kinds[0] == "metadata" and kinds[-1] == "end"
    assert parts[-1].data["status"] == "success"
    assert "updates" in kinds and {"routing", "message", "done"} <= customs
    assert "".join(chunks) == _said(final)[-1], "the chunks add up to the answer"
    assert [p.event for p in joined][0] == "metadata" and joined[-1].event == "end"
    assert [p.data for p in joined if p.event == "values"][-1] == final


def test_a_stateless_run_opens_a_thread_and_a_client_may_name_its_thread(
    keyed: tuple[Server, str], client: SyncLangGraphClient
) -> None:
    chosen = str(uuid.uuid4())
    values = client.runs.wait(
        None, "chief", input={"messages": [{"role": "user", "content": "Hello"}]}
    )
    made = client.threads.create(thread_id=chosen, metadata={"n": 1})
    kept = client.threads.create(thread_id=chosen, if_exists="do_nothing")
    with pytest.raises(httpx.HTTPStatusError) as taken:
        client.threads.create(thread_id=chosen)

    assert _said(values), "a thread was opened and answered"
    assert made["thread_id"] == chosen and kept["metadata"] == {"n": 1}
    assert taken.value.response.status_code == 409


def test_bad_runs_are_refused_and_leave_nothing(
    keyed: tuple[Server, str], client: SyncLangGraphClient
) -> None:
    server, key = keyed
    tid = client.threads.create()["thread_id"]
    refusals = {
        "no user message": {"assistant_id": "chief", "input": {"messages": []}},
        "nothing to resume": {"assistant_id": "chief", "command": {"resume": True}},
        "unknown assistant": {
            "assistant_id": "nobody",
            "input": {"messages": [{"role": "user", "content": "x"}]},
        },
        "bad resume": {"assistant_id": "chief", "command": {"goto": "x"}},
    }
    with _hansa(server, key) as hansa:
        answers = {
            why: hansa.post(f"/ap/threads/{tid}/runs/wait", json=body)
            for why, body in refusals.items()
        }
        other = create_key(server, "globex")
        elsewhere = hansa.get(f"/ap/threads/{tid}", headers=bearer(other))
        unknown = hansa.get(f"/ap/threads/{uuid.uuid4()}")
    finished = client.runs.wait(
        tid, "chief", input={"messages": [{"role": "user", "content": "Hi"}]}
    )
    run_id = client.runs.list(tid)[0]["run_id"]

    assert {why: r.status_code for why, r in answers.items()} == {
        "no user message": 422,
        "nothing to resume": 409,
        "unknown assistant": 404,
        "bad resume": 422,
    }
    assert all(r.json()["error"]["message"] for r in answers.values())
    assert elsewhere.status_code == 404 and unknown.status_code == 404
    assert len(client.runs.list(tid)) == 1, "no refused run left a turn"
    assert _said(finished)
    with pytest.raises(httpx.HTTPStatusError) as ended:
        client.runs.cancel(tid, run_id)
    assert ended.value.response.status_code == 409


def test_a_pending_run_is_cancelled(tmp_path_factory: pytest.TempPathFactory) -> None:
    # no worker: the run stays pending until it is cancelled
    with (
        running_server(tmp_path_factory.mktemp("ap-idle"), env={"HANSA_WORKERS": "0"}) as server,
        get_sync_client(url=f"{server.url}/ap", api_key=create_key(server, "acme")) as client,
    ):
        tid = client.threads.create()["thread_id"]
        message = {"role": "user", "content": "Hi"}
        run = client.runs.create(tid, "chief", input={"messages": [message]})
        busy = client.threads.get(tid)["status"]
        client.runs.cancel(tid, run["run_id"])
        after = client.runs.get(tid, run["run_id"])

    assert run["status"] == "pending" and busy == "busy"
    assert after["status"] == "interrupted"
