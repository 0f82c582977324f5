from __future__ import annotations

import json
from pathlib import Path

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
)
from hansa.models.scripted import (
    CALLS_KEPT,
    ScriptedModel,
    ScriptStep,
    ScriptToolCall,
    default_reply,
)

MESSAGES = [
    ChatMessage("system", "You are the chief of staff."),
    ChatMessage("user", "Plan the   launch\nof the beta"),
]
SETTINGS = ModelSettings()
REPLY = RequestParams()


@pytest.mark.anyio
async def test_default_reply_is_deterministic_and_echoes_the_request() -> None:
    model = ScriptedModel()

    first = await model.request(MESSAGES, SETTINGS, REPLY)
    second = await ScriptedModel().request(MESSAGES, SETTINGS, REPLY)

    assert first.text == second.text == default_reply(MESSAGES)
    assert '"Plan the launch of the beta"' in first.text
    assert first.model == "scripted"
    assert first.usage.prompt_tokens == 12
    assert first.usage.completion_tokens == len(first.text.split())
    assert list(model.calls) == [MESSAGES]
    assert model.remaining == 0


def test_default_reply_without_user_message_is_still_a_reply() -> None:
    reply = default_reply([ChatMessage("system", "hi")])

    assert reply.startswith('Here is how I would approach ""')


@pytest.mark.anyio
async def test_script_replays_steps_in_order() -> None:
    model = ScriptedModel(
        [ScriptStep(text="first"), ScriptStep(text='{"agent": "chief"}', purpose="route")]
    )

    one = await model.request(MESSAGES, SETTINGS, REPLY)
    assert model.remaining == 1
    two = await model.request(MESSAGES, SETTINGS, RequestParams(purpose="route"))

    assert [one.text, two.text] == ["first", '{"agent": "chief"}']
    assert one.model == "scripted-script"
    assert model.remaining == 0


@pytest.mark.anyio
async def test_purpose_mismatch_raises_and_keeps_the_step() -> None:
    model = ScriptedModel([ScriptStep(text="plan", purpose="plan")])

    with pytest.raises(errors.ScriptExhausted, match="expected a plan call, got a reply call"):
        await model.request(MESSAGES, SETTINGS, REPLY)
    assert model.remaining == 1


@pytest.mark.anyio
async def test_exhausted_script_raises() -> None:
    model = ScriptedModel([ScriptStep(text="only")])
    await model.request(MESSAGES, SETTINGS, REPLY)

    with pytest.raises(errors.ScriptExhausted, match="no step left for a reply"):
        await model.request(MESSAGES, SETTINGS, REPLY)


@pytest.mark.anyio
async def test_error_step_raises_provider_error_and_is_consumed() -> None:
    model = ScriptedModel([ScriptStep(error="rate limited"), ScriptStep(text="recovered")])

    with pytest.raises(errors.ProviderError, match="rate limited"):
        await model.request(MESSAGES, SETTINGS, REPLY)
    assert (await model.request(MESSAGES, SETTINGS, REPLY)).text == "recovered"


@pytest.mark.anyio
async def test_stream_chunks_concatenate_to_the_final_text() -> None:
    model = ScriptedModel(chunk_chars=5)

    items = [item async for item in model.stream(MESSAGES, SETTINGS, REPLY)]

    *deltas, final = items
    assert isinstance(final, ModelResponse)
    assert deltas and all(isinstance(d, TextDelta) and 0 < len(d.text) <= 5 for d in deltas)
    assert "".join(d.text for d in deltas if isinstance(d, TextDelta)) == final.text
    assert final.text == default_reply(MESSAGES)


@pytest.mark.anyio
async def test_stream_of_error_step_raises_before_any_delta() -> None:
    model = ScriptedModel([ScriptStep(error="boom")])

    with pytest.raises(errors.ProviderError, match="boom"):
        async for _ in model.stream(MESSAGES, SETTINGS, REPLY):
            pytest.fail("no item expected")


@pytest.mark.anyio
async def test_from_file_loads_a_script(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"text": "hello", "purpose": "reply"}]))

    model = ScriptedModel.from_file(script)

    assert (await model.request(MESSAGES, SETTINGS, REPLY)).text == "hello"


@pytest.mark.parametrize("content", [None, "not json", '[{"text": 3}]'])
def test_from_file_rejects_missing_or_bad_scripts(tmp_path: Path, content: str | None) -> None:
    script = tmp_path / "script.json"
    if content is not None:
        script.write_text(content)

    with pytest.raises(errors.ConfigError, match="cannot read model script"):
        ScriptedModel.from_file(script)


