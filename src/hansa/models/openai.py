"""Any OpenAI-compatible chat endpoint, through the official ``openai`` SDK.

The SDK is imported lazily so that Hansa imports without it; its exceptions are
translated at this boundary into ``errors.ProviderHTTPError`` (the server
answered with an error status) and ``errors.ProviderError`` (no answer at all).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from hansa import errors
from hansa.models.base import (
    ChatMessage,
    Model,
    ModelResponse,
    ModelSettings,
    RequestParams,
    StreamItem,
    TextDelta,
    Usage,
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
        max_retries: int = 2,
    ) -> None:
        """Remember where to call; the SDK client is created on first use.

        Args:
            model_name: The model as the endpoint knows it, e.g. ``gpt-4o-mini``.
            base_url: The endpoint, e.g. ``http://127.0.0.1:8080/v1``; the SDK's default if None.
            api_key: The key; local servers that need none get a placeholder.
            timeout: Seconds before one HTTP attempt gives up.
            max_retries: How often the SDK retries connection errors, 429 and 5xx.
        """
        self.model_name = model_name
        self._base_url = base_url
        self._api_key = api_key or "not-needed"
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
        self, messages: list[ChatMessage], settings: ModelSettings, params: RequestParams
    ) -> dict[str, Any]:
        arguments: dict[str, Any] = {
            "model": self.model_name,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "temperature": settings.temperature,
            "max_tokens": settings.max_tokens,
        }
        if params.output_schema is not None:
            arguments["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "output", "schema": params.output_schema},
            }
        return arguments

    async def request(
        self, messages: list[ChatMessage], settings: ModelSettings, params: RequestParams
    ) -> ModelResponse:
        """Answer ``messages`` with one chat completion.

        Raises:
            errors.ProviderHTTPError: The endpoint answered with an error status.
            errors.ProviderError: The endpoint could not be reached or timed out.
        """
        client = self._sdk()
        with _translated_errors():
            completion = await client.chat.completions.create(
                **self._arguments(messages, settings, params)
            )
        text = completion.choices[0].message.content if completion.choices else None
        usage = completion.usage
        return ModelResponse(
            text=text or "",
            usage=Usage(usage.prompt_tokens, usage.completion_tokens) if usage else Usage(),
            model=completion.model or self.model_name,
        )

    async def stream(
        self, messages: list[ChatMessage], settings: ModelSettings, params: RequestParams
    ) -> AsyncIterator[StreamItem]:
        """Yield text deltas as the endpoint sends them, then the whole response.

        Usage is asked for with ``stream_options.include_usage``; a server that
        does not send it yields zero token counts.

        Raises:
            errors.ProviderHTTPError: The endpoint answered with an error status.
            errors.ProviderError: The endpoint could not be reached or timed out.
        """
        client = self._sdk()
        parts: list[str] = []
        usage = Usage()
        model = self.model_name
        with _translated_errors():
            chunks = await client.chat.completions.create(
                **self._arguments(messages, settings, params),
                stream=True,
                stream_options={"include_usage": True},
            )
            async with chunks:
                async for chunk in chunks:
                    model = chunk.model or model
                    if chunk.usage is not None:
                        usage = Usage(chunk.usage.prompt_tokens, chunk.usage.completion_tokens)
                    text = chunk.choices[0].delta.content if chunk.choices else None
                    if text:
                        parts.append(text)
                        yield TextDelta(text)
        yield ModelResponse(text="".join(parts), usage=usage, model=model)

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


@contextmanager
def _translated_errors() -> Iterator[None]:
    import openai

    try:
        yield
    except openai.APIStatusError as exc:
        raise errors.ProviderHTTPError(exc.status_code, _body(exc)) from exc
    except openai.APITimeoutError as exc:
        raise errors.ProviderError(f"model provider timed out: {exc}") from exc
    except openai.APIConnectionError as exc:
        raise errors.ProviderError(f"cannot reach the model provider: {exc}") from exc
    except openai.OpenAIError as exc:
        raise errors.ProviderError(f"model provider failed: {exc}") from exc


def _body(exc: Any) -> str:
    try:
        return str(exc.response.text)
    except Exception:  # the body of a streamed error may be unread
        return str(exc.message)
