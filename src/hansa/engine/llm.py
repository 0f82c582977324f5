"""Model calls made by the engine, each one recorded (tokens, latency, cost, error).

A call is recorded however it ends: answered (``ok``), failed (``failed``), or cut before
it answered by a preempt, a cancel, a handoff or a newer message (``cancelled``). A cut
call's provider never said how many tokens it used: its record counts the prompt and the
text streamed so far at characters / 4 and says so (``estimated``). A failed call that
streamed nothing spent nothing it could count: its tokens are zero.

A call that fails transiently before it streamed anything is made again (``Retry``): each
attempt is a call of its own, recorded as such. The provider SDKs retry nothing themselves.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TypeVar

from opentelemetry.trace import Span
from sqlalchemy import Connection

from hansa import errors, tracing
from hansa.domain.base import new_id
from hansa.domain.llm_call import CallStatus, LlmCall
from hansa.engine.context_packs import MESSAGE_TOKENS, estimate_tokens
from hansa.models.base import (
    ChatMessage,
    Model,
    ModelResponse,
    ModelSettings,
    RequestParams,
    Usage,
)
from hansa.models.base import TextDelta as ModelDelta
from hansa.settings import Settings
from hansa.store import llm_calls
from hansa.store.db import Database

log = logging.getLogger(__name__)

T = TypeVar("T")

CUT = "cut before the model answered"
"""The error of a cancelled call's record."""


@dataclass(frozen=True, slots=True)
class CallScope:
    """Who a model call is made for."""

    tenant_id: str
    conversation_id: str | None = None
    turn_id: str | None = None
    run_id: str | None = None
    node_id: str | None = None
    agent_id: str | None = None


@dataclass(frozen=True, slots=True)
class Retry:
    """When a failed model call is made again: after a transient provider error
    (``ProviderError.transient``: a timeout, no connection, 429, 5xx, overloaded) that came
    before the call streamed any text, up to ``attempts`` attempts in all. The wait doubles
    from ``backoff`` seconds (or is the provider's ``Retry-After`` when longer), at most
    ``max_backoff``. A call that streamed text is not made again: its reader has seen it."""

    attempts: int = 1
    backoff: float = 0.0
    max_backoff: float = 0.0

    @classmethod
    def of(cls, settings: Settings) -> Retry:
        """The operator's policy (``HANSA_MODEL_CALL_*``)."""
        return cls(
            settings.model_call_attempts,
            settings.model_call_backoff_seconds,
            settings.model_call_max_backoff_seconds,
        )

    def wait(self, exc: BaseException, attempt: int, *, streamed: bool) -> float | None:
        """Seconds to wait before making again a call whose ``attempt``-th attempt (from 1)
        failed with ``exc``; None: it is not made again."""
        if streamed or attempt >= self.attempts:
            return None
        if not isinstance(exc, errors.ProviderError) or not exc.transient:
            return None
        wait = self.backoff * 2.0 ** (attempt - 1)
        asked = exc.retry_after if isinstance(exc, errors.ProviderHTTPError) else None
        return min(max(wait, asked or 0.0), self.max_backoff)

    async def run(self, attempt: Callable[[], Awaitable[T]], streamed: Callable[[], bool]) -> T:
        """``attempt()`` (one model call), made again while it fails so that :meth:`wait`
        allows; ``streamed()`` says whether the failed attempt's reader saw text."""
        made = 1
        while True:
            try:
                return await attempt()
            except errors.ProviderError as exc:
                wait = self.wait(exc, made, streamed=streamed())
                if wait is None:
                    raise
            made += 1
            await asyncio.sleep(wait)


async def ask(
    model: Model,
    scope: CallScope,
    prompt: list[ChatMessage],
    settings: ModelSettings,
    params: RequestParams,
    *,
    clock: Callable[[], datetime],
    retry: Retry,
    calls: list[LlmCall],
    observe: Callable[[LlmCall], None] | None = None,
    heard: Callable[[int, str], Awaitable[None]] | None = None,
) -> ModelResponse:
    """The model's whole answer to ``prompt``, for a caller that streams nothing on: a call
    that fails transiently is made again as ``retry`` says, and every attempt's record
    joins ``calls`` (failed or cut ones too). ``heard`` gets each piece of text as it comes,
    with its attempt's number (from 1), for a caller that shows progress but not the text."""
    attempts = itertools.count(1)

    async def attempt() -> ModelResponse:
        number = next(attempts)
        call = RecordedCall(model, scope, clock, observe)
        try:
            async for piece in call.stream(prompt, settings, params):
                if heard is not None:
                    await heard(number, piece)
        finally:
            if (record := call.settled()) is not None:
                calls.append(record)
        assert call.response is not None
        return call.response

    return await retry.run(attempt, lambda: False)  # nobody read the text: it may go again


