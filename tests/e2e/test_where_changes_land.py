"""Hans never plans a change he cannot place (issue 30, gap 2), end to end.

- A tenant with no project is told so before any plan, and offered to create one or to
  draft in the workspace; either answer places the plan, which says where it lands.
- ``POST /api/assistant/execute`` and an agent's tool call say where a change landed
  (``details.target``: the live site, or the workspace as a draft, with the reason), and
  Hans's answers repeat it.
- The plan's "Where the changes land" names the right place for every task type that
  changes something: a page never lands in "the project's shop", a workspace page never on
  "hansa at <domain>".
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from harness import (
    Server,
    hans_says,
    new_conversation,
    running_server,
    turn,
    wordpress_project,
)

CHANGES_WITHOUT_A_PROJECT = [
    "Please delete the page called Pricing",
    "Update the copy on the About page to say we moved to Toronto",
    "Create a new page called Water Filtration Services",
]
NO_PROJECT = "You have no project yet, so there is nowhere I could place this change"
DRAFT_ANSWERS = ["B", "draft it in the workspace for now"]
CREATE_ANSWERS = [  # (the answer, the project's name and domain)
    ("create the project Aquaverter at aquaverter.ca", "Aquaverter", "aquaverter.ca"),
]
PAGE_DETAILS = "language: English; audience: homeowners; seo angle: water filtration; layout: B"
OUTSIDE_ANY = "Hansa's workspace, outside any project"
DRAFT_FOR = "Hansa's workspace, as a draft for Aquaverter (not on its live site)"
NOT_CONNECTED = "Aquaverter's WordPress site is not connected to Hansa"


def _project(client: httpx.Client, **body: Any) -> str:
    response = client.post("/api/projects", json={"name": "Aquaverter", **body})
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def _execute(
    client: httpx.Client, cid: str, task_type: str, params: dict[str, Any], **extra: Any
) -> dict[str, Any]:
    response = client.post(
        "/api/assistant/execute",
        json={
            "conversationId": cid,
            "createdByAgentId": extra.pop("agent", "webEngineer"),
            "taskType": task_type,
            "parameters": params,
            **extra,
        },
    )
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    assert body["status"] == "completed", body
    return body


def _page(slug: str) -> dict[str, str]:
    return {"title": slug.title(), "slug": slug, "contentHtml": "<h1>Hello</h1>"}


def _card(client: httpx.Client, events: list[dict[str, Any]]) -> dict[str, Any]:
    """The run card of the plan among ``events``."""
    plans = [e for e in events if e["type"] == "plan"]
    assert plans, hans_says(events)
    plan = plans[0]
    card: dict[str, Any] = client.get(f"/api/runs/{plan['data']['runId']}").json()
    return card


def _tasks(card: dict[str, Any]) -> list[dict[str, Any]]:
    return [t for g in card["groups"] for t in g["tasks"]]


def _landing_lines(plan_text: str) -> list[str]:
    _, _, after = plan_text.partition("Where the changes land:\n")
    return [line for line in after.split("\n\n")[0].splitlines() if line.startswith("- ")]


def test_no_project_hans_says_so_and_offers_to_create_one_or_draft(tmp_path: Path) -> None:
    with running_server(tmp_path) as server, server.client() as client:
        asked = []
        for request in CHANGES_WITHOUT_A_PROJECT:
            cid = new_conversation(client)
            events = turn(client, cid, request)
            asked.append((cid, events))
        drafted = []
        for (cid, _), answer in zip(asked, DRAFT_ANSWERS, strict=False):
            events = turn(client, cid, answer)
            if not [e for e in events if e["type"] == "plan"]:  # the update's own question
                events += turn(client, cid, "all")
            drafted.append(events)
        (cid, _), (answer, name, domain) = asked[-1], CREATE_ANSWERS[0]
        created = turn(client, cid, answer)
        said_then = hans_says(created)[-1]
        if not [e for e in created if e["type"] == "plan"]:  # the new page's own questions
            created += turn(client, cid, PAGE_DETAILS)
        stored = client.get("/api/projects").json()
        card = _card(client, created)

    for (_, events), request in zip(asked, CHANGES_WITHOUT_A_PROJECT, strict=True):
        said = hans_says(events)[-1]
        assert NO_PROJECT in said, (request, said)
        assert "A) create a project for it" in said and "B) draft it in Hansa's workspace" in said
        assert not [e for e in events if e["type"] == "plan"], "nothing is planned unplaced"
        assert "your project" not in said, "no project is named that is not there"
    for events in drafted:
        said = hans_says(events)
        assert "Where: I will draft this in Hansa's workspace, outside any project." in said[0]
        text = said[-1]
        lines = _landing_lines(text)
        assert lines and all(line.endswith(OUTSIDE_ANY) for line in lines), text
    (project,) = stored
    assert (project["name"], project["domain"]) == (name, domain)
    assert said_then.startswith(f"Project: {name}."), said_then
    text = hans_says(created)[-1]
    thinking = [e["data"]["summary"] for e in created if e["type"] == "thinking"]
    assert f"Hans created the project {name} for this plan" in thinking
    assert _landing_lines(text) == [
        f"- Web Engineer Nico's step (create_page): Hansa's workspace, where {name}'s pages live"
    ], text
    assert card["projectId"] == project["id"]
    assert all(t["projectId"] == project["id"] for t in _tasks(card)), card


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Any:
    tmp = tmp_path_factory.mktemp("where")
    steps = [
        {"toolCalls": [{"name": "create_page", "arguments": _page("tool-made")}]},
        {"text": "The page is ready for review."},
    ]
    (tmp / "webEngineer.json").write_text(json.dumps(steps))
    (tmp / "hansa.toml").write_text(
        f'[agents.webEngineer]\nmodel = "scripted:{tmp / "webEngineer.json"}"\n'
    )
    with running_server(tmp, extra_args=("--config", str(tmp / "hansa.toml"))) as s:
        yield s


def test_execute_on_an_unconnected_wordpress_project_names_the_workspace_draft(
    server: Server,
) -> None:
    with server.client() as client:
        drafts = wordpress_project(client)  # config.workspaceDrafts: the project's choice
        unset = _project(client, domain="aquaverter.ca", cmsPlatform="wordpress", config={})
        hansa = _project(client, domain="aquaverter.ca", cmsPlatform="hansa")
        cid = new_conversation(client)
        created = _execute(client, cid, "create_page", _page("about"), projectId=unset)
        updated = _execute(
            client,
            cid,
            "update_content_block",
            {"page": "About", "html": "<p>New</p>"},
            projectId=unset,
        )
        chosen = _execute(client, cid, "create_page", _page("team"), projectId=drafts)
        own = _execute(client, cid, "create_page", _page("faq"), projectId=hansa)
        product = _execute(
            client,
            cid,
            "create_product",
            {"name": "Softener", "price": "499"},
            projectId=unset,
            agent="ecommerceSpecialist",
        )
        messages = client.get(f"/api/conversations/{cid}/messages").json()

    for body in (created, updated):
        target = body["details"]["target"]
        assert target == {
            "where": "workspace",
            "draft": True,
            "said": DRAFT_FOR,
            "reason": NOT_CONNECTED,
        }
    assert chosen["details"]["target"]["reason"] == (
        f"{NOT_CONNECTED}; the project drafts its changes here until it is"
    )
    assert own["details"]["target"] == {
        "where": "workspace",
        "draft": False,
        "said": "Hansa's workspace, where Aquaverter's pages live",
    }
    assert product["details"]["target"]["said"] == DRAFT_FOR
    assert product["details"]["target"]["reason"] == "Aquaverter's shop is not connected to Hansa"
    said = "\n".join(m["content"] for m in messages if m["kind"] == "assistant")
    assert f"in {DRAFT_FOR}: {NOT_CONNECTED}" in said, "Hans's summary repeats it"
    assert "in Hansa's workspace, where Aquaverter's pages live" in said


def test_an_agent_s_tool_says_where_its_page_landed(server: Server) -> None:
    with server.client() as client:
        pid = _project(client, domain="aquaverter.ca", cmsPlatform="wordpress", config={})
        cid = new_conversation(client, projectId=pid)
        events = turn(client, cid, "Make it so", activeAgentId="webEngineer")

    (result,) = [e["data"] for e in events if e["type"] == "tool_result"]
    assert result["ok"] and result["result"]["target"]["draft"] is True
    (answer,) = hans_says(events)
    assert answer.startswith("The page is ready for review.")
    assert answer.endswith(f"Where this landed: create_page: {DRAFT_FOR} ({NOT_CONNECTED}).")


ANSWERS = {  # a plan's own question, answered
    "Which section": "page: Pricing; section: all",
    "Which page": "page: Pricing; section: all",
    "describe": "description: A water softener for hard water",
    "Layout": "layout: B",
}
OWN_PAGES = "Hansa's workspace, where Aquaverter's pages live"
OWN_PRODUCTS = "Hansa's workspace, where Aquaverter's products live"
PLANS = [  # (project, request, the where-line's place)
    (
        {"cmsPlatform": "hansa", "domain": "aquaverter.ca"},
        "Please delete the page called Pricing",
        "Hansa's workspace, where Aquaverter's pages live",
    ),
    (
        {},
        "Please delete the page called Pricing",
        "Hansa's workspace, where Aquaverter's pages live",
    ),
    (
        {"cmsPlatform": "wordpress", "config": {"workspaceDrafts": True}},
        "Update the copy on the Pricing page to say spring is here",
        DRAFT_FOR,
    ),
    (
        {"cmsPlatform": "wordpress", "config": {"workspaceDrafts": True}},
        "Please create a new page called Services; language: English; audience: homeowners; "
        "seo angle: water filtration; layout: B",
        DRAFT_FOR,
    ),
    (
        {},
        "Add a product called Softener XL for 499",
        "Hansa's workspace, where Aquaverter's products live",
    ),
    (
        {"cmsPlatform": "wordpress", "config": {"workspaceDrafts": True}},
        "Add a product called Softener XL for 499",
        DRAFT_FOR,
    ),
]


@pytest.mark.parametrize(("project", "request_", "place"), PLANS)
def test_the_where_line_is_right_for_each_task_type(
    server: Server, project: dict[str, Any], request_: str, place: str
) -> None:
    with server.client() as client:
        pid = _project(client, **project)
        cid = new_conversation(client, projectId=pid)
        _execute(client, cid, "create_page", _page("pricing"), projectId=pid)  # to change
        events = turn(client, cid, request_)
        if not [e for e in events if e["type"] == "plan"]:  # a question of the plan's own
            asked = hans_says(events)[-1]
            answer = ANSWERS[next(k for k in ANSWERS if k in asked)]
            events = turn(client, cid, answer)
        card = _card(client, events)

    text = hans_says(events)[-1]
    lines = _landing_lines(text)
    changing = [t for t in _tasks(card) if t["taskType"] in LANDING_TYPES]
    assert len(lines) == len(changing) > 0, text
    for line, task in zip(lines, changing, strict=True):
        assert line.endswith(f"({task['taskType']}): {place}"), (line, place)


LANDING_TYPES = {"create_page", "update_content_block", "delete_page", "create_product"}
"""The task types whose changes go through the project's CMS or shop."""
