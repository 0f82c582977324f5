from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from pathlib import Path

import anyio
import pytest
from pydantic import BaseModel

from hansa import errors
from hansa.models.base import (
    ChatMessage,
    ModelResponse,
    ModelSettings,
    RequestParams,
    StreamItem,
    TextDelta,
    ToolCall,
    ToolChoice,
    ToolDefinition,
    UseTool,
)
from hansa.models.local import LocalModel, gguf_path

MESSAGES = [
    ChatMessage("system", "You are a helpful assistant. Answer briefly."),
    ChatMessage("user", "Name three colours of the rainbow."),
]
SETTINGS = ModelSettings(temperature=0.0, max_tokens=48)
SUMMARY_SCHEMA = {
    "type": "object",
    "properties": {"summary": {"type": "string", "maxLength": 80}},
    "required": ["summary"],
    "additionalProperties": False,
}
ROUTE_SCHEMA = {
    "type": "object",
    "properties": {"agent": {"type": "string", "enum": ["chief", "growthLead"]}},
    "required": ["agent"],
}


@pytest.fixture(scope="module")
def model() -> LocalModel:
    """One model for the module: the weights load on its first call."""
    return LocalModel()


@pytest.mark.slow
@pytest.mark.anyio
async def test_streams_a_reply_and_answers_with_schema_constrained_json(model: LocalModel) -> None:
    items: list[StreamItem] = [
        item async for item in model.stream(MESSAGES, SETTINGS, RequestParams())
    ]

    *deltas, final = items
    assert deltas and all(isinstance(d, TextDelta) for d in deltas)
    assert isinstance(final, ModelResponse)
    assert final.text == "".join(d.text for d in deltas if isinstance(d, TextDelta))
    assert final.text.strip()
    assert final.usage.prompt_tokens > 0 and final.usage.completion_tokens > 0
    assert final.model == gguf_path().stem

    routed = await model.request(
        [
            ChatMessage("system", "Route the request to an agent. Answer in JSON."),
            ChatMessage("user", "Write a marketing plan for our launch."),
        ],
        ModelSettings(temperature=0.0, max_tokens=64),
        RequestParams(output_schema=ROUTE_SCHEMA, purpose="route"),
    )

    answer = json.loads(routed.text)
    assert isinstance(answer, dict) and answer["agent"] in ("chief", "growthLead")
    assert routed.usage.prompt_tokens > 0 and routed.usage.completion_tokens > 0


@pytest.mark.slow
@pytest.mark.anyio
async def test_abandoned_stream_frees_the_model_for_the_next_call(model: LocalModel) -> None:
    settings = ModelSettings(temperature=0.0, max_tokens=256)
    stream = model.stream(MESSAGES, settings, RequestParams())
    assert isinstance(stream, AsyncGenerator)
    first = await anext(stream)
    assert isinstance(first, TextDelta)
    await stream.aclose()

    with anyio.fail_after(60):
        reply = await model.request(MESSAGES, SETTINGS, RequestParams())

    assert reply.text.strip()


@pytest.mark.slow
@pytest.mark.anyio
async def test_concurrent_calls_take_turns_on_one_model(model: LocalModel) -> None:
    replies: list[str] = []

    async def ask() -> None:
        replies.append((await model.request(MESSAGES, SETTINGS, RequestParams())).text)

    async def listen() -> None:
        items = [item async for item in model.stream(MESSAGES, SETTINGS, RequestParams())]
        assert isinstance(items[-1], ModelResponse)
        replies.append(items[-1].text)

    with anyio.fail_after(120):
        async with anyio.create_task_group() as tasks:
            for job in (ask, listen, ask):
                tasks.start_soon(job)

    assert len(replies) == 3 and all(text.strip() for text in replies)


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_summary_waits_behind_a_reply_until_its_first_text(model: LocalModel) -> None:
    summary_prompt = [
        ChatMessage("system", "Summarize the conversation in JSON."),
        ChatMessage("user", "User: we sell bread.\nAssistant: Write one page per bread."),
    ]
    summary_params = RequestParams(output_schema=SUMMARY_SCHEMA, purpose="summary")
    reply_settings = ModelSettings(temperature=0.0, max_tokens=24)
    with anyio.fail_after(300):
        async with anyio.create_task_group() as tasks:
            summaries: list[ModelResponse] = []

            async def summarize() -> None:
                summaries.append(await model.request(summary_prompt, SETTINGS, summary_params))

            tasks.start_soon(summarize)  # starts once this task awaits: after the reply's start
            stream = model.stream(MESSAGES, reply_settings, RequestParams())
            assert isinstance(stream, AsyncGenerator)
            first = await anext(stream)
            assert isinstance(first, TextDelta) and first.text
            assert summaries == [], "the summary evaluated nothing before the reply's first text"
            rest = [item async for item in stream]

    assert isinstance(rest[-1], ModelResponse) and rest[-1].text.startswith(first.text)
    (summary,) = summaries
    assert isinstance(json.loads(summary.text)["summary"], str)