class RecordedCall:
    """Streams one model call and keeps its ``LlmCall`` record for the caller to store."""

    def __init__(
        self,
        model: Model,
        scope: CallScope,
        clock: Callable[[], datetime],
        observe: Callable[[LlmCall], None] | None = None,
    ) -> None:
        self.model = model
        self.scope = scope
        self.record: LlmCall | None = None
        self.response: ModelResponse | None = None
        self._clock = clock
        self._observe = observe
        """Told of the record as soon as it is made (``Metrics.called``), stored or not."""
        self._span: Span | None = None
        self._started: float | None = None
        self._prompt: list[ChatMessage] = []
        self._streamed: list[str] = []

    async def stream(
        self, messages: list[ChatMessage], settings: ModelSettings, params: RequestParams
    ) -> AsyncIterator[str]:
        """Yield text deltas; afterwards ``response`` and ``record`` are set (cut off
        midway, the record is made at once, or by ``settled``)."""
        self._started = time.perf_counter()
        self._prompt = messages
        self._span = tracing.model_call(self.model.provider, self.model.model_name)
        try:
            async for item in self.model.stream(messages, settings, params):
                if isinstance(item, ModelDelta):
                    self._streamed.append(item.text)
                    yield item.text
                else:
                    self.response = item
        except (asyncio.CancelledError, GeneratorExit):
            self._cut()
            raise
        except errors.HansaError as exc:
            self._finish(CallStatus.FAILED, str(exc))
            raise
        except Exception as exc:
            self._finish(CallStatus.FAILED, f"{type(exc).__name__}: {exc}")
            raise errors.ProviderError(f"model call failed: {exc}") from exc
        if self.response is None:
            self._finish(CallStatus.FAILED, "model stream ended without a response")
            raise errors.ProviderError("model stream ended without a response")
        self._finish(CallStatus.OK, None)

    @property
    def streamed(self) -> bool:
        """Whether the call has yielded any text."""
        return any(self._streamed)

    def settled(self) -> LlmCall | None:
        """The call's record, for the caller's ``finally``: a call its caller stopped
        reading before it ended is recorded now as ``cancelled``. None: it never started."""
        if self.record is None and self._started is not None:
            self._cut()
        return self.record

    def _cut(self) -> None:
        self._finish(CallStatus.CANCELLED, CUT)

    def _usage(self, status: CallStatus) -> tuple[Usage | None, bool]:
        """The call's tokens, and whether they are estimated."""
        if self.response is not None:
            return self.response.usage, False
        if status is CallStatus.FAILED and not self._streamed:
            return None, False  # refused or unreachable: nothing streamed, nothing counted
        prompt = sum(estimate_tokens(m.content) + MESSAGE_TOKENS for m in self._prompt)
        return Usage(prompt, estimate_tokens("".join(self._streamed))), True

    def _finish(self, status: CallStatus, error: str | None) -> None:
        if self.record is not None or self._started is None:
            return  # recorded already (a cut generator is closed after its caller settled)
        response = self.response if status is CallStatus.OK else None
        usage, estimated = self._usage(status)
        prompt = usage.prompt_tokens if usage else 0
        completion = usage.completion_tokens if usage else 0
        self.record = LlmCall(
            id=new_id(),
            tenant_id=self.scope.tenant_id,
            conversation_id=self.scope.conversation_id,
            turn_id=self.scope.turn_id,
            run_id=self.scope.run_id,
            node_id=self.scope.node_id,
            agent_id=self.scope.agent_id,
            provider=self.model.provider,
            model=(response.model if response and response.model else self.model.model_name),
            prompt_tokens=prompt,
            completion_tokens=completion,
            total_tokens=prompt + completion,
            latency_ms=round((time.perf_counter() - self._started) * 1000, 3),
            success=status is CallStatus.OK,
            error=error,
            cost_usd=self.model.cost_usd(usage) if usage else 0.0,
            created_at=self._clock(),
            status=status,
            estimated=estimated,
        )
        if self._span is not None:
            tracing.model_call_done(
                self._span,
                response_model=self.record.model,
                input_tokens=prompt,
                output_tokens=completion,
                error=error,
            )
            self._span = None
        if self._observe is not None:
            self._observe(self.record)


async def keep(db: Database, records: Sequence[LlmCall]) -> None:
    """Store ``records`` in a transaction of their own: their turn or run was cut, so the
    transaction they were to join will never commit (their job's writes are refused). A
    call's record is a fact of spend, not a change the job's lease guards. A cancelled task
    may call this: the write is shielded, so the records are kept all the same."""
    if not records:
        return

    def store(conn: Connection) -> None:
        for record in records:
            llm_calls.record(conn, record)

    try:
        await asyncio.shield(db.write(store))
    except Exception:  # the cut must go on: a lost record is logged, not raised
        log.exception("%d model call records of a cut turn or run were not stored", len(records))
