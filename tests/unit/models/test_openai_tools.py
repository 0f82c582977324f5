"""OpenAIModel's function calling, against a fake Chat Completions API on 127.0.0.1.

The real llama_cpp.server (test_openai.py) has no dependable tool calling for a
135M model, so the wire format is played here, chunk by chunk.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from hansa import errors
from hansa.models.base import (
    ChatMessage,
    ModelResponse,
    ModelSettings,
    RequestParams,
    StreamItem,
    TextDelta,
    ToolCall,
    ToolDefinition,
    Usage,
    UseTool,
)
from hansa.models.openai import OpenAIModel
from unit.models.fake_api import FakeAPI, Reply, serving
from unit.models.fake_api import openai_chunk as _chunk

MESSAGES = [
    ChatMessage("system", "You are Hans."),
    ChatMessage("user", "Ping the hook, then wait."),
]
SETTINGS = ModelSettings(temperature=0.0, max_tokens=64)
WEBHOOK = ToolDefinition(
    "webhook.call",
    "Call an outside HTTP endpoint.",
    {"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]},
)
WAIT = ToolDefinition(
    "wait",
    "Wait a number of seconds.",
    {"type": "object", "properties": {"seconds": {"type": "number"}}},
)
TOOLS = RequestParams(tools=(WEBHOOK, WAIT))


def _completion(message: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "gpt-4o-mini-2024-07-18",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": message}],
        "usage": {"prompt_tokens": 30, "completion_tokens": 12, "total_tokens": 42},
    }


def _call_delta(index: int, **fields: Any) -> dict[str, Any]:
    return {"tool_calls": [{"index": index, **fields}]}


@pytest.fixture
def api() -> Iterator[FakeAPI]:
    with serving() as api:
        yield api


@pytest.fixture
async def model(api: FakeAPI) -> AsyncIterator[OpenAIModel]:
    model = OpenAIModel("gpt-4o-mini", base_url=f"{api.url}/v1", api_key="sk-test", max_retries=0)
    try:
        yield model
    finally:
        await model.aclose()


@pytest.mark.anyio
async def test_request_offers_functions_and_decodes_the_calls(
    api: FakeAPI, model: OpenAIModel
) -> None:
    calls = [
        {
            "id": "call_a",
            "type": "function",
            "function": {"name": "webhook_call", "arguments": '{"url": "https://x.test"}'},
        },
        {"id": "call_b", "type": "function", "function": {"name": "wait", "arguments": "{}"}},
    ]
    api.reply(Reply(body=_completion({"role": "assistant", "content": None, "tool_calls": calls})))

    reply = await model.request(MESSAGES, SETTINGS, TOOLS)

    assert reply == ModelResponse(
        text="",
        usage=Usage(prompt_tokens=30, completion_tokens=12),
        model="gpt-4o-mini-2024-07-18",
        tool_calls=(
            ToolCall("call_a", "webhook.call", {"url": "https://x.test"}),
            ToolCall("call_b", "wait", {}),
        ),
    )
    sent = api.last_body
    assert sent["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "webhook_call",
                "description": "Call an outside HTTP endpoint.",
                "parameters": WEBHOOK.parameters,
            },
        },
        {
            "type": "function",
            "function": {
                "name": "wait",
                "description": "Wait a number of seconds.",
                "parameters": WAIT.parameters,
            },
        },
    ]
    assert sent["tool_choice"] == "auto"


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("choice", "sent"),
    [
        ("required", "required"),
        ("none", "none"),
        (UseTool("webhook.call"), {"type": "function", "function": {"name": "webhook_call"}}),
    ],
)
async def test_tool_choice_on_the_wire(
    api: FakeAPI, model: OpenAIModel, choice: Any, sent: Any
) -> None:
    api.reply(Reply(body=_completion({"role": "assistant", "content": "ok"})))

    await model.request(
        MESSAGES, SETTINGS, RequestParams(tools=(WEBHOOK, WAIT), tool_choice=choice)
    )

    assert api.last_body["tool_choice"] == sent


@pytest.mark.anyio
async def test_streamed_call_deltas_are_assembled_and_each_call_yielded_once_whole(
    api: FakeAPI, model: OpenAIModel
) -> None:
    api.reply(
        Reply(
            events=[
                (None, _chunk({"role": "assistant", "content": "On it."})),
                (
                    None,
                    _chunk(
                        _call_delta(
                            0,
                            id="call_a",
                            type="function",
                            function={"name": "webhook_call", "arguments": ""},
                        )
                    ),
                ),
                (None, _chunk(_call_delta(0, function={"arguments": '{"url": "ht'}))),
                (None, _chunk(_call_delta(0, function={"arguments": 'tps://x.test"}'}))),
                (
                    None,
                    _chunk(
                        _call_delta(
                            1,
                            id="call_b",
                            type="function",
                            function={"name": "wait", "arguments": '{"seconds"'},
                        )
                    ),
                ),
                (None, _chunk(_call_delta(1, function={"arguments": ": 2}"}))),
                (None, _chunk({}, finish="tool_calls")),
                (
                    None,
                    {
                        **_chunk({}),
                        "choices": [],
                        "usage": {"prompt_tokens": 30, "completion_tokens": 12, "total_tokens": 42},
                    },
                ),
                (None, "[DONE]"),
            ]
        )
    )

    items: list[StreamItem] = [item async for item in model.stream_items(MESSAGES, SETTINGS, TOOLS)]

    first = ToolCall("call_a", "webhook.call", {"url": "https://x.test"})
    second = ToolCall("call_b", "wait", {"seconds": 2})
    assert items == [
        TextDelta("On it."),
        first,
        second,
        ModelResponse(
            text="On it.",
            usage=Usage(prompt_tokens=30, completion_tokens=12),
            model="gpt-4o-mini-2024-07-18",
            tool_calls=(first, second),
        ),
    ]
    assert api.last_body["stream"] is True and api.last_body["tools"]


@pytest.mark.anyio
async def test_arguments_that_are_not_a_json_object_are_a_provider_error(
    api: FakeAPI, model: OpenAIModel
) -> None:
    bad = [
        {
            "id": "call_a",
            "type": "function",
            "function": {"name": "wait", "arguments": '{"seconds": '},
        }
    ]
    api.reply(Reply(body=_completion({"role": "assistant", "content": None, "tool_calls": bad})))

    with pytest.raises(errors.ProviderError, match="arguments for the tool 'wait' are not JSON"):
        await model.request(MESSAGES, SETTINGS, TOOLS)


@pytest.mark.anyio
async def test_a_conversation_with_calls_and_results_goes_out_as_tool_messages(
    api: FakeAPI, model: OpenAIModel
) -> None:
    api.reply(Reply(body=_completion({"role": "assistant", "content": "Done."})))
    conversation = [
        *MESSAGES,
        ChatMessage.calling([ToolCall("call_a", "webhook.call", {"url": "https://x.test"})]),
        ChatMessage.tool_result("call_a", '{"status": 200}'),
    ]

    reply = await model.request(conversation, SETTINGS, TOOLS)

    assert reply.text == "Done." and reply.tool_calls == ()
    assert api.last_body["messages"][2:] == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_a",
                    "type": "function",
                    "function": {
                        "name": "webhook_call",
                        "arguments": json.dumps({"url": "https://x.test"}),
                    },
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_a", "content": '{"status": 200}'},
    ]


@pytest.mark.anyio
async def test_without_tools_the_request_is_as_before(api: FakeAPI, model: OpenAIModel) -> None:
    api.reply(Reply(body=_completion({"role": "assistant", "content": "Pong."})))

    reply = await model.request(MESSAGES, SETTINGS, RequestParams())

    assert (reply.text, reply.tool_calls) == ("Pong.", ())
    assert api.last_body == {
        "model": "gpt-4o-mini",
        "messages": [
            {"role": "system", "content": "You are Hans."},
            {"role": "user", "content": "Ping the hook, then wait."},
        ],
        "temperature": 0.0,
        "max_tokens": 64,
    }


def test_without_a_key_only_an_explicit_base_url_builds() -> None:
    with pytest.raises(errors.ConfigError, match="OPENAI_API_KEY"):
        OpenAIModel("gpt-4o-mini")

    assert OpenAIModel("smollm2", base_url="http://127.0.0.1:9/v1").model_name == "smollm2"
