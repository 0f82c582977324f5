"""Any OpenAI-compatible chat endpoint, through the official ``openai`` SDK.

The SDK is imported lazily so that Hansa imports without it; its exceptions are
translated at this boundary into ``errors.ProviderHTTPError`` (the server
answered with an error status) and ``errors.ProviderError`` (no answer at all).
Tools go out as functions; streamed tool-call deltas are assembled into whole calls.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hansa import errors
from hansa.models._tools import ToolNames, parsed_arguments, retry_after
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
    UseTool,
)

if TYPE_CHECKING:
    from openai import AsyncOpenAI

PRICES_PER_MTOK: dict[str, tuple[float, float]] = {
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4o": (2.50, 10.00),
    "gpt-4.1-mini": (0.40, 1.60),
}
"""USD per million (input, output) tokens; a dated snapshot prices as its base model."""


def price_per_mtok(model_name: str) -> tuple[float, float] | None:
    """The (input, output) USD price per million tokens of ``model_name``, if known."""
    for base in sorted(PRICES_PER_MTOK, key=len, reverse=True):
        if model_name == base or model_name.startswith(f"{base}-"):
            return PRICES_PER_MTOK[base]
    return None


CONTEXT_WINDOWS: dict[str, int] = {
    "gpt-5": 400_000,
    "gpt-4.1": 1_047_576,
    "gpt-4o": 128_000,
    "gpt-4-turbo": 128_000,
    "gpt-4": 8_192,
    "gpt-3.5-turbo": 16_385,
    "o1": 200_000,
    "o3": 200_000,
    "o4-mini": 200_000,
}
"""Tokens per call by model family (the longest matching prefix wins: ``gpt-4o-mini`` is a
``gpt-4o``); any other name (a local OpenAI-compatible server's) gets ``DEFAULT_WINDOW``."""
DEFAULT_WINDOW = 8_192


def context_window_of(model_name: str) -> int:
    """The context window of ``model_name``: its family's, else ``DEFAULT_WINDOW``."""
    for base in sorted(CONTEXT_WINDOWS, key=len, reverse=True):
        if model_name == base or model_name.startswith(f"{base}-"):
            return CONTEXT_WINDOWS[base]
    return DEFAULT_WINDOW


class OpenAIModel(Model):
    """A chat model behind an OpenAI-compatible ``/v1/chat/completions`` endpoint."""

    provider = "openai"

    def __init__(
        self,
        model_name: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 0,
    ) -> None:
        """Remember where to call; the SDK client is created on first use.

        Args:
            model_name: The model as the endpoint knows it, e.g. ``gpt-4o-mini``.
            base_url: The endpoint, e.g. ``http://127.0.0.1:8080/v1``; the SDK's default if None.
            api_key: The key; only an explicit ``base_url`` (a local server) may go without.
            timeout: Seconds before one HTTP attempt gives up.
            max_retries: How often the SDK itself retries connection errors, 429 and 5xx;
                none by default: the engine retries (``engine/llm.py``, ``Retry``), so each
                attempt is a recorded model call.

        Raises:
            errors.ConfigError: There is neither a key nor a ``base_url``.
        """
        if not api_key and base_url is None:
            raise errors.ConfigError(
                f"openai:{model_name} needs an API key: set HANSA_OPENAI_API_KEY or"
                " OPENAI_API_KEY (or HANSA_OPENAI_BASE_URL for a local OpenAI-compatible server)"
            )
        self.model_name = model_name
        self.context_window = context_window_of(model_name)
        self._base_url = base_url
        self._api_key = api_key or "not-needed"  # a local server that checks no key
        self._timeout = timeout
        self._max_retries = max_retries
        self._client: AsyncOpenAI | None = None

    def _sdk(self) -> AsyncOpenAI:
        if self._client is None:
            try:
                from openai import AsyncOpenAI
            except ImportError as exc:
                raise errors.ConfigError(
                    "the openai provider needs the openai SDK: pip install 'hansa'."
                ) from exc
            self._client = AsyncOpenAI(
                base_url=self._base_url,
                api_key=self._api_key,
                timeout=self._timeout,
                max_retries=self._max_retries,
            )
        return self._client

    def _arguments(
        self,
        messages: list[ChatMessage],
        settings: ModelSettings,
        params: RequestParams,
        names: ToolNames,
    ) -> dict[str, Any]:
        arguments: dict[str, Any] = {
            "model": self.model_name,
            "messages": [_message(m, names) for m in messages],
            "temperature": settings.temperature,
            "max_tokens": settings.max_tokens,
        }
        if params.output_schema is not None:
            schema = params.output_schema
            arguments["response_format"] = {
                "type": "json_schema",
                # strict: the provider holds the answer to the schema (an enum of the
                # user's words cannot be left), where the schema is one strict mode accepts
                "json_schema": {"name": "output", "schema": schema, "strict": strict(schema)},
            }
        if params.tools:
            arguments["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": names.wire(tool.name),
                        "description": tool.description,
                        "parameters": tool.parameters,
                    },
                }
                for tool in params.tools
            ]
            choice = params.tool_choice
            arguments["tool_choice"] = (
                {"type": "function", "function": {"name": names.wire(choice.name)}}
                if isinstance(choice, UseTool)
                else choice
            )
        return arguments

    async def request(
        self, messages: list[ChatMessage], settings: ModelSettings, params: RequestParams
    ) -> ModelResponse:
        """Answer ``messages`` with one chat completion.

        Raises:
            errors.ProviderHTTPError: The endpoint answered with an error status.
            errors.ProviderError: The endpoint could not be reached or timed out, or a
                tool call's arguments are not a JSON object.
        """
        client = self._sdk()
        names = ToolNames(params.tools)
        with _translated_errors():
            completion = await client.chat.completions.create(
                **self._arguments(messages, settings, params, names)
            )
        message = completion.choices[0].message if completion.choices else None
        calls: list[ToolCall] = []
        for call in (message.tool_calls if message is not None else None) or ():
            if call.type == "function":  # custom (free-text) tools are never offered
                arguments = parsed_arguments(call.function.arguments, call.function.name)
                calls.append(ToolCall(call.id, names.name(call.function.name), arguments))
        usage = completion.usage
        return ModelResponse(
            text=(message.content if message is not None else None) or "",
            usage=Usage(usage.prompt_tokens, usage.completion_tokens) if usage else Usage(),
            model=completion.model or self.model_name,
            tool_calls=tuple(calls),
        )

    async def stream_items(
        self, messages: list[ChatMessage], settings: ModelSettings, params: RequestParams
    ) -> AsyncIterator[StreamItem]:
        """Yield text deltas as the endpoint sends them and each tool call once whole.

        Usage is asked for with ``stream_options.include_usage``; a server that
        does not send it yields zero token counts. A tool call is whole once the
        next one starts or the choice finishes.

        Raises:
            errors.ProviderHTTPError: The endpoint answered with an error status.
            errors.ProviderError: The endpoint could not be reached or timed out, or a
                tool call's arguments are not a JSON object.
        """
        client = self._sdk()
        names = ToolNames(params.tools)
        parts: list[str] = []
        calls = _ToolCallAssembly(names)
        usage = Usage()
        model = self.model_name
        with _translated_errors():
            chunks = await client.chat.completions.create(
                **self._arguments(messages, settings, params, names),
                stream=True,
                stream_options={"include_usage": True},
            )
            async with chunks:
                async for chunk in chunks:
                    model = chunk.model or model
                    if chunk.usage is not None:
                        usage = Usage(chunk.usage.prompt_tokens, chunk.usage.completion_tokens)
                    if not chunk.choices:
                        continue
                    choice = chunk.choices[0]
                    text = choice.delta.content
                    if text:
                        parts.append(text)
                        yield TextDelta(text)
                    for piece in choice.delta.tool_calls or ():
                        for call in calls.add(
                            piece.index,
                            piece.id,
                            piece.function.name if piece.function else None,
                            piece.function.arguments if piece.function else None,
                        ):
                            yield call
                    if choice.finish_reason is not None:
                        for call in calls.finish():
                            yield call
        for call in calls.finish():
            yield call
        yield ModelResponse(
            text="".join(parts), usage=usage, model=model, tool_calls=tuple(calls.done)
        )

    def cost_usd(self, usage: Usage) -> float:
        """Price ``usage`` with the table of known OpenAI models; 0.0 for any other model."""
        price = price_per_mtok(self.model_name)
        if price is None:
            return 0.0
        per_input, per_output = price
        return (usage.prompt_tokens * per_input + usage.completion_tokens * per_output) / 1e6

    async def aclose(self) -> None:
        """Close the SDK's HTTP connections, if a client was created."""
        if self._client is not None:
            await self._client.close()
            self._client = None


