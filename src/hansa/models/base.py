"""The Model protocol every provider implements.

A model answers a list of chat messages. ``request`` returns the whole answer;
``stream`` yields text deltas and then one final ``ModelResponse`` (with usage).
Structured output: pass ``params.output_schema`` (a JSON schema) and the
answer's ``text`` is JSON that validates against it.
"""

from __future__ import annotations

import abc
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["system", "user", "assistant"]


@dataclass(frozen=True, slots=True)
class ChatMessage:
    """One message of the prompt."""

    role: Role
    content: str


@dataclass(frozen=True, slots=True)
class ModelSettings:
    """Sampling settings for one call."""

    temperature: float = 0.3
    max_tokens: int = 256


@dataclass(frozen=True, slots=True)
class RequestParams:
    """What a call asks for beyond plain text."""

    output_schema: dict[str, Any] | None = None
    """A JSON schema the answer must follow (structured output)."""
    purpose: str = "reply"
    """Why the engine calls: "reply", "plan", "route"; scripted models match on it."""


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts of one call."""

    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True, slots=True)
class ModelResponse:
    """A model's whole answer."""

    text: str
    usage: Usage = field(default_factory=Usage)
    model: str = ""


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of text as the model generates it."""

    text: str


StreamItem = TextDelta | ModelResponse


class Model(abc.ABC):
    """A language model behind one provider."""

    provider: str = "unknown"
    """The provider's name as in "provider:model"."""
    model_name: str = "unknown"
    """The model's name as the provider knows it."""

    @abc.abstractmethod
    async def request(
        self, messages: list[ChatMessage], settings: ModelSettings, params: RequestParams
    ) -> ModelResponse:
        """Answer ``messages`` in one piece."""

    def stream(
        self, messages: list[ChatMessage], settings: ModelSettings, params: RequestParams
    ) -> AsyncIterator[StreamItem]:
        """Yield ``TextDelta``s, then exactly one ``ModelResponse`` with the whole text."""
        raise NotImplementedError(type(self).__name__)

    def cost_usd(self, usage: Usage) -> float:
        """What a call with ``usage`` costs; zero unless the provider prices it."""
        return 0.0

    async def aclose(self) -> None:  # noqa: B027 - optional hook, default does nothing
        """Release what the model holds (clients, weights)."""
