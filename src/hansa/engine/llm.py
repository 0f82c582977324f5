"""Model calls made by the engine, each one recorded (tokens, latency, cost, error)."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import datetime

from opentelemetry.trace import Span

from hansa import errors, tracing
from hansa.domain.base import new_id
from hansa.domain.llm_call import LlmCall
from hansa.models.base import ChatMessage, Model, ModelResponse, ModelSettings, RequestParams
from hansa.models.base import TextDelta as ModelDelta


@dataclass(frozen=True, slots=True)
class CallScope:
    """Who a model call is made for."""

    tenant_id: str
    conversation_id: str | None = None
    turn_id: str | None = None
    run_id: str | None = None
    node_id: str | None = None
    agent_id: str | None = None


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

    async def stream(
        self, messages: list[ChatMessage], settings: ModelSettings, params: RequestParams
    ) -> AsyncIterator[str]:
        """Yield text deltas; afterwards ``response`` and ``record`` are set."""
        started = time.perf_counter()
        self._span = tracing.model_call(self.model.provider, self.model.model_name)
        try:
            async for item in self.model.stream(messages, settings, params):
                if isinstance(item, ModelDelta):
                    yield item.text
                else:
                    self.response = item
        except errors.HansaError as exc:
            self._finish(started, None, str(exc))
            raise
        except Exception as exc:
            self._finish(started, None, f"{type(exc).__name__}: {exc}")
            raise errors.ProviderError(f"model call failed: {exc}") from exc
        if self.response is None:
            self._finish(started, None, "model stream ended without a response")
            raise errors.ProviderError("model stream ended without a response")
        self._finish(started, self.response, None)

    def _finish(self, started: float, response: ModelResponse | None, error: str | None) -> None:
        usage = response.usage if response is not None else None
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
            latency_ms=round((time.perf_counter() - started) * 1000, 3),
            success=error is None,
            error=error,
            cost_usd=self.model.cost_usd(usage) if usage else 0.0,
            created_at=self._clock(),
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
