"""The agent loop through the in-process app: what the model reads after its tools answered,
and a cancelled turn's worker stops (its running tool is cut, the model is not asked again)."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from hansa.models.base import ChatMessage, ModelResponse, ModelSettings, RequestParams, ToolCall
from hansa.models.function import FunctionModel
from inprocess.asgi import of_type, running_app, said

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

ANSWER = "I filed the ticket and read it back: it is open."


def _last_result(messages: list[ChatMessage]) -> dict[str, object]:
    found: dict[str, object] = json.loads(
        next(m for m in reversed(messages) if m.role == "tool").content
    )
    return found


async def test_search_then_read_then_answer_the_prompt_holds_the_tools_answers(
    tmp_path: Path,
) -> None:
    prompts: list[list[ChatMessage]] = []
    offered: list[set[str]] = []

    def hans(messages: list[ChatMessage], s: ModelSettings, p: RequestParams) -> ModelResponse:
        prompts.append(messages)
        offered.append({tool.name for tool in p.tools})
        if len(prompts) == 1:
            ticket = {"title": "Fix the FAQ", "priority": "high"}
            return ModelResponse("", tool_calls=(ToolCall("t1", "create_ticket", ticket),))
        if len(prompts) == 2:  # read back what the first tool made, by the id it answered
            entity = {"entityId": _last_result(messages)["ticketId"]}
            return ModelResponse("", tool_calls=(ToolCall("t2", "entity_read", entity),))
        return ModelResponse(ANSWER)

    async with running_app(tmp_path, FunctionModel(hans)) as hansa:
        cid = await hansa.conversation()
        events = await hansa.turn(cid, "Please file a ticket for the FAQ and read it back")
        calls = await hansa.ok("GET", "/api/llm-calls", params={"conversationId": cid})

    assert said(events) == [ANSWER]
    assert len(prompts) == 3 == len([c for c in calls if c["agentId"] == "chief"])
    assert {"create_ticket", "entity.read", "wait"} <= offered[0]
    assert "delete_page" not in offered[0]
    created, read = of_type(events, "tool_result")
    assert created["data"]["ok"] and read["data"]["ok"], (created, read)
    assert read["data"]["name"] == "entity.read", "the wire name maps back to the task type"
    last = prompts[-1]
    tools = [m for m in last if m.role == "tool"]
    assert [m.tool_call_id for m in tools] == ["t1", "t2"]
    assert json.loads(tools[0].content)["ticketId"] == created["data"]["result"]["ticketId"]
    assert "Fix the FAQ" in tools[1].content and not tools[1].is_error
    callers = [m for m in last if m.tool_calls]
    assert [[c.name for c in m.tool_calls] for m in callers] == [["create_ticket"], ["entity_read"]]


async def test_a_cancelled_turns_worker_stops_and_cuts_its_running_tool(tmp_path: Path) -> None:
    asked = 0
    asked_again = anyio.Event()

    async def hans(
        messages: list[ChatMessage], s: ModelSettings, p: RequestParams
    ) -> ModelResponse:
        nonlocal asked
        asked += 1
        if asked > 1:
            asked_again.set()
        return ModelResponse("", tool_calls=(ToolCall(f"w{asked}", "wait", {"seconds": 1.5}),))

    async with running_app(tmp_path, FunctionModel(hans), lease_seconds=0.6) as hansa:
        cid = await hansa.conversation()
        posted = await hansa.post(cid, "Hold on for a moment please")
        tid = posted["turnId"]
        await hansa.follow(cid, lambda e: e["type"] == "tool_call", after=posted["seq"])
        cancelled = await hansa.ok("POST", f"/api/turns/{tid}/cancel")
        # had the worker gone on, the 1.5 s wait would have answered and the model been
        # asked again well within 3 s
        with anyio.move_on_after(3):
            await asked_again.wait()
        events = await hansa.follow(
            cid, lambda e: e["type"] == "done" and e["turnId"] == tid, after=posted["seq"]
        )
        log = await hansa.ok("GET", f"/api/conversations/{cid}/timeline")

    assert cancelled["status"] == "cancelled"
    assert asked == 1, "the model was not asked again after the cancel"
    mine = [e["type"] for e in events if e["turnId"] == tid]
    assert mine[-3:] == ["tool_call", "tool_result", "done"]
    assert log[-1]["kind"] == "done", "nothing of the turn was written after its done"
