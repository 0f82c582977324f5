"""AnthropicModel through the official SDK against a fake Messages API on 127.0.0.1."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from hansa import errors
from hansa.models.anthropic import AnthropicModel
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
from unit.models.fake_api import FakeAPI, Reply, serving

MODEL = "claude-sonnet-4-6"
MESSAGES = [
    ChatMessage("system", "You are Hans. Answer briefly."),
    ChatMessage("user", "Name three colours of the rainbow."),
]
SETTINGS = ModelSettings(temperature=0.0, max_tokens=48)
WEBHOOK = ToolDefinition(
    "webhook.call",
    "Call an outside HTTP endpoint.",
    {"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]},
)
WAIT = ToolDefinition("wait", "Wait a number of seconds.", {"type": "object", "properties": {}})


def _message(
    content: list[dict[str, Any]], *, input_tokens: int = 21, output_tokens: int = 7
) -> Any:
    return {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": f"{MODEL}-20260217",
        "content": content,
        "stop_reason": "tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
    }


def _stream(*blocks: tuple[dict[str, Any], list[dict[str, Any]]]) -> Reply:
    """An SSE reply: message_start, each block with its deltas, message_delta, message_stop."""
    events: list[tuple[str | None, Any]] = [
        ("message_start", {"type": "message_start", "message": _message([], output_tokens=1)}),
        ("ping", {"type": "ping"}),
    ]
    for index, (block, deltas) in enumerate(blocks):
        events.append(
            (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": block},
            )
        )
        for delta in deltas:
            events.append(
                (
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": delta},
                )
            )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    events += [
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": 15},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return Reply(events=events)


def _text(*pieces: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    return {"type": "text", "text": ""}, [{"type": "text_delta", "text": p} for p in pieces]


def _tool_use(
    call_id: str, name: str, *json_pieces: str
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    block = {"type": "tool_use", "id": call_id, "name": name, "input": {}}
    return block, [{"type": "input_json_delta", "partial_json": p} for p in json_pieces]


@pytest.fixture
def api() -> Iterator[FakeAPI]:
    with serving() as api:
        yield api


@pytest.fixture
async def model(api: FakeAPI) -> AsyncIterator[AnthropicModel]:
    """A model on the fake API; no retries, so an error shows at once."""
    model = AnthropicModel(MODEL, api_key="sk-ant-test", base_url=api.url, max_retries=0)
    try:
        yield model
    finally:
        await model.aclose()


async def _items(model: AnthropicModel, params: RequestParams) -> list[StreamItem]:
    return [item async for item in model.stream_items(MESSAGES, SETTINGS, params)]


@pytest.mark.anyio
async def test_request_sends_the_system_prompt_apart_and_returns_text_and_usage(
    api: FakeAPI, model: AnthropicModel
) -> None:
    api.reply(Reply(body=_message([{"type": "text", "text": "Red, green and blue."}])))

    reply = await model.request(MESSAGES, SETTINGS, RequestParams())

    assert reply == ModelResponse(
        text="Red, green and blue.",
        usage=Usage(prompt_tokens=21, completion_tokens=7),
        model=f"{MODEL}-20260217",
    )
    (sent,) = api.requests
    assert sent.path == "/v1/messages"
    assert "sk-ant-test" in (sent.headers.get("x-api-key") or sent.headers["authorization"])
    assert sent.body == {
        "model": MODEL,
        "system": "You are Hans. Answer briefly.",
        "messages": [{"role": "user", "content": "Name three colours of the rainbow."}],
        "max_tokens": 48,
    }


@pytest.mark.anyio
async def test_stream_yields_text_deltas_then_the_whole_text_with_usage(
    api: FakeAPI, model: AnthropicModel
) -> None:
    api.reply(_stream(_text("Red, ", "green ", "and blue.")))

    *deltas, final = [item async for item in model.stream(MESSAGES, SETTINGS, RequestParams())]

    assert deltas == [TextDelta("Red, "), TextDelta("green "), TextDelta("and blue.")]
    assert final == ModelResponse(
        text="Red, green and blue.",
        usage=Usage(prompt_tokens=21, completion_tokens=15),
        model=f"{MODEL}-20260217",
    )
    assert api.last_body["stream"] is True


@pytest.mark.anyio
async def test_http_error_status_becomes_provider_http_error(
    api: FakeAPI, model: AnthropicModel
) -> None:
    error = {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": "bad max_tokens"},
    }
    api.reply(Reply(status=400, body=error), Reply(status=400, body=error))

    with pytest.raises(errors.ProviderHTTPError) as info:
        await model.request(MESSAGES, SETTINGS, RequestParams())
    with pytest.raises(errors.ProviderHTTPError) as streamed:
        await _items(model, RequestParams())

    assert info.value.status == streamed.value.status == 400
    assert "bad max_tokens" in info.value.body and "bad max_tokens" in streamed.value.body


@pytest.mark.anyio
async def test_an_error_event_mid_stream_is_a_provider_error_not_an_http_one(
    api: FakeAPI, model: AnthropicModel
) -> None:
    overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    start = _stream(_text("Red")).events or []
    api.reply(Reply(events=[*start[:4], ("error", overloaded)]))

    with pytest.raises(errors.ProviderError, match="mid-stream.*overloaded_error") as info:
        await _items(model, RequestParams())

    assert not isinstance(info.value, errors.ProviderHTTPError)


@pytest.mark.anyio
async def test_closed_port_is_a_provider_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    model = AnthropicModel(MODEL, api_key="k", base_url=f"http://127.0.0.1:{port}", max_retries=0)
    try:
        with pytest.raises(errors.ProviderError, match="cannot reach") as info:
            await model.request(MESSAGES, SETTINGS, RequestParams())
    finally:
        await model.aclose()

    assert not isinstance(info.value, errors.ProviderHTTPError)


@pytest.mark.anyio
async def test_a_tool_call_comes_back_under_the_tools_own_name(
    api: FakeAPI, model: AnthropicModel
) -> None:
    content = [
        {"type": "text", "text": "Let me call it."},
        {
            "type": "tool_use",
            "id": "toolu_1",
            "name": "webhook_call",
            "input": {"url": "https://x.test"},
        },
    ]
    api.reply(Reply(body=_message(content)))

    reply = await model.request(MESSAGES, SETTINGS, RequestParams(tools=(WEBHOOK, WAIT)))

    assert reply.text == "Let me call it."
    assert reply.tool_calls == (ToolCall("toolu_1", "webhook.call", {"url": "https://x.test"}),)
    assert api.last_body["tools"] == [
        {
            "name": "webhook_call",
            "description": "Call an outside HTTP endpoint.",
            "input_schema": WEBHOOK.parameters,
        },
        {
            "name": "wait",
            "description": "Wait a number of seconds.",
            "input_schema": WAIT.parameters,
        },
    ]
    assert api.last_body["tool_choice"] == {"type": "auto"}


@pytest.mark.anyio
async def test_streamed_tool_input_is_assembled_and_each_call_yielded_when_its_block_ends(
    api: FakeAPI, model: AnthropicModel
) -> None:
    api.reply(
        _stream(
            _text("Calling."),
            _tool_use("toolu_1", "webhook_call", '{"url": "https:', '//x.test"}'),
            _tool_use("toolu_2", "wait"),
        )
    )
    params = RequestParams(tools=(WEBHOOK, WAIT), tool_choice="required")

    items = await _items(model, params)

    first = ToolCall("toolu_1", "webhook.call", {"url": "https://x.test"})
    second = ToolCall("toolu_2", "wait", {})
    assert items[:3] == [TextDelta("Calling."), first, second]
    final = items[3]
    assert isinstance(final, ModelResponse) and len(items) == 4
    assert (final.text, final.tool_calls) == ("Calling.", (first, second))
    assert final.usage == Usage(prompt_tokens=21, completion_tokens=15)
    assert api.last_body["tool_choice"] == {"type": "any"}


@pytest.mark.anyio
async def test_text_stream_leaves_tool_calls_to_the_final_response(
    api: FakeAPI, model: AnthropicModel
) -> None:
    api.reply(_stream(_tool_use("toolu_1", "wait", "{}")))
    params = RequestParams(tools=(WAIT,), tool_choice=UseTool("wait"))

    items = [item async for item in model.stream(MESSAGES, SETTINGS, params)]

    assert items == [
        ModelResponse(
            text="",
            usage=Usage(prompt_tokens=21, completion_tokens=15),
            model=f"{MODEL}-20260217",
            tool_calls=(ToolCall("toolu_1", "wait", {}),),
        )
    ]
    assert api.last_body["tool_choice"] == {"type": "tool", "name": "wait"}


@pytest.mark.anyio
async def test_a_conversation_with_calls_and_results_is_sent_as_tool_use_and_tool_result_blocks(
    api: FakeAPI, model: AnthropicModel
) -> None:
    api.reply(Reply(body=_message([{"type": "text", "text": "Done."}])))
    calls = [
        ToolCall("toolu_1", "webhook.call", {"url": "https://x.test"}),
        ToolCall("toolu_2", "wait", {}),
    ]
    conversation = [
        *MESSAGES,
        ChatMessage.calling(calls, "Calling both."),
        ChatMessage.tool_result("toolu_1", '{"status": 200}'),
        ChatMessage.tool_result("toolu_2", "timed out", is_error=True),
    ]

    reply = await model.request(conversation, SETTINGS, RequestParams(tools=(WEBHOOK, WAIT)))

    assert reply.text == "Done."
    assert api.last_body["messages"][1:] == [
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Calling both."},
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "webhook_call",
                    "input": {"url": "https://x.test"},
                },
                {"type": "tool_use", "id": "toolu_2", "name": "wait", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": '{"status": 200}'},
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_2",
                    "content": "timed out",
                    "is_error": True,
                },
            ],
        },
    ]


@pytest.mark.anyio
async def test_structured_output_asks_for_the_json_schema(
    api: FakeAPI, model: AnthropicModel
) -> None:
    schema = {"type": "object", "properties": {"agent": {"type": "string"}}, "required": ["agent"]}
    api.reply(Reply(body=_message([{"type": "text", "text": '{"agent": "chief"}'}])))

    reply = await model.request(
        MESSAGES, SETTINGS, RequestParams(output_schema=schema, purpose="route")
    )

    assert reply.text == '{"agent": "chief"}'
    assert api.last_body["output_config"] == {"format": {"type": "json_schema", "schema": schema}}


def test_a_missing_key_is_a_config_error_when_the_model_is_built() -> None:
    with pytest.raises(errors.ConfigError, match="ANTHROPIC_API_KEY"):
        AnthropicModel(MODEL, api_key=None)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("claude-sonnet-4-5", 3.00 + 15.00),
        ("claude-sonnet-4-5-20250929", 3.00 + 15.00),
        ("claude-haiku-4-5", 1.00 + 5.00),
        ("claude-opus-4-1", 15.00 + 75.00),
        ("claude-3-5-haiku-latest", 0.80 + 4.00),
        ("claude-opus-4-20250514", 15.00 + 75.00),
        ("claude-opus-9", 0.0),
        ("claude-sonnet-4-5-preview", 0.0),
    ],
)
def test_cost_of_a_million_tokens_each_way(name: str, expected: float) -> None:
    usage = Usage(prompt_tokens=1_000_000, completion_tokens=1_000_000)

    assert AnthropicModel(name, api_key="k").cost_usd(usage) == pytest.approx(expected)
