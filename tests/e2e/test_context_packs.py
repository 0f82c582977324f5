"""Context packs and the layered system prompt (issue 32 item 4, seed 002 §4) over the
real server: the scripted model checks each prompt (``promptHas``/``promptLacks``).

- global scope: the rules say so, and the tenant's projects are listed;
- project scope: the scope's rules, document-first guidance, the project's summary,
  recent activity and document tree; a document created between two turns is in the
  second (the cached digest was dropped when the write committed);
- entity scope: the focused document's path and the documents around it;
- an executor's draft (``draft_content``) and a session's step are scoped the same way,
  not by their persona only.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from harness import (
    Server,
    execute_task,
    hans_says,
    new_conversation,
    poll_until,
    running_server,
    turn,
)

AGENT = "researchAgent"
WRITER = "creativeLead"
RUNNER = "growthLead"
SAFETY = "Never invent ids, names, figures or results"
DOC_FIRST = "Documents first: the tree below maps what is known"
TOOL_RULES = "Tools: call one only when the request needs it"

SCRIPT: list[dict[str, Any]] = [
    {  # 1. global scope
        "promptHas": [
            "Scope: global, no project in focus",
            SAFETY,
            "Projects (2):",
            "- Aquaverter [",
            "- Bakery [",
            TOOL_RULES,
        ],
        "promptLacks": [DOC_FIRST],
        "text": "Two projects.",
    },
    {  # 2. project scope, before any document
        "promptHas": ["Scope: the project Aquaverter", DOC_FIRST, "Workspace: no entities yet."],
        "promptLacks": ["Projects (2):", "Research ["],
        "text": "Nothing yet.",
    },
    {  # 3. after two documents were made: the cached digest was dropped
        "promptHas": [
            "Workspace: 2 documents.",
            "Recent activity (newest first):",
            "created document “Interviews” [",
            "Documents (2, in order; titles, no content):",
            "- Research [",
            "  - Interviews [",
            " chars)",
        ],
        "promptLacks": ["We asked 12 homeowners"],  # a document's content: never in the tree
        "text": "Research, with interviews under it.",
    },
    {  # 4. entity scope: the focused document
        "promptHas": [
            "Scope: the document “Interviews” of the project Aquaverter",
            "In focus: the document “Interviews” [",
            "Path: Research / Interviews",
            "- parent: “Research” [",
            "- content: We asked 12 homeowners",
        ],
        "text": "The interviews sit under Research.",
    },
]
DRAFT: list[dict[str, Any]] = [
    {  # 5. an executor's draft, in the run's project scope
        "purpose": "draft",
        "promptHas": [
            "Scope: the project Aquaverter",
            SAFETY,
            "Workspace: 2 documents.",
            "- Research [",
            "Write an SEO brief",
        ],
        "promptLacks": [TOOL_RULES],
        "text": "Soft water for homes\nwater softener, hard water",
    },
]

FRAME = {"nextStep": "report", "state": {"checked": 1}, "text": "Checked.", "done": True}
SESSION: list[dict[str, Any]] = [
    {  # a session step in a project's conversation: scoped like a turn
        "purpose": "session_step",
        "promptHas": [
            "Scope: the project Solo",
            "Workspace: no entities yet.",
            SAFETY,
            "You are working through a long-running session",
        ],
        "text": json.dumps(FRAME),
    },
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("context-packs")
    config = []
    for agent, steps in ((AGENT, SCRIPT), (WRITER, DRAFT), (RUNNER, SESSION)):
        script = tmp / f"{agent}.json"
        script.write_text(json.dumps(steps))
        config.append(f'[agents.{agent}]\nmodel = "scripted:{script}"\n')
    (tmp / "hansa.toml").write_text("\n".join(config))
    with running_server(tmp, extra_args=("--config", str(tmp / "hansa.toml"))) as s:
        yield s


def _project(client: httpx.Client, name: str) -> str:
    made = client.post("/api/projects", json={"name": name, "domain": f"{name.lower()}.ca"})
    assert made.status_code == 201, made.text
    return str(made.json()["id"])


def _answered(events: list[dict[str, Any]]) -> str:
    (done,) = [e for e in events if e["type"] == "done"]
    assert done["data"]["status"] == "completed", done
    return hans_says(events)[-1]


def test_each_scope_gets_its_rules_and_packs_and_a_change_is_seen_at_once(
    server: Server,
) -> None:
    with server.client() as client:
        aqua = _project(client, "Aquaverter")
        _project(client, "Bakery")
        everywhere = new_conversation(client)
        first = turn(client, everywhere, "What projects do we have?", activeAgentId=AGENT)

        cid = new_conversation(client, projectId=aqua)
        second = turn(client, cid, "What do we know so far?", activeAgentId=AGENT)
        research = execute_task(
            client,
            cid,
            "fileAgent",
            "entity.create",
            {"entityType": "document", "name": "Research"},
            projectId=aqua,
        )["entityId"]
        interviews = execute_task(
            client,
            cid,
            "fileAgent",
            "entity.create",
            {
                "entityType": "document",
                "name": "Interviews",
                "parentId": research,
                "fields": {"content": "We asked 12 homeowners about hard water. " * 20},
            },
            projectId=aqua,
        )["entityId"]
        third = turn(client, cid, "And now?", activeAgentId=AGENT)

        focused = client.patch(f"/api/conversations/{cid}", json={"focusEntityId": interviews})
        assert focused.status_code == 200, focused.text
        fourth = turn(client, cid, "Where is this document?", activeAgentId=AGENT)

        drafted = execute_task(
            client,
            cid,
            WRITER,
            "draft_content",
            {"kind": "seo_brief", "brief": "Water softeners for homeowners"},
            projectId=aqua,
        )

    assert _answered(first) == "Two projects."
    assert _answered(second) == "Nothing yet."
    assert _answered(third) == "Research, with interviews under it."
    assert _answered(fourth) == "The interviews sit under Research."
    assert drafted["metaDescription"] == "Soft water for homes"
    usage = [e for e in third if e["type"] == "context_usage"][-1]["data"]
    assert usage["sections"]["rules"] > 0 and usage["sections"]["project"] > 0
    assert not usage["dropped"], "a large window keeps every pack whole"


def test_a_session_step_is_scoped_to_its_conversations_project(server: Server) -> None:
    with server.client() as client:
        cid = new_conversation(client, projectId=_project(client, "Solo"))
        started = client.post(
            "/api/agent-sessions",
            json={"agentId": RUNNER, "goal": "Check the rankings", "conversationId": cid},
        )
        assert started.status_code == 201, started.text
        sid = started.json()["id"]
        done = poll_until(
            client,
            f"/api/agent-sessions/{sid}",
            lambda s: s["status"] in ("completed", "failed"),
            seconds=30,
        )

    assert (done["status"], done["reason"]) == ("completed", "done"), done
    assert done["state"] == {"checked": 1}
