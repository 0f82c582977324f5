"""A deterministic model with no weights, for tests and offline demos.

With no script it answers every call with a short reply derived from the last
user message. With a script it replays the steps in order, and fails loudly on
a call it has no step for or whose purpose differs from the next step's. A step
with ``toolCalls`` asks for tools, which must be among the call's ``params.tools``
(unless a call says ``"offered": false``).
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from hansa import errors
from hansa.models.base import (
    ChatMessage,
    Model,
    ModelResponse,
    ModelSettings,
    RequestParams,
    StreamItem,
    TextDelta,
    ToolCall,
    Usage,
)


class ScriptToolCall(BaseModel):
    """A tool call a scripted step makes."""

    model_config = ConfigDict(populate_by_name=True, extra="forbid")

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    id: str | None = None
    """The call's id; ``call_<n>`` (counting the model's calls) if not given."""
    offered: bool = True
    """False plays a model that calls a tool it was not offered (a made-up or injected
    call): the step is not refused, so a test can see the engine refuse the call."""


class ScriptStep(BaseModel):
    """One scripted answer."""

    model_config = ConfigDict(populate_by_name=True, extra="forbid")

    text: str = ""
    tool_calls: list[ScriptToolCall] = Field(default_factory=list, alias="toolCalls")
    """Tools the answer asks for (a step with tool calls and no text only asks for tools)."""
    purpose: str | None = Field(default=None, description="If set, the call's purpose must match.")
    error: str | None = Field(default=None, description="Raise a ProviderError with this text.")
    delay_seconds: float = Field(default=0.0, ge=0, le=60, alias="delaySeconds")
    """Simulated generation time, spread over the streamed chunks."""
    prompt_has: list[str] = Field(default_factory=list, alias="promptHas")
    """Texts the call's prompt must contain (a test's check of what the engine sent)."""
    prompt_lacks: list[str] = Field(default_factory=list, alias="promptLacks")
    """Texts the call's prompt must not contain (what the engine left out)."""


class Script(BaseModel):
    """A script file: steps to replay, or none to answer by default with a delay."""

    model_config = ConfigDict(populate_by_name=True, extra="forbid")

    steps: list[ScriptStep] | None = None
    delay_seconds: float = Field(default=0.0, ge=0, le=60, alias="delaySeconds")


_SCRIPT = TypeAdapter(Script | list[ScriptStep])


def default_reply(messages: list[ChatMessage]) -> str:
    """The reply the unscripted model gives: short, deterministic, echoing the request."""
    asked = next((m.content for m in reversed(messages) if m.role == "user"), "")
    topic = " ".join(asked.split())[:80]
    return (
        f'Here is how I would approach "{topic}": first I check the project context, '
        "then I list the concrete next steps and what I need from you."
    )


CALLS_KEPT = 32
"""Prompts a scripted model remembers (``calls``), the newest. A server on the scripted model
(the offline demo, every benchmark) answers for weeks: keeping every prompt grew it by a
prompt per model call, ~7 KB a turn (issue 35)."""