def _message(message: ChatMessage, names: ToolNames) -> dict[str, Any]:
    if message.role == "tool":
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
    if message.tool_calls:
        return {
            "role": "assistant",
            "content": message.content or None,
            "tool_calls": [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {
                        "name": names.wire(call.name),
                        "arguments": json.dumps(call.arguments),
                    },
                }
                for call in message.tool_calls
            ],
        }
    return {"role": message.role, "content": message.content}


@dataclass
class _Partial:
    id: str | None = None
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class _ToolCallAssembly:
    """Streamed tool-call deltas, by index, into whole calls in the order they started."""

    def __init__(self, names: ToolNames) -> None:
        self._names = names
        self._open: dict[int, _Partial] = {}
        self.done: list[ToolCall] = []

    def add(
        self, index: int, call_id: str | None, name: str | None, arguments: str | None
    ) -> list[ToolCall]:
        """Take one delta; return the calls it shows complete (those with a lower index)."""
        partial = self._open.setdefault(index, _Partial())
        partial.id = partial.id or call_id
        partial.name = partial.name or name or ""
        if arguments:
            partial.arguments.append(arguments)
        return self._close(lambda i: i < index)

    def finish(self) -> list[ToolCall]:
        """Every call still open, now complete."""
        return self._close(lambda i: True)

    def _close(self, complete: Callable[[int], bool]) -> list[ToolCall]:
        closed: list[ToolCall] = []
        for index in sorted(i for i in self._open if complete(i)):
            partial = self._open.pop(index)
            arguments = parsed_arguments("".join(partial.arguments), partial.name)
            call = ToolCall(
                partial.id or f"call_{len(self.done)}", self._names.name(partial.name), arguments
            )
            self.done.append(call)
            closed.append(call)
        return closed


