"""Claude through the Messages API, with the official ``anthropic`` SDK.

The SDK is imported lazily, on first use; its exceptions are translated at this
boundary into ``errors.ProviderHTTPError`` (the API answered with an error
status) and ``errors.ProviderError`` (no answer, or an error event mid-stream).
System messages become the ``system`` prompt; tool results become ``tool_result``
blocks of a user turn, as the Messages API wants them. ``ModelSettings.temperature``
is not sent: the Messages API of the pinned SDK (2.12) takes no sampling parameters.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
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
    from anthropic import AsyncAnthropic
    from anthropic.types import ToolUseBlock

PRICES_PER_MTOK: dict[str, tuple[float, float]] = {
    # Anthropic's pricing page (platform.claude.com/docs/about-claude/pricing)
    "claude-opus-4-6": (5.00, 25.00),
    "claude-opus-4-5": (5.00, 25.00),
    "claude-opus-4-1": (15.00, 75.00),
    "claude-opus-4-0": (15.00, 75.00),
    "claude-opus-4": (15.00, 75.00),
    "claude-sonnet-4-6": (3.00, 15.00),
    "claude-sonnet-4-5": (3.00, 15.00),
    "claude-sonnet-4-0": (3.00, 15.00),
    "claude-sonnet-4": (3.00, 15.00),
    "claude-haiku-4-5": (1.00, 5.00),
    "claude-3-5-haiku": (0.80, 4.00),
    "claude-3-haiku": (0.25, 1.25),
    # later models, as simonw/llm-prices lists them
    "claude-opus-4-7": (5.00, 25.00),
    "claude-opus-4-8": (5.00, 25.00),
    "claude-opus-5": (5.00, 25.00),
    "claude-opus-5-5": (4.00, 20.00),
    "claude-sonnet-5": (2.00, 10.00),
    "claude-sonnet-5-5": (2.00, 10.00),
    "claude-fable-5": (10.00, 50.00),
    "claude-fable-5-1": (10.00, 50.00),
    "claude-mythos-5": (10.00, 50.00),
}
"""USD per million (input, output) tokens (no long-context, batch or cache rates); a
dated snapshot (``-20250929``) or a ``-latest`` alias prices as its base model, any
other name is unknown (0.0)."""


def price_per_mtok(model_name: str) -> tuple[float, float] | None:
    """The (input, output) USD price per million tokens of ``model_name``, if known."""
    for base, price in PRICES_PER_MTOK.items():
        if re.fullmatch(rf"{re.escape(base)}(-\d{{8}}|-latest)?", model_name):
            return price
    return None


CONTEXT_WINDOW = 200_000
"""Tokens per call of every Claude model named here (without the long-context beta)."""


class AnthropicModel(Model):
    """A Claude model behind the Anthropic Messages API (``/v1/messages``)."""

    provider = "anthropic"

    def __init__(
        self,
        model_name: str,
        *,
        api_key: str | None,
        base_url: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 0,
    ) -> None:
        """Remember where to call; the SDK client is created on first use.

        Args:
            model_name: The model as the API knows it, e.g. ``claude-sonnet-4-5``.
            api_key: The key; required (the SDK is never left to look for one).
            base_url: The endpoint; the SDK's default (api.anthropic.com) if None.
            timeout: Seconds before one HTTP attempt gives up.
            max_retries: How often the SDK itself retries connection errors, 429 and 5xx;
                none by default: the engine retries (``engine/llm.py``, ``Retry``), so each
                attempt is a recorded model call.

        Raises:
            errors.ConfigError: There is no key.
        """
        if not api_key:
            raise errors.ConfigError(
                f"anthropic:{model_name} needs an API key: set HANSA_ANTHROPIC_API_KEY"
                " or ANTHROPIC_API_KEY"
            )
        self.model_name = model_name
        self.context_window = CONTEXT_WINDOW
        self._api_key = api_key
        self._base_url = base_url
        self._timeout = timeout
        self._max_retries = max_retries
        self._client: AsyncAnthropic | None = None

    def _sdk(self) -> AsyncAnthropic:
        if self._client is None:
            try:
                from anthropic import AsyncAnthropic
            except ImportError as exc:
                raise errors.ConfigError(
                    "the anthropic provider needs the anthropic SDK: pip install 'hansa'."
                ) from exc
            self._client = AsyncAnthropic(
                api_key=self._api_key,
                base_url=self._base_url,
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
        system = "\n\n".join(m.content for m in messages if m.role == "system")
        arguments: dict[str, Any] = {
            "model": self.model_name,
            "messages": _turns(messages, names),
            # no temperature: this SDK's Messages API has no sampling parameters
            "max_tokens": settings.max_tokens,
        }
        if system:
            arguments["system"] = system
        if params.output_schema is not None:
            arguments["output_config"] = {
                "format": {"type": "json_schema", "schema": params.output_schema}
            }
        if params.tools:
            arguments["tools"] = [
                {
                    "name": names.wire(tool.name),
                    "description": tool.description,
                    "input_schema": tool.parameters,
                }
                for tool in params.tools
            ]
            choice = params.tool_choice
            arguments["tool_choice"] = (
                {"type": "tool", "name": names.wire(choice.name)}
                if isinstance(choice, UseTool)
                else {"type": {"auto": "auto", "none": "none", "required": "any"}[choice]}
            )
        return arguments

    async def request(
        self, messages: list[ChatMessage], settings: ModelSettings, params: RequestParams
    ) -> ModelResponse:
        """Answer ``messages`` with one message of the Messages API.

        Raises:
            errors.ProviderHTTPError: The API answered with an error status.
            errors.ProviderError: The API could not be reached or timed out.
        """
        from anthropic.types import TextBlock, ToolUseBlock

        client = self._sdk()
        names = ToolNames(params.tools)
        with _translated_errors():
            message = await client.messages.create(
                **self._arguments(messages, settings, params, names)
            )
        text = "".join(block.text for block in message.content if isinstance(block, TextBlock))
        calls = tuple(
            ToolCall(block.id, names.name(block.name), dict(block.input))
            for block in message.content
            if isinstance(block, ToolUseBlock)
        )
        usage = message.usage
        prompt = (
            usage.input_tokens
            + (usage.cache_creation_input_tokens or 0)
            + (usage.cache_read_input_tokens or 0)
        )
        return ModelResponse(
            text=text,
            usage=Usage(prompt, usage.output_tokens),
            model=message.model or self.model_name,
            tool_calls=calls,
        )

    async def stream_items(
        self, messages: list[ChatMessage], settings: ModelSettings, params: RequestParams
    ) -> AsyncIterator[StreamItem]:
        """Yield text deltas as the API streams them, and each tool call once its block ends.

        Raises:
            errors.ProviderHTTPError: The API answered with an error status.
            errors.ProviderError: The API could not be reached or timed out, sent an
                error event mid-stream, or a tool call's input is not a JSON object.
        """
        from anthropic.types import (
            InputJSONDelta,
            RawContentBlockDeltaEvent,
            RawContentBlockStartEvent,
            RawContentBlockStopEvent,
            RawMessageDeltaEvent,
            RawMessageStartEvent,
            ToolUseBlock,
        )
        from anthropic.types import TextDelta as SdkTextDelta

        client = self._sdk()
        names = ToolNames(params.tools)
        parts: list[str] = []
        calls: list[ToolCall] = []
        open_calls: dict[int, tuple[ToolUseBlock, list[str]]] = {}
        prompt = completion = 0
        model = self.model_name
        with _translated_errors():
            events = await client.messages.create(
                **self._arguments(messages, settings, params, names), stream=True
            )
            async with events:
                async for event in events:
                    if isinstance(event, RawMessageStartEvent):
                        model = event.message.model or model
                        start = event.message.usage
                        prompt = (
                            start.input_tokens
                            + (start.cache_creation_input_tokens or 0)
                            + (start.cache_read_input_tokens or 0)
                        )
                        completion = start.output_tokens
                    elif isinstance(event, RawContentBlockStartEvent):
                        if isinstance(event.content_block, ToolUseBlock):
                            open_calls[event.index] = (event.content_block, [])
                    elif isinstance(event, RawContentBlockDeltaEvent):
                        delta = event.delta
                        if isinstance(delta, SdkTextDelta) and delta.text:
                            parts.append(delta.text)
                            yield TextDelta(delta.text)
                        elif isinstance(delta, InputJSONDelta) and event.index in open_calls:
                            open_calls[event.index][1].append(delta.partial_json)
                    elif isinstance(event, RawContentBlockStopEvent):
                        if event.index in open_calls:
                            block, pieces = open_calls.pop(event.index)
                            call = _whole_call(block, pieces, names)
                            calls.append(call)
                            yield call
                    elif isinstance(event, RawMessageDeltaEvent):
                        # cumulative counts; input is repeated only by some servers
                        completion = event.usage.output_tokens
                        if event.usage.input_tokens is not None:
                            prompt = (
                                event.usage.input_tokens
                                + (event.usage.cache_creation_input_tokens or 0)
                                + (event.usage.cache_read_input_tokens or 0)
                            )
        yield ModelResponse(
            text="".join(parts),
            usage=Usage(prompt, completion),
            model=model,
            tool_calls=tuple(calls),
        )

    def cost_usd(self, usage: Usage) -> float:
        """Price ``usage`` with the table of known Claude models; 0.0 for any other model."""
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


def _turns(messages: list[ChatMessage], names: ToolNames) -> list[dict[str, Any]]:
    """The conversation as Messages API turns (system messages go to ``system``)."""
    turns: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system":
            continue
        if message.role == "tool":
            result: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": message.tool_call_id,
                "content": message.content,
            }
            if message.is_error:
                result["is_error"] = True
            last = turns[-1] if turns else None
            # the results of one assistant turn's calls go back in one user turn
            if last is not None and last["role"] == "user" and isinstance(last["content"], list):
                last["content"].append(result)
            else:
                turns.append({"role": "user", "content": [result]})
        elif message.tool_calls:
            blocks: list[dict[str, Any]] = (
                [{"type": "text", "text": message.content}] if message.content else []
            )
            blocks += [
                {"type": "tool_use", "id": c.id, "name": names.wire(c.name), "input": c.arguments}
                for c in message.tool_calls
            ]
            turns.append({"role": "assistant", "content": blocks})
        else:
            turns.append({"role": message.role, "content": message.content})
    return turns


def _whole_call(block: ToolUseBlock, pieces: list[str], names: ToolNames) -> ToolCall:
    """A tool_use block and its streamed input, as one call."""
    arguments = parsed_arguments("".join(pieces), block.name) if pieces else dict(block.input)
    return ToolCall(block.id, names.name(block.name), arguments)


@contextmanager
def _translated_errors() -> Iterator[None]:
    import anthropic

    try:
        yield
    except anthropic.APIStatusError as exc:
        if exc.status_code < 400:  # an error event in a stream that began well
            body = _body(exc)  # overloaded_error: the API is busy for now
            raise errors.ProviderError(
                f"model provider failed mid-stream: {body}", transient="overloaded" in body
            ) from exc
        raise errors.ProviderHTTPError(
            exc.status_code, _body(exc), retry_after=retry_after(exc)
        ) from exc
    except anthropic.APITimeoutError as exc:
        raise errors.ProviderError(f"model provider timed out: {exc}", transient=True) from exc
    except anthropic.APIConnectionError as exc:
        raise errors.ProviderError(
            f"cannot reach the model provider: {exc}", transient=True
        ) from exc
    except anthropic.AnthropicError as exc:
        raise errors.ProviderError(f"model provider failed: {exc}") from exc


def _body(exc: Any) -> str:
    if exc.body is not None and not isinstance(exc.body, str):
        return json.dumps(exc.body)
    try:
        return str(exc.response.text)
    except Exception:  # the body of a streamed error may be unread
        return str(exc.body or exc.message)