def test_packaged_gguf_is_found() -> None:
    path = gguf_path()

    assert path.suffix == ".gguf" and path.is_file()


def test_missing_model_path_is_a_config_error(tmp_path: Path) -> None:
    missing = tmp_path / "missing.gguf"

    with pytest.raises(errors.ConfigError, match="pip install 'hansa\\[local\\]'") as info:
        LocalModel(model_path=missing)

    assert str(missing) in str(info.value)


class _Page(BaseModel):
    title: str
    slug: str


class _CreatePage(BaseModel):
    page: _Page
    publish: bool = False


CREATE_PAGE = ToolDefinition(
    "create_page", "Create a page in the CMS.", _CreatePage.model_json_schema()
)
WEBHOOK = ToolDefinition(
    "webhook.call",
    "Call an outside HTTP endpoint.",
    {"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]},
)
ASK_FOR_PAGE = [
    ChatMessage("system", "You are a website assistant."),
    ChatMessage("user", "Create a page called Pricing."),
]
TOOL_SETTINGS = ModelSettings(temperature=0.0, max_tokens=96)


@pytest.mark.slow
@pytest.mark.anyio
@pytest.mark.parametrize("choice", ["required", UseTool("create_page")], ids=str)
async def test_a_required_tool_call_follows_the_tools_schema(
    model: LocalModel, choice: ToolChoice
) -> None:
    params = RequestParams(tools=(CREATE_PAGE, WEBHOOK), tool_choice=choice)

    reply = await model.request(ASK_FOR_PAGE, TOOL_SETTINGS, params)

    assert reply.text == ""
    (call,) = reply.tool_calls
    assert call.id.startswith("call_")
    if call.name == "create_page":  # the grammar holds the form, nested $defs included
        _CreatePage.model_validate(call.arguments)
    else:
        assert call.name == "webhook.call" and isinstance(call.arguments["url"], str)
    assert reply.usage.prompt_tokens > 0 and reply.usage.completion_tokens > 0


@pytest.mark.slow
@pytest.mark.anyio
async def test_with_tools_on_auto_the_answer_is_text_or_one_call_and_streams_whole(
    model: LocalModel,
) -> None:
    params = RequestParams(tools=(CREATE_PAGE,))

    *pieces, final = [
        item async for item in model.stream_items(ASK_FOR_PAGE, TOOL_SETTINGS, params)
    ]

    assert isinstance(final, ModelResponse)
    if final.tool_calls:
        assert pieces == list(final.tool_calls) and len(pieces) == 1
        _CreatePage.model_validate(final.tool_calls[0].arguments)
    else:
        assert pieces == ([TextDelta(final.text)] if final.text else [])


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_tool_result_in_the_conversation_is_read_and_tool_choice_none_is_plain_text(
    model: LocalModel,
) -> None:
    call = ToolCall("call_9", "create_page", {"page": {"title": "Pricing", "slug": "pricing"}})
    conversation = [
        *ASK_FOR_PAGE,
        ChatMessage.calling([call]),
        ChatMessage.tool_result("call_9", '{"url": "/pricing"}'),
    ]
    params = RequestParams(tools=(CREATE_PAGE,), tool_choice="none")

    reply = await model.request(conversation, SETTINGS, params)

    assert reply.text.strip() and reply.tool_calls == ()
