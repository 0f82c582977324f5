"""The Model protocol every provider implements.

A model answers a list of chat messages. ``request`` returns the whole answer;
``stream`` yields text deltas and then one final ``ModelResponse`` (with usage).
Structured output: pass ``params.output_schema`` (a JSON schema) and the
answer's ``text`` is JSON that validates against it.

Tools: pass ``params.tools`` (and a ``params.tool_choice``) and the answer may
carry ``tool_calls`` besides (or instead of) text. The caller runs them and asks
again with the conversation extended by an assistant message holding the calls
(``ChatMessage.calling``) and one tool message per result (``ChatMessage.tool_result``).
``stream_items`` yields each ``ToolCall`` as soon as it is complete; ``stream``
yields text only, and its final response carries the calls.
"""

from __future__ import annotations

import abc
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A model's request to run one tool."""

    id: str
    """The provider's id of the call; the tool's result names it."""
    name: str
    """The tool's name, as in its ``ToolDefinition``."""
    arguments: dict[str, Any]
    """The arguments, a JSON object (meant to follow the tool's parameter schema)."""


@dataclass(frozen=True, slots=True)
class ChatMessage:
    """One message of the prompt.

    ``ChatMessage(role, content)`` is a plain message; an assistant message may also
    carry the ``tool_calls`` it made, and a ``tool`` message is the result of one call.
    """

    role: Role
    content: str
    """The text; for a ``tool`` message, the result (JSON or plain text)."""
    tool_calls: tuple[ToolCall, ...] = ()
    """The calls an assistant message made (its content may then be empty)."""
    tool_call_id: str | None = None
    """The call a ``tool`` message answers."""
    is_error: bool = False
    """Whether a ``tool`` message reports a failure rather than a result."""

    def __post_init__(self) -> None:
        if (self.role == "tool") != (self.tool_call_id is not None):
            raise ValueError("a tool message, and only a tool message, names its tool_call_id")
        if self.tool_calls and self.role != "assistant":
            raise ValueError("only an assistant message carries tool calls")
        if self.is_error and self.role != "tool":
            raise ValueError("only a tool message can be an error")

    @classmethod
    def calling(cls, calls: Iterable[ToolCall], text: str = "") -> ChatMessage:
        """The assistant message that made ``calls`` (and said ``text``)."""
        return cls("assistant", text, tool_calls=tuple(calls))

    @classmethod
    def tool_result(cls, call_id: str, content: str, *, is_error: bool = False) -> ChatMessage:
        """The result of the call ``call_id``, or its error when ``is_error``."""
        return cls("tool", content, tool_call_id=call_id, is_error=is_error)


@dataclass(frozen=True, slots=True)
class ModelSettings:
    """Sampling settings for one call."""

    temperature: float = 0.3
    max_tokens: int = 256


@dataclass(frozen=True, slots=True)
class ToolDefinition:
    """A tool the model may call."""

    name: str
    """Unique among the call's tools; providers that allow fewer characters get it encoded."""
    description: str
    """What the tool does, for the model."""
    parameters: dict[str, Any]
    """The JSON schema of the arguments object (e.g. a task type's ``schema()``)."""


@dataclass(frozen=True, slots=True)
class UseTool:
    """The tool choice that makes the model call this one tool."""

    name: str


ToolChoice = Literal["auto", "none", "required"] | UseTool
"""``auto``: text or tools, as the model likes; ``none``: text only; ``required``: at
least one tool call; ``UseTool(name)``: a call of that tool."""


@dataclass(frozen=True, slots=True)
class RequestParams:
    """What a call asks for beyond plain text."""

    output_schema: dict[str, Any] | None = None
    """A JSON schema the answer must follow (structured output)."""
    purpose: str = "reply"
    """Why the engine calls: "reply", "plan", "route"; scripted models match on it."""
    tools: tuple[ToolDefinition, ...] = ()
    """The tools the model may call; none by default."""
    tool_choice: ToolChoice = "auto"
    """Whether and which tools the model must call; ignored without ``tools``."""

    def __post_init__(self) -> None:
        names = [tool.name for tool in self.tools]
        if len(set(names)) != len(names):
            raise ValueError(f"tool names must be unique: {names}")
        if isinstance(self.tool_choice, UseTool) and self.tool_choice.name not in names:
            raise ValueError(f"tool_choice names {self.tool_choice.name!r}, not among {names}")
        if self.tool_choice == "required" and not names:
            raise ValueError("tool_choice 'required' needs tools")

    @property
    def offers_tools(self) -> bool:
        """Whether the model may call a tool in this call."""
        return bool(self.tools) and self.tool_choice != "none"


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
    tool_calls: tuple[ToolCall, ...] = ()
    """The tools the model asked to run, in its order; empty for a plain answer."""


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of text as the model generates it."""

    text: str


StreamItem = TextDelta | ToolCall | ModelResponse
"""What ``Model.stream_items`` yields: text deltas and complete tool calls, then the response."""


class Model(abc.ABC):
    """A language model behind one provider."""

    provider: str = "unknown"
    """The provider's name as in "provider:model"."""
    model_name: str = "unknown"
    """The model's name as the provider knows it."""
    context_window: int = 8_192
    """Tokens one call may hold, prompt and reply together; the engine fits its prompts to
    it (``engine/context_budget.py``). Providers set it per model; 8,192 when unknown."""
    agent_tools: bool = True
    """Whether the engine's agent loop offers this model an agent's tools in a reply. A model
    without native tool calling may say False: its replies then stream as plain text (it
    still answers a call that offers tools itself)."""

    @abc.abstractmethod
    async def request(
        self, messages: list[ChatMessage], settings: ModelSettings, params: RequestParams
    ) -> ModelResponse:
        """Answer ``messages`` in one piece."""

    def stream_items(
        self, messages: list[ChatMessage], settings: ModelSettings, params: RequestParams
    ) -> AsyncIterator[StreamItem]:
        """Yield ``TextDelta``s and each ``ToolCall`` once complete, then one ``ModelResponse``.

        The response holds the whole text and every tool call again.
        """
        raise NotImplementedError(type(self).__name__)

    async def stream(
        self, messages: list[ChatMessage], settings: ModelSettings, params: RequestParams
    ) -> AsyncIterator[TextDelta | ModelResponse]:
        """Yield ``TextDelta``s, then exactly one ``ModelResponse`` with the whole text.

        Tool calls are not yielded on their own: they arrive in the response.
        """
        async for item in self.stream_items(messages, settings, params):
            if not isinstance(item, ToolCall):
                yield item

    def cost_usd(self, usage: Usage) -> float:
        """What a call with ``usage`` costs; zero unless the provider prices it."""
        return 0.0

    async def warm(self, messages: list[ChatMessage]) -> None:  # noqa: B027 - optional hook
        """Get ready for calls that start like ``messages`` (load weights, compute the
        prompt's prefix), so that the first real call is as fast as later ones. Remote
        models have nothing to warm: the default does nothing."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook, default does nothing
        """Release what the model holds (clients, weights)."""