@contextmanager
def _translated_errors() -> Iterator[None]:
    import openai

    try:
        yield
    except openai.APIStatusError as exc:
        raise errors.ProviderHTTPError(
            exc.status_code, _body(exc), retry_after=retry_after(exc)
        ) from exc
    except openai.APITimeoutError as exc:
        raise errors.ProviderError(f"model provider timed out: {exc}", transient=True) from exc
    except openai.APIConnectionError as exc:
        raise errors.ProviderError(
            f"cannot reach the model provider: {exc}", transient=True
        ) from exc
    except openai.OpenAIError as exc:
        raise errors.ProviderError(f"model provider failed: {exc}") from exc


def _body(exc: Any) -> str:
    try:
        return str(exc.response.text)
    except Exception:  # the body of a streamed error may be unread
        return str(exc.message)


def strict(schema: Any) -> bool:
    """Whether OpenAI's strict structured output accepts ``schema``: every object names all
    its properties as required and allows no others."""
    if isinstance(schema, list):
        return all(strict(s) for s in schema)
    if not isinstance(schema, dict):
        return True
    if schema.get("type") == "object" or "properties" in schema:
        properties = schema.get("properties", {})
        if schema.get("additionalProperties") is not False:
            return False
        if sorted(schema.get("required", [])) != sorted(properties):
            return False
    return all(strict(v) for k, v in schema.items() if k not in ("enum", "const", "required"))
