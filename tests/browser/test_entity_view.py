"""The panel's workspace view (issue 19) in real Chromium against the real server: the
entities a conversation's turns change appear as the turns run, and again after a reload.

The turns' agent answers with the project's model (``config.llm.model``), a script of tool
calls. A script that renames the document must name it by its id, known only once the first
turn has made it: the test writes that script then and points the project at it (the server
builds a model on the first use of its spec).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from playwright.sync_api import Locator, Page, expect

from harness import events_until, execute_task, new_conversation

GOAL = "Consistent brand"
BRAND_REQUEST = f"Create a document called Brand book and link it to the goal {GOAL}"
RENAME_REQUEST = "Rename the document Brand book to Brand guide"
DELETE_REQUEST = "Delete the document Brand guide"


def _script(api: Any, project_id: str, path: Path, steps: list[dict[str, Any]]) -> None:
    """The project's agents answer with ``steps`` from now on."""
    path.write_text(json.dumps(steps))
    config = {"llm": {"model": f"scripted:{path}"}}
    api.client.patch(f"/api/projects/{project_id}", json={"config": config}).raise_for_status()


def _turn_done(panel: Any, api: Any, cid: str, after: int) -> list[dict[str, Any]]:
    """The events of the turn the panel just sent, through its ``done``, read over the API."""
    events = events_until(api.client, cid, lambda ev: ev["type"] == "done", after=after)
    assert not [e for e in events if e["type"] == "error"], events
    return events


def _patches(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e["data"] for e in events if e["type"] == "entity_patch"]


def _row(page: Page, entity_id: str) -> Locator:
    return page.locator(f"#workspace .ws-entity[data-entity-id='{entity_id}']")


def test_the_workspace_view_follows_the_entities_a_conversation_changes(
    page: Page, panel: Any, api: Any, tmp_path: Path
) -> None:
    project = api.post("/api/projects", {"name": "Brand workshop"})["id"]
    elsewhere = new_conversation(api.client, projectId=project)
    goal = execute_task(
        api.client,
        elsewhere,
        "fileAgent",
        "entity.create",
        {"entityType": "goal", "name": GOAL},
        projectId=project,
    )["entityId"]
    _script(
        api,
        project,
        tmp_path / "brand.json",
        [
            {
                "toolCalls": [
                    {
                        "name": "entity.create",
                        "arguments": {
                            "entityType": "document",
                            "name": "Brand book",
                            "fields": {"status": "draft"},
                        },
                    }
                ]
            },
            {
                "toolCalls": [
                    {
                        "name": "entity.link",
                        "arguments": {
                            "fromType": "document",
                            "fromName": "Brand book",
                            "toType": "goal",
                            "toName": GOAL,
                            "relation": "supports",
                        },
                    }
                ]
            },
            {"text": "Brand book is made and supports the goal."},
        ],
    )
    cid = new_conversation(api.client, projectId=project)
    panel.open(cid)
    view = page.locator("#workspace")
    expect(view).to_be_hidden()  # nothing changed yet
    page.evaluate("window.__samePage = true")

    # A turn creates the document and links it to the goal: both appear as it runs.
    panel.send(BRAND_REQUEST)
    events = _turn_done(panel, api, cid, 0)
    made = _patches(events)
    doc = next(p["entityId"] for p in made if p["entity"] == "document")
    stored = api.get(f"/api/workspace/entities/{doc}")
    row = _row(page, doc)
    expect(row.locator(".ws-kind")).to_have_text(stored["kind"])
    expect(row.locator(".ws-name")).to_have_text(stored["name"])
    expect(row).to_have_attribute("data-state", "created")
    expect(row.locator(".ws-fields")).to_contain_text(f"status: {stored['data']['status']}")
    edge = next(p["patch"] for p in made if p["entity"] == "edge")
    assert (edge["fromId"], edge["toId"]) == (doc, goal)
    link = view.locator(f".ws-link[data-edge-id='{edge['edgeId']}']")
    goal_name = api.get(f"/api/workspace/entities/{goal}")["name"]
    expect(link).to_have_text(f"{stored['name']} → {edge['relation']} → {goal_name}")
    expect(link.locator(".ws-end").first).to_have_attribute("data-entity-id", doc)
    expect(link.locator(".ws-end").last).to_have_attribute("data-entity-id", goal)
    expect(view.locator(".ws-entity")).to_have_count(1)  # the goal was made elsewhere
    assert page.evaluate("window.__samePage") is True  # no reload

    # A second turn renames it: the row and the link follow, live.
    _script(
        api,
        project,
        tmp_path / "rename.json",
        [
            {
                "toolCalls": [
                    {
                        "name": "entity.update",
                        "arguments": {
                            "entityId": doc,
                            "patch": {"name": "Brand guide", "status": "review"},
                        },
                    }
                ]
            },
            {"text": "It is called Brand guide now."},
        ],
    )
    panel.send(RENAME_REQUEST)
    events = _turn_done(panel, api, cid, events[-1]["seq"])
    assert any(p["entityId"] == doc for p in _patches(events))
    renamed = api.get(f"/api/workspace/entities/{doc}")
    assert renamed["name"] != stored["name"]
    expect(row.locator(".ws-name")).to_have_text(renamed["name"])
    expect(row).to_have_attribute("data-state", "updated")
    expect(row.locator(".ws-fields")).to_contain_text(f"renamed from “{stored['name']}”")
    expect(row.locator(".ws-fields")).to_contain_text(f"status: {renamed['data']['status']}")
    expect(link).to_have_text(f"{renamed['name']} → {edge['relation']} → {goal_name}")
    assert page.evaluate("window.__samePage") is True

    # A reload replays the log into the same view; opening the entity shows what is stored.
    page.reload()
    page.wait_for_selector(".agent[data-agent='chief'][aria-checked='true']")
    assert page.evaluate("window.__samePage") is None
    expect(row.locator(".ws-name")).to_have_text(renamed["name"])
    expect(row.locator(".ws-fields")).to_contain_text(f"renamed from “{stored['name']}”")
    expect(link).to_have_text(f"{renamed['name']} → {edge['relation']} → {goal_name}")
    expect(view.locator(".ws-entity")).to_have_count(1)
    expect(view.locator(".ws-link")).to_have_count(1)
    row.get_by_role("button").click()
    details = row.locator(".ws-data")
    expect(details).to_contain_text(f"status{renamed['data']['status']}")
    expect(details).to_contain_text(f"links{len(renamed['edges'])}")

    # A third turn deletes it: struck through, live.
    _script(
        api,
        project,
        tmp_path / "delete.json",
        [
            {"toolCalls": [{"name": "entity.delete", "arguments": {"entityId": doc}}]},
            {"text": "Brand guide is deleted."},
        ],
    )
    panel.send(DELETE_REQUEST)
    _turn_done(panel, api, cid, events[-1]["seq"])
    assert api.client.get(f"/api/workspace/entities/{doc}").status_code == 404
    expect(row).to_have_attribute("data-state", "deleted")
    expect(row.locator(".ws-change")).to_have_text("deleted")
    decoration = row.locator(".ws-name").evaluate("el => getComputedStyle(el).textDecorationLine")
    assert decoration == "line-through"
    expect(link.locator(".ws-end").first).to_have_attribute("data-state", "deleted")
    shown = view.locator(".ws-entity").count() + view.locator(".ws-link").count()
    expect(view.locator(".ws-title .count")).to_have_text(str(shown))
