"""FunctionModel: answers from a function, streamed or whole, errors passed through."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator

import pytest

from hansa import errors
from hansa.models.base import (
    ChatMessage,
    ModelResponse,
    ModelSettings,
    RequestParams,
    TextDelta,
    ToolCall,
    ToolDefinition,
    Usage,
)
from hansa.models.function import Answer, FunctionModel

MESSAGES = [ChatMessage("system", "You are Hans."), ChatMessage("user", "Plan the beta launch")]
SETTINGS = ModelSettings(temperature=0, max_tokens=99)
PLAN = RequestParams(purpose="plan")


async def _items(model: FunctionModel, params: RequestParams = PLAN) -> list[object]:
    return [item async for item in model.stream(MESSAGES, SETTINGS, params)]


@pytest.mark.anyio
async def test_a_sync_function_answers_off_the_loop_with_what_the_call_carried() -> None:
    seen: list[tuple[list[ChatMessage], ModelSettings, RequestParams, int]] = []

    def answer(messages: list[ChatMessage], settings: ModelSettings, params: RequestParams) -> str:
        seen.append((messages, settings, params, threading.get_ident()))
        return f"a {params.purpose} answer"

    model = FunctionModel(answer)
    response = await model.request(MESSAGES, SETTINGS, PLAN)

    assert response == ModelResponse(
        text="a plan answer", usage=Usage(prompt_tokens=7, completion_tokens=3), model="answer"
    )
    ((messages, settings, params, thread),) = seen
    assert (messages, settings, params) == (MESSAGES, SETTINGS, PLAN)
    assert thread != threading.get_ident(), "a sync function may block: it runs in a thread"
    assert model.provider == "function"


@pytest.mark.anyio
async def test_an_async_function_may_return_a_whole_response_with_its_own_usage() -> None:
    async def priced(messages: list[ChatMessage], s: ModelSettings, p: RequestParams) -> Answer:
        return ModelResponse(text="{}", usage=Usage(prompt_tokens=40, completion_tokens=2))

    model = FunctionModel(priced, model_name="planner-double")
    response = await model.request(MESSAGES, SETTINGS, PLAN)

    assert response.usage == Usage(prompt_tokens=40, completion_tokens=2)
    assert response.model == "planner-double", "an unnamed response is named for the model"


@pytest.mark.anyio
async def test_without_a_stream_function_the_whole_answer_streams_as_one_delta() -> None:
    model = FunctionModel(lambda messages, settings, params: "Hello there")

    items = await _items(model)

    assert items[0] == TextDelta("Hello there")
    assert isinstance(items[1], ModelResponse) and items[1].text == "Hello there"
    assert len(items) == 2


@pytest.mark.anyio
async def test_a_stream_function_yields_its_deltas_then_the_joined_response() -> None:
    async def deltas(
        m: list[ChatMessage], s: ModelSettings, p: RequestParams
    ) -> AsyncIterator[str]:
        for piece in ("Hel", "", "lo ", "world"):
            yield piece

    model = FunctionModel(stream_function=deltas)

    *streamed, final = await _items(model)
    whole = await model.request(MESSAGES, SETTINGS, PLAN)

    assert streamed == [TextDelta("Hel"), TextDelta("lo "), TextDelta("world")], "no empty delta"
    assert isinstance(final, ModelResponse) and final.text == "Hello world"
    assert final.usage.completion_tokens == 2 and final.model == "deltas"
    assert whole.text == "Hello world", "a request joins the stream function's deltas"


@pytest.mark.anyio
async def test_a_stream_function_may_return_a_plain_list_and_wins_over_function() -> None:
    model = FunctionModel(
        lambda m, s, p: "from function", stream_function=lambda m, s, p: ["from ", "stream"]
    )

    items = await _items(model)
    whole = await model.request(MESSAGES, SETTINGS, PLAN)

    assert [i.text for i in items if isinstance(i, TextDelta)] == ["from ", "stream"]
    assert whole.text == "from function", "a whole request still asks the function"


@pytest.mark.anyio
async def test_what_the_function_raises_reaches_the_caller_before_any_delta() -> None:
    def down(messages: list[ChatMessage], settings: ModelSettings, params: RequestParams) -> str:
        raise errors.ProviderError("upstream is down")

    model = FunctionModel(down)

    with pytest.raises(errors.ProviderError, match="upstream is down"):
        await model.request(MESSAGES, SETTINGS, PLAN)
    with pytest.raises(errors.ProviderError, match="upstream is down"):
        async for _ in model.stream(MESSAGES, SETTINGS, PLAN):
            pytest.fail("no item expected")


def test_a_model_without_any_function_is_refused() -> None:
    with pytest.raises(TypeError, match="needs a function"):
        FunctionModel()


WAIT = ToolDefinition("wait", "Wait a number of seconds.", {"type": "object"})
CALL = ToolCall("call_1", "wait", {"seconds": 1})


@pytest.mark.anyio
async def test_a_function_asks_for_tools_with_a_response_that_carries_them() -> None:
    def act(messages: list[ChatMessage], settings: ModelSettings, params: RequestParams) -> Answer:
        if messages[-1].role == "tool":
            return f"The wait said {messages[-1].content}."
        return ModelResponse(text="Waiting.", tool_calls=(CALL,))

    model = FunctionModel(act)
    params = RequestParams(tools=(WAIT,))

    items = [item async for item in model.stream_items(MESSAGES, SETTINGS, params)]
    followed = [
        *MESSAGES,
        ChatMessage.calling([CALL], "Waiting."),
        ChatMessage.tool_result(CALL.id, "ok"),
    ]
    answer = await model.request(followed, SETTINGS, params)

    assert items[:2] == [TextDelta("Waiting."), CALL]
    assert isinstance(items[2], ModelResponse) and items[2].tool_calls == (CALL,)
    assert (answer.text, answer.tool_calls) == ("The wait said ok.", ())


@pytest.mark.anyio
async def test_a_stream_function_may_yield_tool_calls_among_its_text() -> None:
    model = FunctionModel(stream_function=lambda m, s, p: ["Wait", "ing.", CALL])

    items = [item async for item in model.stream_items(MESSAGES, SETTINGS, PLAN)]
    text_only = await _items(model)
    whole = await model.request(MESSAGES, SETTINGS, PLAN)

    assert items[:3] == [TextDelta("Wait"), TextDelta("ing."), CALL]
    assert text_only[:2] == [TextDelta("Wait"), TextDelta("ing.")] and len(text_only) == 3
    for response in (items[3], text_only[2], whole):
        assert isinstance(response, ModelResponse)
        assert (response.text, response.tool_calls) == ("Waiting.", (CALL,))