class ScriptedModel(Model):
    """Replays a script of responses, or answers deterministically without one."""

    provider = "scripted"

    def __init__(
        self,
        steps: list[ScriptStep] | None = None,
        *,
        chunk_chars: int = 16,
        delay_seconds: float = 0.0,
    ) -> None:
        self.model_name = "scripted" if steps is None else "scripted-script"
        self._steps: deque[ScriptStep] | None = deque(steps) if steps is not None else None
        self._chunk_chars = chunk_chars
        self._default_delay = delay_seconds
        self.calls: deque[list[ChatMessage]] = deque(maxlen=CALLS_KEPT)
        """The prompts of the last ``CALLS_KEPT`` calls, oldest first, for a test to read."""
        self._tool_calls_made = 0

    @classmethod
    def from_file(cls, path: Path) -> ScriptedModel:
        """Load a script: a JSON list of steps, or ``{"steps"?: [...], "delaySeconds"?: n}``."""
        try:
            loaded = _SCRIPT.validate_python(json.loads(path.read_text()))
        except (OSError, ValueError) as exc:
            raise errors.ConfigError(f"cannot read model script {path}: {exc}") from exc
        if isinstance(loaded, list):
            return cls(loaded)
        return cls(loaded.steps, delay_seconds=loaded.delay_seconds)

    @property
    def remaining(self) -> int:
        """Scripted steps not yet used (0 when unscripted)."""
        return len(self._steps) if self._steps is not None else 0

    def _answer(self, messages: list[ChatMessage], params: RequestParams) -> _Answer:
        self.calls.append(messages)
        if self._steps is None:
            return _Answer(default_reply(messages), (), self._default_delay)
        if not self._steps:
            raise errors.ScriptExhausted(f"scripted model has no step left for a {params.purpose}")
        step = self._steps[0]
        if step.purpose is not None and step.purpose != params.purpose:
            raise errors.ScriptExhausted(
                f"scripted model expected a {step.purpose} call, got a {params.purpose} call"
            )
        prompt = "\n".join(m.content for m in messages)
        missing = [text for text in step.prompt_has if text not in prompt]
        if missing:
            raise errors.ScriptExhausted(
                f"scripted model expected a prompt with {missing[0]!r}, got {prompt[-300:]!r}"
            )
        present = [text for text in step.prompt_lacks if text in prompt]
        if present:
            raise errors.ScriptExhausted(
                f"scripted model expected a prompt without {present[0]!r}, got {prompt[-300:]!r}"
            )
        offered = [tool.name for tool in params.tools] if params.offers_tools else []
        for call in step.tool_calls:
            if call.offered and call.name not in offered:
                raise errors.ScriptExhausted(
                    f"scripted model's step calls the tool {call.name!r}, but the"
                    f" {params.purpose} call offered {offered or 'no tools'}"
                )
        self._steps.popleft()
        if step.error is not None:
            raise errors.ProviderError(step.error)
        calls = []
        for call in step.tool_calls:
            self._tool_calls_made += 1
            call_id = call.id or f"call_{self._tool_calls_made}"
            calls.append(ToolCall(call_id, call.name, dict(call.arguments)))
        return _Answer(step.text, tuple(calls), step.delay_seconds)

    @staticmethod
    def _response(messages: list[ChatMessage], answer: _Answer, model: str) -> ModelResponse:
        prompt = sum(len(m.content.split()) for m in messages)
        completion = len(answer.text.split()) + sum(
            len(json.dumps(c.arguments).split()) + 1 for c in answer.tool_calls
        )
        usage = Usage(prompt_tokens=prompt, completion_tokens=completion)
        return ModelResponse(answer.text, usage, model, answer.tool_calls)

    async def request(
        self, messages: list[ChatMessage], settings: ModelSettings, params: RequestParams
    ) -> ModelResponse:
        """Answer in one piece."""
        answer = self._answer(messages, params)
        if answer.delay:
            await asyncio.sleep(answer.delay)
        return self._response(messages, answer, self.model_name)

    async def stream_items(
        self, messages: list[ChatMessage], settings: ModelSettings, params: RequestParams
    ) -> AsyncIterator[StreamItem]:
        """Yield the text in chunks of a few characters, the tool calls, then the response."""
        answer = self._answer(messages, params)
        text = answer.text
        starts = range(0, len(text), self._chunk_chars)
        pause = answer.delay / max(len(starts), 1)
        for start in starts:
            if pause:
                await asyncio.sleep(pause)
            yield TextDelta(text[start : start + self._chunk_chars])
        for call in answer.tool_calls:
            yield call
        yield self._response(messages, answer, self.model_name)


@dataclass(frozen=True, slots=True)
class _Answer:
    text: str
    tool_calls: tuple[ToolCall, ...]
    delay: float
