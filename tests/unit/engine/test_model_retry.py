"""When a failed model call is made again (issue 32 item 2): transient provider errors
before anything streamed, with a doubling wait, never past the attempts or the longest wait;
the provider adapters type their errors so."""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace

import pytest

from hansa import errors
from hansa.domain.llm_call import CallStatus, LlmCall
from hansa.engine import llm
from hansa.engine.llm import CallScope, Retry
from hansa.models._tools import retry_after
from hansa.models.base import ChatMessage, ModelSettings, RequestParams
from hansa.models.function import FunctionModel
from hansa.settings import Settings

RETRY = Retry(attempts=3, backoff=1.0, max_backoff=30.0)


@pytest.mark.parametrize(
    "failure",
    [
        errors.ProviderHTTPError(503, "service unavailable"),
        errors.ProviderHTTPError(429, "rate limited"),
        errors.ProviderHTTPError(500, "internal"),
        errors.ProviderHTTPError(529, "overloaded_error"),
        errors.ProviderError("model provider timed out: read", transient=True),
    ],
)
def test_a_transient_failure_is_tried_again_with_a_doubling_wait(failure: Exception) -> None:
    assert RETRY.wait(failure, 1, streamed=False) == 1.0
    assert RETRY.wait(failure, 2, streamed=False) == 2.0
    assert RETRY.wait(failure, 3, streamed=False) is None  # three attempts in all


@pytest.mark.parametrize(
    "failure",
    [
        errors.ProviderHTTPError(400, "bad request"),
        errors.ProviderHTTPError(401, "bad key"),
        errors.ProviderError("the local model's tool answer has an unknown form"),
        errors.ScriptExhausted("no step left"),
        ValueError("a bug"),
    ],
)
def test_a_lasting_failure_is_not_tried_again(failure: Exception) -> None:
    assert RETRY.wait(failure, 1, streamed=False) is None


def test_a_call_that_streamed_text_is_not_made_again() -> None:
    assert RETRY.wait(errors.ProviderHTTPError(503, "gone"), 1, streamed=True) is None


def test_the_providers_retry_after_is_waited_up_to_the_longest_wait() -> None:
    asked = errors.ProviderHTTPError(429, "slow down", retry_after=7.0)
    assert RETRY.wait(asked, 1, streamed=False) == 7.0
    too_long = errors.ProviderHTTPError(429, "slow down", retry_after=3600.0)
    assert RETRY.wait(too_long, 1, streamed=False) == 30.0


def test_the_policy_is_the_operators() -> None:
    settings = Settings(
        model_call_attempts=5, model_call_backoff_seconds=0.5, model_call_max_backoff_seconds=2
    )
    assert Retry.of(settings) == Retry(5, 0.5, 2.0)
    assert Retry.of(Settings()) == Retry(3, 1.0, 30.0)


def test_retry_after_is_read_from_the_error_answers_header() -> None:
    def answered(headers: dict[str, str]) -> SimpleNamespace:
        return SimpleNamespace(response=SimpleNamespace(headers=headers))

    assert retry_after(answered({"retry-after": "12"})) == 12.0
    assert retry_after(answered({"retry-after": "Wed, 21 Oct 2026 07:28:00 GMT"})) is None
    assert retry_after(answered({})) is None
    assert retry_after(SimpleNamespace()) is None


@pytest.mark.anyio
async def test_a_whole_answer_is_asked_again_and_every_attempt_recorded() -> None:
    failures = [errors.ProviderHTTPError(503, "busy"), errors.ProviderHTTPError(429, "slow")]

    def provider(*_: object) -> str:
        if failures:
            raise failures.pop(0)
        return "Here it is."

    calls: list[LlmCall] = []
    answer = await llm.ask(
        FunctionModel(provider),
        CallScope("acme", conversation_id="c1", node_id="summary"),
        [ChatMessage("user", "Summarize.")],
        ModelSettings(),
        RequestParams(),
        clock=lambda: datetime(2026, 11, 27, tzinfo=UTC),
        retry=Retry(attempts=3, backoff=0.0, max_backoff=0.0),
        calls=calls,
    )
    assert answer.text == "Here it is."
    assert [c.status for c in calls] == [CallStatus.FAILED, CallStatus.FAILED, CallStatus.OK]
    assert "HTTP 503" in (calls[0].error or "") and "HTTP 429" in (calls[1].error or "")


@pytest.mark.anyio
async def test_a_lasting_failure_is_asked_once_and_raised() -> None:
    def provider(*_: object) -> str:
        raise errors.ProviderHTTPError(401, "bad key")

    calls: list[LlmCall] = []
    with pytest.raises(errors.ProviderHTTPError):
        await llm.ask(
            FunctionModel(provider),
            CallScope("acme"),
            [ChatMessage("user", "Summarize.")],
            ModelSettings(),
            RequestParams(),
            clock=lambda: datetime(2026, 11, 27, tzinfo=UTC),
            retry=RETRY,
            calls=calls,
        )
    assert [c.status for c in calls] == [CallStatus.FAILED]
