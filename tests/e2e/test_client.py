"""hansa.client against the real server: the public API, sync and async."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from hansa.client import (
    AgentOut,
    AsyncClient,
    Client,
    ConversationOut,
    HansaAPIError,
    Me,
    MessageOut,
    Posted,
    RunCard,
    RunSummary,
    TaskOut,
    parsed,
    parsed_event,
)
from hansa.domain.event import DoneData, MessageData
from harness import Server, running_server, waits


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with running_server(tmp_path_factory.mktemp("client")) as s:
        yield s


def test_a_turn_and_a_run_through_the_sync_client(server: Server) -> None:
    with Client(server.url) as hansa:
        assert hansa.me()["tenantId"] == "default"
        cid = hansa.create_conversation()["id"]
        posted = hansa.post_message(cid, "Hello there")
        events = list(hansa.events(cid, after=posted["seq"] - 1, until_done=posted["turnId"]))
        run = hansa.create_run(cid, "Two waits", waits("A", "B"))
        hansa.approve(run["id"])
        card = hansa.wait_for_run(run["id"], timeout=30)
        replay = list(hansa.events(cid, after=events[1]["seq"], until_done=posted["turnId"]))
        with pytest.raises(HansaAPIError) as missing:
            hansa.run("no-such-run")
    assert [e["seq"] for e in events] == list(range(posted["seq"], events[-1]["seq"] + 1))
    assert events[-1]["type"] == "done" and events[-1]["turnId"] == posted["turnId"]
    assert replay == events[2:], "a cursor resumes exactly after its seq"
    assert card["status"] == "completed"
    assert (missing.value.status, missing.value.code) == (404, "not_found")


def test_answers_and_events_read_into_the_apis_typed_models(server: Server) -> None:
    with Client(server.url) as hansa:
        convo = parsed(ConversationOut, hansa.create_conversation(title="Typed"))
        posted = parsed(Posted, hansa.post_message(convo.id, "Hello"))
        events = [
            parsed_event(e)
            for e in hansa.events(convo.id, after=posted.seq - 1, until_done=posted.turn_id)
        ]
        run = hansa.create_run(convo.id, "One wait", waits("A"))
        hansa.approve(run["id"])
        card = parsed(RunCard, hansa.wait_for_run(run["id"], timeout=30))

    assert convo.title == "Typed" and posted.turn_id
    assert isinstance(events[0].payload, MessageData) and events[0].payload.content == "Hello"
    assert isinstance(events[-1].payload, DoneData) and events[-1].turn_id == posted.turn_id
    assert card.status == "completed" and [g.step_group for g in card.groups] == ["A"]
    assert all(t.status == "completed" for g in card.groups for t in g.tasks)


def test_the_async_client_posts_and_follows(server: Server) -> None:
    async def go() -> tuple[list[str], dict[str, object]]:
        async with AsyncClient(server.url) as hansa:
            cid = (await hansa.create_conversation())["id"]
            posted = await hansa.post_message(cid, "Hi again")
            kinds = [
                e["type"]
                async for e in hansa.events(
                    cid, after=posted["seq"] - 1, until_done=posted["turnId"]
                )
            ]
            run = await hansa.create_run(cid, "One wait", waits("A"))
            return kinds, await hansa.approve(run["id"])

    kinds, approved = asyncio.run(go())
    assert kinds[0] == "message" and kinds[-1] == "done" and "text_delta" in kinds
    assert approved["status"] in ("running", "completed")


def test_the_clients_answers_are_the_models_the_routes_return(server: Server) -> None:
    with Client(server.url) as hansa:
        me = hansa.me()
        agents = hansa.agents()
        convo = hansa.create_conversation(title="Models")
        posted = hansa.post_message(convo.id, "Hello models")
        list(hansa.events(convo.id, after=posted.seq - 1, until_done=posted.turn_id))
        said = hansa.messages(convo.id)
        run = hansa.create_run(convo.id, "One wait", waits("A"))
        task = hansa.task(run.groups[0].tasks[0].id)
        listed = hansa.runs(conversation_id=convo.id)
        again = hansa.conversation(convo.id)

    assert isinstance(me, Me) and me.tenant_id == me["tenantId"] == "default"
    assert all(isinstance(a, AgentOut) for a in agents) and agents[0].avatar.initials
    assert isinstance(convo, ConversationOut) and convo["title"] == convo.title == "Models"
    assert isinstance(posted, Posted) and posted["turnId"] == posted.turn_id
    assert all(isinstance(m, MessageOut) for m in said) and said[0].content == "Hello models"
    assert isinstance(run, RunCard) and run["groups"][0]["tasks"][0]["taskType"] == "wait"
    assert isinstance(task, TaskOut) and task.created_by == "schedulerAgent"
    assert [r.id for r in listed] == [run.id] and isinstance(listed[0], RunSummary)
    assert again.last_seq >= posted.seq and "lastSeq" in again and "nope" not in again
    with pytest.raises(KeyError):
        again["nope"]
