"""Context packs and the rolling summary through the in-process app (seed 002 §4, §5).

The FunctionModel keeps every prompt it is given, so these tests read what the engine
actually sent: the packs, the summary, the messages after it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hansa.models.base import ChatMessage, ModelSettings, RequestParams
from hansa.models.function import FunctionModel
from inprocess.asgi import Hansa, of_type, running_app

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

BANNER_ID = "01JQ7ZP3V5K2M8N4R6T9W1X3Y5"
DECISION = f"We decided the sale banner is teal; it is entity {BANNER_ID}."
SUMMARY = "The user is preparing a spring sale with the team."


class Recorder:
    """A model that answers by purpose and keeps every prompt."""

    def __init__(self) -> None:
        self.prompts: list[tuple[str, list[ChatMessage]]] = []

    def answer(self, messages: list[ChatMessage], s: ModelSettings, p: RequestParams) -> str:
        self.prompts.append((p.purpose, messages))
        if p.purpose == "summary":  # the summarizer answers in its structured output
            return json.dumps(
                {
                    "summary": SUMMARY,
                    "keptMessageIds": [],
                    "droppedMessageIds": [],
                    "stateUpdates": [],
                }
            )
        if p.purpose == "plan":
            return "{}"
        return f"Noted ({len(self.prompts)})."

    def replies(self) -> list[list[ChatMessage]]:
        return [m for purpose, m in self.prompts if purpose == "reply"]


async def _execute(hansa: Hansa, cid: str, pid: str, params: dict[str, Any]) -> str:
    body = {
        "conversationId": cid,
        "projectId": pid,
        "createdByAgentId": "chief",
        "taskType": "entity.create",
        "parameters": params,
    }
    made = await hansa.ok("POST", "/api/assistant/execute", json=body)
    return str(made["details"]["entityId"])


async def test_a_long_conversation_is_summarised_and_a_later_prompt_keeps_the_early_decision(
    tmp_path: Path,
) -> None:
    model = Recorder()
    limits = {"summary_after_messages": 6, "history_messages": 2, "summary_after_chars": 0}
    async with running_app(tmp_path, FunctionModel(model.answer), **limits) as hansa:
        cid = await hansa.conversation()
        await hansa.turn(cid, DECISION)
        for part in range(2):
            await hansa.turn(cid, f"Tell me more about the plan, part {part}.")
        fourth = await hansa.turn(cid, "And the timing?")  # 8 messages: past 6
        updated = await hansa.follow(
            cid, lambda e: e["type"] == "summary_updated", after=fourth[-1]["seq"]
        )
        later = await hansa.turn(cid, "Remind me what we settled on.")
        timeline = await hansa.ok("GET", f"/api/conversations/{cid}/timeline")
        calls = await hansa.ok("GET", "/api/llm-calls", params={"conversationId": cid})

    summary_event = updated[-1]["data"]
    assert summary_event["version"] == 1
    assert summary_event["summarizedMessages"] == 6, "all but the last exchange"
    assert summary_event["keptIds"] == 1 and not summary_event["modelFailed"]
    (summarizer,) = [m for purpose, m in model.prompts if purpose == "summary"]
    assert DECISION in summarizer[-1].content, "the summarizer read the early messages"

    prompt = model.replies()[-1]
    system = prompt[0].content
    assert f"Ids mentioned: {BANNER_ID}" in system
    assert f"- {DECISION}" in system, "the decision is kept word for word"
    assert SUMMARY in system
    history = [m for m in prompt[1:] if m.role != "system"]  # the agent's part is a system one
    assert DECISION not in [m.content for m in history], "the early message is folded"
    assert [m.role for m in history] == ["user", "assistant", "user"], "the messages after it"
    assert history[0].content == "And the timing?"
    assert history[-1].content == "Remind me what we settled on."

    (usage,) = of_type(later, "context_usage")
    assert usage["data"]["summaryVersion"] == 1
    assert usage["data"]["contextWindow"] == 8_192
    assert usage["data"]["sections"]["summary"] > 0 and usage["data"]["dropped"] == []
    assert any(e["kind"] == "summary" for e in timeline)
    assert [c for c in calls if c["nodeId"] == "summary"], "the summary's model call is recorded"


async def test_a_focused_entity_and_the_document_tree_ride_in_the_prompt_fitted_to_the_window(
    tmp_path: Path,
) -> None:
    model = Recorder()
    async with running_app(tmp_path, FunctionModel(model.answer, context_window=5_000)) as hansa:
        pid = await hansa.wordpress_project()
        cid = await hansa.conversation(projectId=pid)
        guide = await _execute(hansa, cid, pid, {"entityType": "document", "name": "Style guide"})
        await _execute(
            hansa, cid, pid, {"entityType": "document", "name": "Colours", "parentId": guide}
        )
        for n in range(80):  # more titles than the window's share for packs holds
            name = f"Note {n:02} on the spring campaign and its many details"
            await _execute(hansa, cid, pid, {"entityType": "document", "name": name})
        goal = await _execute(
            hansa,
            cid,
            pid,
            {"entityType": "goal", "name": "Spring sale", "fields": {"deadline": "2026-04-01"}},
        )
        unknown = await hansa.client.patch(
            f"/api/conversations/{cid}", json={"focusEntityId": "no-such-entity"}
        )
        focused = await hansa.ok("PATCH", f"/api/conversations/{cid}", json={"focusEntityId": goal})
        events = await hansa.turn(cid, "What is the deadline?")
        cleared = await hansa.ok("PATCH", f"/api/conversations/{cid}", json={"focusEntityId": None})

    assert unknown.status_code == 422
    assert focused["metadata"]["focus"] == {"entityId": goal}
    assert "focus" not in cleared["metadata"]
    system = model.replies()[-1][0].content
    assert "Project: Aquaverter" in system and "CMS wordpress" in system
    assert f"- Style guide [{guide}]\n  - Colours [" in system, "the tree, in order"
    assert f"In focus: the goal “Spring sale” [{goal}]." in system
    assert "- deadline: 2026-04-01" in system
    assert "Note 00 on" in system and "Note 79 on" not in system, "the tree's tail did not fit"

    (usage,) = of_type(events, "context_usage")
    data = usage["data"]
    assert data["contextWindow"] == 5_000 and data["estimate"] == "chars/4"
    assert {"system", "tools", "global", "project", "entity", "history", "message", "reply"} <= set(
        data["sections"]
    )
    assert sum(data["sections"].values()) <= 5_000
    dropped = {d["section"]: d for d in data["dropped"]}
    assert dropped["project"]["what"].startswith("document tree: ")
    assert dropped["project"]["tokens"] > 0
