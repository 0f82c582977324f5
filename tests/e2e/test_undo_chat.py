"""Undo from the chat (issue 30, gap 5): asked in words, Hans answers himself, asks first
with the run card's confirmation, and rolls the run back with the card's mechanism."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from harness import Server, events_until, hans_says, new_conversation, run_done, turn

HANS = "chief"


def _page(slug: str, title: str) -> dict[str, Any]:
    return {
        "stepGroup": "A",
        "taskType": "create_page",
        "parameters": {"title": title, "slug": slug, "contentHtml": f"<h1>{title}</h1>"},
        "createdByAgentId": "webEngineer",
    }


def _completed_run(client: httpx.Client, cid: str, title: str, slug: str) -> dict[str, Any]:
    slug = f"{slug}-{uuid.uuid4().hex[:8]}"  # the tenant's workspace holds one page a slug
    body = {"conversationId": cid, "title": title, "tasks": [_page(slug, title)]}
    created = client.post("/api/runs", json=body)
    assert created.status_code == 201, created.text
    run_id = created.json()["id"]
    assert client.post(f"/api/runs/{run_id}/approve").status_code == 200
    events_until(client, cid, run_done(run_id))
    card = client.get(f"/api/runs/{run_id}").json()
    assert card["status"] == "completed"
    return dict(card)


def _page_url(card: dict[str, Any]) -> str:
    task = card["groups"][0]["tasks"][0]
    return f"/api/workspace/pages/{task['result']['pageId']}"


def _routed_to(events: list[dict[str, Any]]) -> str:
    (routing,) = [e["data"] for e in events if e["type"] == "routing"]
    return str(routing["agentId"])


@pytest.mark.parametrize(
    "asked",
    [
        "undo that",
        "roll back the last run",
        "please revert what you just did",
        "Hans, could you roll back what you did?",
    ],
)
def test_hans_undoes_the_last_run_after_asking_as_the_card_does(server: Server, asked: str) -> None:
    with server.client() as client:
        cid = new_conversation(client)
        card = _completed_run(client, cid, "Spring sale page", "spring-sale")
        offer = turn(client, cid, asked)
        still_there = client.get(_page_url(card)).status_code
        confirmed = turn(client, cid, "yes, undo it")
        after = client.get(f"/api/runs/{card['id']}").json()
        gone = client.get(_page_url(card)).status_code
        found = client.get(f"/api/conversations/{cid}/messages").json()
        said = [m["content"] for m in found if m["kind"] == "assistant"]

    assert _routed_to(offer) == HANS, "Hans answers an undo himself, not the Web Engineer"
    (question,) = hans_says(offer)
    assert question.startswith("Undo “Spring sale page”? I will undo these steps, newest first:")
    assert "- " + card["groups"][0]["tasks"][0]["summary"] in question
    assert "Steps that cannot be undone stay as they are." in question
    assert still_there == 200, "nothing is undone before the user says yes"

    assert after["status"] == "rolled_back"
    assert gone == 404
    assert said[-1].startswith("I rolled back “Spring sale page”. Undone, newest first:"), said
    assert confirmed[-1]["type"] == "done" and confirmed[-1]["data"]["status"] == "completed"


def test_a_run_named_by_its_title_is_the_one_undone(server: Server) -> None:
    with server.client() as client:
        cid = new_conversation(client)
        services = _completed_run(client, cid, "Services page", "services")
        newer = _completed_run(client, cid, "Spring sale page", "spring-sale")
        offer = turn(client, cid, "can you undo the Services page run?")
        turn(client, cid, "yes")
        services_after = client.get(f"/api/runs/{services['id']}").json()["status"]
        newer_after = client.get(f"/api/runs/{newer['id']}").json()["status"]

    (question,) = hans_says(offer)
    assert question.startswith("Undo “Services page”?")
    assert (services_after, newer_after) == ("rolled_back", "completed")


def test_no_keeps_the_run_and_undoing_twice_says_so(server: Server) -> None:
    with server.client() as client:
        cid = new_conversation(client)
        card = _completed_run(client, cid, "Spring sale page", "spring-sale")
        turn(client, cid, "undo that")
        kept = turn(client, cid, "no")
        status_kept = client.get(f"/api/runs/{card['id']}").json()["status"]
        turn(client, cid, "undo that")
        turn(client, cid, "go ahead")
        again = turn(client, cid, "please undo that again")
        convo = client.get(f"/api/conversations/{cid}").json()

    assert hans_says(kept) == ["All right, I left everything as it is."]
    assert status_kept == "completed"
    assert hans_says(again) == ["“Spring sale page” is rolled back already. Nothing was changed."]
    assert convo["state"] != "waiting_for_user", "nothing to confirm: Hans does not wait"


def test_with_no_run_or_an_unknown_name_hans_says_so(server: Server) -> None:
    with server.client() as client:
        empty = new_conversation(client)
        nothing = turn(client, empty, "roll back the last run")
        cid = new_conversation(client)
        card = _completed_run(client, cid, "Spring sale page", "spring-sale")
        unknown = turn(client, cid, "undo the newsletter run")
        status = client.get(f"/api/runs/{card['id']}").json()["status"]

    assert _routed_to(nothing) == HANS
    assert hans_says(nothing) == [
        "There is no run in this conversation that I could undo. Nothing was changed."
    ]
    (said,) = hans_says(unknown)
    assert said.startswith("I found no run called “newsletter” in this conversation")
    assert "“Spring sale page”" in said
    assert status == "completed"
