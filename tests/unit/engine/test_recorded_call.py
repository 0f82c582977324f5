"""A model call is recorded however it ends: answered (ok), failed, or cut midway
(cancelled, its tokens so far estimated and marked so)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest

from hansa import errors
from hansa.domain.llm_call import CallStatus
from hansa.engine.llm import CUT, CallScope, RecordedCall
from hansa.models.base import ChatMessage, ModelSettings, RequestParams
from hansa.models.function import FunctionModel

pytestmark = pytest.mark.anyio

PROMPT = [ChatMessage("system", "You are terse."), ChatMessage("user", "Tell me a long story.")]
PROMPT_ESTIMATE = (14 + 3) // 4 + 4 + (21 + 3) // 4 + 4


def _clock() -> datetime:
    return datetime(2026, 11, 27, tzinfo=UTC)


def _call(model: FunctionModel) -> RecordedCall:
    return RecordedCall(model, CallScope("acme", conversation_id="c1", turn_id="t1"), _clock)


async def _endless(*_: object) -> AsyncIterator[str]:
    yield "Once upon a time, "  # 18 characters
    yield "there was a fox."  # 16 characters
    await asyncio.Event().wait()  # the provider never finishes
    yield "never"


async def test_an_answered_call_is_ok_with_the_providers_counts() -> None:
    call = _call(FunctionModel(lambda *_: "Short answer."))
    text = [d async for d in call.stream(PROMPT, ModelSettings(), RequestParams())]
    assert text == ["Short answer."]
    record = call.settled()
    assert record is not None and record.status is CallStatus.OK and record.success
    assert not record.estimated
    assert (record.prompt_tokens, record.completion_tokens) == (8, 2)  # the double counts words


async def test_a_call_cancelled_while_streaming_is_recorded_with_its_tokens_so_far() -> None:
    call = _call(FunctionModel(stream_function=_endless))
    seen: list[str] = []
    two = asyncio.Event()

    async def consume() -> None:
        async for delta in call.stream(PROMPT, ModelSettings(), RequestParams()):
            seen.append(delta)
            if len(seen) == 2:
                two.set()

    task = asyncio.create_task(consume())
    await two.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    record = call.record
    assert record is not None, "the cut call is recorded at once"
    assert record.status is CallStatus.CANCELLED and not record.success
    assert record.error == CUT
    assert record.estimated
    assert record.prompt_tokens == PROMPT_ESTIMATE
    assert record.completion_tokens == (34 + 3) // 4
    assert record.total_tokens == PROMPT_ESTIMATE + 9
    assert call.settled() is record, "settling a recorded call changes nothing"


async def test_a_call_its_caller_stopped_reading_is_settled_as_cancelled_once() -> None:
    noted: list[object] = []
    model = FunctionModel(stream_function=_endless)
    call = RecordedCall(model, CallScope("acme"), _clock, noted.append)
    stream = call.stream(PROMPT, ModelSettings(), RequestParams())
    async for _ in stream:
        break  # the caller's own write failed, say: it stops reading
    record = call.settled()
    assert record is not None and record.status is CallStatus.CANCELLED
    assert record.completion_tokens == (18 + 3) // 4
    await stream.aclose()  # the generator closed later records nothing more
    assert call.record is record and noted == [record], "told of the record once"


async def test_a_failed_call_is_failed_and_counts_nothing_it_did_not_stream() -> None:
    def refuse(*_: object) -> str:
        raise errors.ProviderError("429 too many requests")

    call = _call(FunctionModel(refuse))
    with pytest.raises(errors.ProviderError):
        async for _ in call.stream(PROMPT, ModelSettings(), RequestParams()):
            pass
    record = call.settled()
    assert record is not None and record.status is CallStatus.FAILED
    assert (record.total_tokens, record.estimated) == (0, False)
    assert record.error is not None and "429" in record.error


def test_a_call_never_started_has_no_record() -> None:
    assert _call(FunctionModel(lambda *_: "x")).settled() is None
