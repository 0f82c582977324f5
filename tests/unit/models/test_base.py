"""The Model protocol's values: messages with tool calls and results, tool parameters."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from hansa.models.base import (
    ChatMessage,
    Model,
    ModelResponse,
    ModelSettings,
    RequestParams,
    StreamItem,
    TextDelta,
    ToolCall,
    ToolDefinition,
    UseTool,
)

WAIT = ToolDefinition("wait", "Wait a number of seconds.", {"type": "object"})
CALL = ToolCall("call_1", "wait", {"seconds": 1})


def test_a_plain_message_is_still_role_and_content() -> None:
    message = ChatMessage("user", "Hello")

    assert (message.role, message.content) == ("user", "Hello")
    assert (message.tool_calls, message.tool_call_id, message.is_error) == ((), None, False)


def test_an_assistant_message_carries_its_calls_and_a_tool_message_answers_one() -> None:
    calling = ChatMessage.calling([CALL])
    result = ChatMessage.tool_result("call_1", "timed out", is_error=True)

    assert (calling.role, calling.content, calling.tool_calls) == ("assistant", "", (CALL,))
    assert (result.role, result.tool_call_id, result.is_error) == ("tool", "call_1", True)


@pytest.mark.parametrize(
    ("build", "complaint"),
    [
        (lambda: ChatMessage("tool", "ok"), "tool_call_id"),
        (lambda: ChatMessage("user", "ok", tool_call_id="call_1"), "tool_call_id"),
        (lambda: ChatMessage("user", "", tool_calls=(CALL,)), "only an assistant"),
        (lambda: ChatMessage("assistant", "no", is_error=True), "only a tool message"),
    ],
)
def test_malformed_messages_are_refused(build: object, complaint: str) -> None:
    with pytest.raises(ValueError, match=complaint):
        build()  # type: ignore[operator]


def test_tools_are_off_by_default_and_a_choice_must_name_an_offered_tool() -> None:
    assert RequestParams().tools == () and not RequestParams().offers_tools
    assert RequestParams(tools=(WAIT,)).offers_tools
    assert not RequestParams(tools=(WAIT,), tool_choice="none").offers_tools

    with pytest.raises(ValueError, match="'sleep', not among"):
        RequestParams(tools=(WAIT,), tool_choice=UseTool("sleep"))
    with pytest.raises(ValueError, match="needs tools"):
        RequestParams(tool_choice="required")
    with pytest.raises(ValueError, match="unique"):
        RequestParams(tools=(WAIT, WAIT))


class _Streaming(Model):
    async def request(
        self, messages: list[ChatMessage], settings: ModelSettings, params: RequestParams
    ) -> ModelResponse:
        raise NotImplementedError

    async def stream_items(
        self, messages: list[ChatMessage], settings: ModelSettings, params: RequestParams
    ) -> AsyncIterator[StreamItem]:
        yield TextDelta("Waiting.")
        yield CALL
        yield ModelResponse("Waiting.", tool_calls=(CALL,))


class _RequestOnly(Model):
    async def request(
        self, messages: list[ChatMessage], settings: ModelSettings, params: RequestParams
    ) -> ModelResponse:
        return ModelResponse("whole")


@pytest.mark.anyio
async def test_stream_is_stream_items_without_the_calls_which_wait_in_the_response() -> None:
    items = [i async for i in _Streaming().stream([], ModelSettings(), RequestParams())]

    assert items == [TextDelta("Waiting."), ModelResponse("Waiting.", tool_calls=(CALL,))]


@pytest.mark.anyio
async def test_a_model_that_does_not_stream_says_which_it_is() -> None:
    with pytest.raises(NotImplementedError, match="_RequestOnly"):
        async for _ in _RequestOnly().stream([], ModelSettings(), RequestParams()):
            pytest.fail("no item expected")