WEBHOOK = ToolDefinition("webhook.call", "Call an outside HTTP endpoint.", {"type": "object"})
WITH_TOOLS = RequestParams(tools=(WEBHOOK,))


@pytest.mark.anyio
async def test_a_step_with_tool_calls_asks_for_them_with_ids_counted_across_the_script() -> None:
    model = ScriptedModel(
        [
            ScriptStep(tool_calls=[ScriptToolCall(name="webhook.call", arguments={"url": "u"})]),
            ScriptStep(
                text="Calling again.",
                tool_calls=[
                    ScriptToolCall(name="webhook.call", id="mine"),
                    ScriptToolCall(name="webhook.call"),
                ],
            ),
        ]
    )

    first = await model.request(MESSAGES, SETTINGS, WITH_TOOLS)
    second = await model.request(MESSAGES, SETTINGS, WITH_TOOLS)

    assert (first.text, first.tool_calls) == (
        "",
        (ToolCall("call_1", "webhook.call", {"url": "u"}),),
    )
    assert second.text == "Calling again."
    assert [c.id for c in second.tool_calls] == ["mine", "call_3"]


@pytest.mark.anyio
async def test_stream_items_yield_the_text_then_the_calls_and_stream_keeps_them_for_the_end() -> (
    None
):
    call = ScriptToolCall(name="webhook.call", arguments={"url": "u"})
    model = ScriptedModel(
        [
            ScriptStep(text="On it.", tool_calls=[call]),
            ScriptStep(text="On it.", tool_calls=[call]),
        ],
        chunk_chars=3,
    )

    items = [item async for item in model.stream_items(MESSAGES, SETTINGS, WITH_TOOLS)]
    text_only = [item async for item in model.stream(MESSAGES, SETTINGS, WITH_TOOLS)]

    expected = ToolCall("call_1", "webhook.call", {"url": "u"})
    assert items[:3] == [TextDelta("On "), TextDelta("it."), expected]
    assert isinstance(items[3], ModelResponse) and items[3].tool_calls == (expected,)
    assert [type(i) for i in text_only] == [TextDelta, TextDelta, ModelResponse]
    final = text_only[-1]
    assert isinstance(final, ModelResponse) and final.tool_calls[0].name == "webhook.call"


@pytest.mark.anyio
@pytest.mark.parametrize(
    "params",
    [REPLY, RequestParams(tools=(WEBHOOK,), tool_choice="none")],
    ids=["no tools", "tool_choice none"],
)
async def test_a_step_calling_a_tool_the_call_did_not_offer_fails_loudly(
    params: RequestParams,
) -> None:
    model = ScriptedModel([ScriptStep(tool_calls=[ScriptToolCall(name="webhook.call")])])

    with pytest.raises(errors.ScriptExhausted, match="calls the tool 'webhook.call'"):
        await model.request(MESSAGES, SETTINGS, params)
    assert model.remaining == 1


@pytest.mark.anyio
async def test_a_script_file_may_carry_tool_calls_and_still_require_the_purpose(
    tmp_path: Path,
) -> None:
    script = tmp_path / "script.json"
    steps = [
        {"purpose": "reply", "toolCalls": [{"name": "webhook.call", "arguments": {"url": "u"}}]}
    ]
    script.write_text(json.dumps(steps))
    model = ScriptedModel.from_file(script)

    with pytest.raises(errors.ScriptExhausted, match="expected a reply call, got a plan call"):
        await model.request(MESSAGES, SETTINGS, RequestParams(tools=(WEBHOOK,), purpose="plan"))
    reply = await model.request(MESSAGES, SETTINGS, WITH_TOOLS)

    assert reply.tool_calls == (ToolCall("call_1", "webhook.call", {"url": "u"}),)


@pytest.mark.anyio
async def test_a_long_lived_scripted_model_keeps_only_its_newest_prompts() -> None:
    model = ScriptedModel()
    prompts = [[ChatMessage("user", f"question {i}")] for i in range(CALLS_KEPT * 3)]

    for prompt in prompts:
        await model.request(prompt, SETTINGS, REPLY)

    assert len(model.calls) == CALLS_KEPT
    assert list(model.calls) == prompts[-CALLS_KEPT:]
