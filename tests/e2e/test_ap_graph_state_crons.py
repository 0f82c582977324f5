"""The rest of the LangGraph API (issue 33 item 5), driven by ``langgraph-sdk`` and
LangGraph's ``RemoteGraph`` against the real server: assistants' graphs, schemas and
subgraphs; a thread's state read at its checkpoint and updated (its conversation's context);
crons as schedules; and what Hansa does not do (thread copy and delete, the events and debug
stream modes) refused with a message that says so, leaving nothing behind.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import test_agent_protocol
from apikeys import bearer
from langgraph.pregel.remote import RemoteGraph
from langgraph_sdk.client import SyncLangGraphClient

from harness import Server, poll_until

keyed = test_agent_protocol.keyed  # a server with a key (a module's fixture), as there
client = test_agent_protocol.client  # langgraph-sdk's client of it

HI = {"messages": [{"role": "user", "content": "Hi there!"}]}


@pytest.fixture
def hansa(keyed: tuple[Server, str]) -> Iterator[httpx.Client]:
    server, key = keyed
    with server.client(headers=bearer(key)) as opened:
        yield opened


def _refused(call: Any) -> httpx.Response:
    with pytest.raises(httpx.HTTPStatusError) as refused:
        call()
    return refused.value.response


def test_an_assistant_has_a_graph_schemas_and_no_subgraphs(client: SyncLangGraphClient) -> None:
    hans = client.assistants.get_graph("chief")
    nico = client.assistants.get_graph("webEngineer", xray=True)
    schemas = client.assistants.get_schemas("webEngineer")
    drawn = RemoteGraph("chief", sync_client=client).get_graph()

    assert {e["source"] for e in nico["edges"]} == {"__start__", "webEngineer"}
    assert [(e["source"], e["target"]) for e in nico["edges"]] == [
        ("__start__", "webEngineer"),
        ("webEngineer", "__end__"),
    ]
    routed = {e["target"] for e in hans["edges"] if e["source"] == "chief"}
    assert {"webEngineer", "growthLead", "__end__"} <= routed, "Hans routes to his team"
    assert all(e["conditional"] for e in hans["edges"] if e["source"] == "chief")
    assert {"chief", "webEngineer", "__start__", "__end__"} <= set(drawn.nodes)
    assert any(e.source == "chief" and e.target == "growthLead" for e in drawn.edges)
    assert schemas["graph_id"] == "webEngineer"
    assert "messages" in schemas["input_schema"]["properties"]
    assert schemas["state_schema"] == schemas["output_schema"] == schemas["input_schema"]
    assert client.assistants.get_subgraphs("chief") == {}
    assert client.assistants.get_subgraphs("chief", namespace="x", recurse=True) == {}
    assert _refused(lambda: client.assistants.get_graph("nobody")).status_code == 404


def test_remote_graph_reads_the_state_at_its_checkpoint(client: SyncLangGraphClient) -> None:
    tid = client.threads.create()["thread_id"]
    remote = RemoteGraph("chief", sync_client=client)
    config = {"configurable": {"thread_id": tid}}
    remote.invoke(HI, config=config)
    now = remote.get_state(config)
    again = remote.get_state(now.config)  # POST …/state/checkpoint, by its checkpoint id
    by_id = client.threads.get_state(tid, checkpoint_id=now.config["configurable"]["checkpoint_id"])
    older = {**now.config["configurable"], "checkpoint_id": "1"}

    said = [m["content"] for m in now.values["messages"]]
    assert said[0] == "Hi there!" and len(said) == 2
    assert again.values == now.values and by_id["values"] == now.values
    assert (
        again.config["configurable"]["checkpoint_id"] == now.config["configurable"]["checkpoint_id"]
    )
    gone = _refused(lambda: remote.get_state({"configurable": older}))
    assert gone.status_code == 404 and "one checkpoint" in gone.json()["error"]["message"]


def test_update_state_sets_the_conversations_context(
    client: SyncLangGraphClient, hansa: httpx.Client
) -> None:
    tid = client.threads.create()["thread_id"]
    client.runs.wait(tid, "chief", input=HI)
    before = client.threads.get_state(tid)
    updated = client.threads.update_state(tid, {"customer_tier": "gold", "region": "QC"})
    client.threads.update_state(tid, {"region": None})
    state = client.threads.get_state(tid)
    convo = hansa.get(f"/api/conversations/{tid}").json()
    messages = _refused(lambda: client.threads.update_state(tid, {"messages": [{"content": "x"}]}))
    older = _refused(lambda: client.threads.update_state(tid, {"a": 1}, checkpoint_id="1"))
    empty = _refused(lambda: client.threads.update_state(tid, {}))

    assert updated["checkpoint"]["thread_id"] == tid
    assert state["values"]["customer_tier"] == "gold" and "region" not in state["values"]
    assert state["values"]["messages"] == before["values"]["messages"], "the log is unchanged"
    assert convo["context"] == {"customer_tier": "gold"}
    assert messages.status_code == 422
    assert messages.json()["error"]["details"]["field"] == "values.messages"
    assert older.status_code == 409 and empty.status_code == 422
    assert client.threads.get_state(tid)["values"] == state["values"], "refusals changed nothing"


def test_copy_delete_and_unsupported_stream_modes_say_what_hansa_does_instead(
    client: SyncLangGraphClient, hansa: httpx.Client
) -> None:
    tid = client.threads.create()["thread_id"]
    copied = _refused(lambda: client.threads.copy(tid))
    deleted = _refused(lambda: client.threads.delete(tid))
    streamed = {}
    for mode in ("events", "debug"):
        streamed[mode] = _refused(
            lambda mode=mode: list(client.runs.stream(tid, "chief", input=HI, stream_mode=mode))
        )
    joined = hansa.get(f"/ap/threads/{tid}/runs/x/stream", params={"stream_mode": "events"})

    assert copied.status_code == deleted.status_code == 501
    assert copied.json()["error"]["code"] == "not_supported"
    assert "not copied" in copied.json()["error"]["message"]
    assert "not deleted" in deleted.json()["error"]["message"]
    assert client.threads.get(tid)["thread_id"] == tid, "the thread is still there"
    for mode, answer in streamed.items():
        assert answer.status_code == 422 and mode in answer.text
    assert joined.status_code == 422 and "events" in joined.json()["error"]["message"]
    assert client.runs.list(tid) == [], "a refused stream started no run"
    assert _refused(lambda: client.threads.delete("no-such-thread")).status_code == 404


def test_crons_are_schedules_that_post_the_message(
    client: SyncLangGraphClient, hansa: httpx.Client
) -> None:
    tid = client.threads.create()["thread_id"]
    question = {"messages": [{"role": "user", "content": "How is our SEO doing this week?"}]}
    on_thread = client.crons.create_for_thread(
        tid, "growthLead", schedule="0 9 * * 1-5", input=question, timezone="Europe/Berlin"
    )
    stateless = client.crons.create("chief", schedule="30 8 * * *", input=HI)
    found = client.crons.search(thread_id=tid)
    counted = client.crons.count()
    paused = client.crons.update(on_thread["cron_id"], enabled=False)
    schedule = hansa.get(f"/api/schedules/{on_thread['cron_id']}").json()
    fired = hansa.post(f"/api/schedules/{on_thread['cron_id']}/fire")

    def posted(_: Any) -> bool:
        got = hansa.get(f"/api/conversations/{tid}/messages").json()
        return any(m["content"] == "How is our SEO doing this week?" for m in got)

    poll_until(hansa, "/healthz", posted, seconds=30)

    assert on_thread["thread_id"] == tid and on_thread["assistant_id"] == "growthLead"
    assert on_thread["schedule"] == "0 9 * * 1-5" and on_thread["timezone"] == "Europe/Berlin"
    assert on_thread["next_run_date"] and on_thread["enabled"] is True
    assert on_thread["payload"]["input"] == question
    assert stateless["thread_id"] is None and stateless["on_run_completed"] == "keep"
    assert [c["cron_id"] for c in found] == [on_thread["cron_id"]]
    assert counted == 2
    assert paused["enabled"] is False and paused["next_run_date"] is None
    assert schedule["cron"] == "0 9 * * 1-5" and schedule["action"]["type"] == "message"
    assert schedule["action"]["conversationId"] == tid
    assert schedule["action"]["agentId"] == "growthLead"
    assert fired.status_code == 202, fired.text

    client.crons.delete(stateless["cron_id"])
    assert [c["cron_id"] for c in client.crons.search()] == [on_thread["cron_id"]]
    assert hansa.get(f"/api/schedules/{stateless['cron_id']}").status_code == 404
    assert _refused(lambda: client.crons.delete(stateless["cron_id"])).status_code == 404


def test_bad_crons_are_refused_and_leave_nothing(
    client: SyncLangGraphClient, hansa: httpx.Client
) -> None:
    before = len(hansa.get("/api/schedules").json())
    from datetime import UTC, datetime

    for call, field in (
        (lambda: client.crons.create("chief", schedule="not a cron", input=HI), None),
        (lambda: client.crons.create("chief", schedule="* * * * * *", input=HI), None),
        (lambda: client.crons.create("chief", schedule="0 9 * * *", input={}), "input.messages"),
        (lambda: client.crons.create("nobody", schedule="0 9 * * *", input=HI), None),
        (
            lambda: client.crons.create(
                "chief", schedule="0 9 * * *", input=HI, end_time=datetime(2030, 1, 1, tzinfo=UTC)
            ),
            "end_time",
        ),
        (
            lambda: client.crons.create_for_thread(
                "no-such-thread", "chief", schedule="0 9 * * *", input=HI
            ),
            None,
        ),
    ):
        answer = _refused(call)
        assert answer.status_code in (404, 422), answer.text
        if field is not None:
            assert field in answer.text, answer.text
    assert len(hansa.get("/api/schedules").json()) == before
