"""hansa.client against the real server: the public API, sync and async."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from hansa.client import AsyncClient, Client, HansaAPIError
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
