"""OpenTelemetry spans of a turn (issue 13 item 8): turn → stages → the agent's invocation →
the tool it ran and its model calls, named and described by the GenAI semantic conventions
(``invoke_agent``, ``execute_tool``, ``chat``; issue 33 item 9)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from hansa import tracing
from hansa.models.base import (
    ChatMessage,
    ModelResponse,
    ModelSettings,
    RequestParams,
    ToolCall,
    Usage,
)
from hansa.models.function import FunctionModel
from inprocess.asgi import running_app, said

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

ANSWER = "The ticket is filed."


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.use(provider)
    try:
        yield exporter
    finally:
        tracing.use(None)


def _named(found: tuple[ReadableSpan, ...], prefix: str) -> list[ReadableSpan]:
    return [s for s in found if s.name.startswith(prefix)]


async def test_a_turn_is_traced_from_its_stages_to_its_tool_and_model_calls(
    tmp_path: Path, spans: InMemorySpanExporter
) -> None:
    asked: list[int] = []

    def hans(messages: list[ChatMessage], s: ModelSettings, p: RequestParams) -> ModelResponse:
        asked.append(len(messages))
        usage = Usage(prompt_tokens=40 + len(asked), completion_tokens=7)
        if len(asked) == 1:
            ticket = {"title": "Fix the FAQ", "priority": "high"}
            calls = (ToolCall("t1", "create_ticket", ticket),)
            return ModelResponse("", usage=usage, tool_calls=calls)
        return ModelResponse(ANSWER, usage=usage)

    async with running_app(tmp_path, FunctionModel(hans, model_name="hans-test")) as hansa:
        cid = await hansa.conversation()
        events = await hansa.turn(cid, "Please file a ticket for the FAQ")
        calls = await hansa.ok("GET", "/api/llm-calls", params={"conversationId": cid})
    found = spans.get_finished_spans()

    assert said(events) == [ANSWER]
    (turn,) = _named(found, "hansa.turn")
    assert turn.parent is None and turn.attributes is not None
    assert turn.attributes["hansa.conversation_id"] == cid
    stages = sorted(_named(found, "hansa.stage "), key=lambda s: s.start_time or 0)
    assert stages and all(s.parent and s.parent.span_id == turn.context.span_id for s in stages)
    names = [s.name.removeprefix("hansa.stage ") for s in stages]
    assert names[0] == "validate" and "route" in names and names[-1] == "finalize"
    stage_ids = {s.context.span_id: s.name for s in stages}
    (agent,) = _named(found, "invoke_agent chief")
    assert agent.parent is not None and stage_ids[agent.parent.span_id] == "hansa.stage reply"
    assert agent.attributes is not None and agent.attributes["gen_ai.agent.id"] == "chief"
    assert agent.attributes["gen_ai.conversation.id"] == cid
    (task,) = _named(found, "execute_tool create_ticket")
    assert task.parent is not None and task.parent.span_id == agent.context.span_id
    assert task.attributes is not None and task.attributes["hansa.agent_id"] == "chief"
    assert task.attributes["gen_ai.tool.name"] == "create_ticket"
    model_spans = _named(found, "chat hans-test")
    assert len(model_spans) == len(calls) == 2
    for span, call in zip(
        sorted(model_spans, key=lambda s: s.start_time or 0),
        sorted(calls, key=lambda c: c["createdAt"]),
        strict=True,
    ):
        attrs = span.attributes or {}
        assert span.parent is not None and span.parent.span_id == agent.context.span_id
        assert attrs["gen_ai.operation.name"] == "chat"
        assert attrs["gen_ai.provider.name"] == "function"
        assert attrs["gen_ai.request.model"] == attrs["gen_ai.response.model"] == "hans-test"
        assert attrs["gen_ai.usage.input_tokens"] == call["promptTokens"]
        assert attrs["gen_ai.usage.output_tokens"] == call["completionTokens"] == 7
    traced = [*stages, agent, task, *model_spans]
    assert all(s.context.trace_id == turn.context.trace_id for s in traced)


async def test_a_failing_model_call_marks_its_span(
    tmp_path: Path, spans: InMemorySpanExporter
) -> None:
    def broken(messages: list[ChatMessage], s: ModelSettings, p: RequestParams) -> ModelResponse:
        raise RuntimeError("the provider is down")

    async with running_app(tmp_path, FunctionModel(broken, model_name="down")) as hansa:
        cid = await hansa.conversation()
        await hansa.turn(cid, "Good morning!")
    (failed, *_) = _named(spans.get_finished_spans(), "chat down")

    assert failed.status.status_code.name == "ERROR"
    assert failed.attributes is not None and failed.attributes["error.type"]
