"""A model answered by a Python function: the test double for answers decided in code.

``ScriptedModel`` replays a fixed list of answers; ``FunctionModel`` calls a function
for every request, so a test can answer by purpose, by what the prompt says or by
how many calls came before, and can raise to play a failing provider. To ask for
tools, ``function`` returns a ``ModelResponse`` with ``tool_calls`` (or
``stream_function`` yields ``ToolCall``s among its text). The idea is
pydantic-ai's ``FunctionModel`` (``pydantic_ai/models/function.py``), on Hansa's
``Model`` protocol::

    def answer(messages, settings, params):
        return "Noted." if params.purpose == "reply" else "{}"

    app = create_app(settings, model=FunctionModel(answer))

It is built in Python code only; ``infer_model`` does not name it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Iterable

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

Answer = str | ModelResponse
"""What an answer function returns: the text, or a whole response (to set usage)."""

AnswerFunction = Callable[
    [list[ChatMessage], ModelSettings, RequestParams], Answer | Awaitable[Answer]
]
"""Answers one call; sync (run in a thread) or async."""

Piece = str | ToolCall
"""What a stream function yields: a text delta, or a whole tool call."""

StreamFunction = Callable[
    [list[ChatMessage], ModelSettings, RequestParams], AsyncIterable[Piece] | Iterable[Piece]
]
"""Yields one call's text deltas (and tool calls): an async generator, or an iterable."""


class FunctionModel(Model):
    """A model whose answers come from ``function`` (and ``stream_function`` when streamed).

    Given only ``function``, a stream yields its whole answer as one delta; given only
    ``stream_function``, a request joins its deltas. Usage counts words, like
    ``ScriptedModel``, unless ``function`` returns a ``ModelResponse`` with its own.
    What the functions raise reaches the caller unchanged.
    """

    provider = "function"

    def __init__(
        self,
        function: AnswerFunction | None = None,
        *,
        stream_function: StreamFunction | None = None,
        model_name: str | None = None,
        context_window: int | None = None,
    ) -> None:
        if function is None and stream_function is None:
            raise TypeError("FunctionModel needs a function, a stream_function or both")
        self.function = function
        self.stream_function = stream_function
        named = [f.__name__ for f in (function, stream_function) if f is not None]
        self.model_name = model_name or ":".join(named)
        if context_window is not None:  # a test's small window, to see prompts fitted
            self.context_window = context_window

    async def request(
        self, messages: list[ChatMessage], settings: ModelSettings, params: RequestParams
    ) -> ModelResponse:
        """Answer with ``function``'s result, or with ``stream_function``'s deltas joined."""
        if self.function is None:
            pieces = [p async for p in self._pieces(messages, settings, params)]
            return self._response(messages, pieces)
        answer: Answer | Awaitable[Answer]
        if inspect.iscoroutinefunction(self.function):
            answer = self.function(messages, settings, params)
        else:  # test code may block; it stays off the event loop
            answer = await asyncio.to_thread(self.function, messages, settings, params)
        if inspect.isawaitable(answer):
            answer = await answer
        if isinstance(answer, ModelResponse):
            return answer if answer.model else dataclasses.replace(answer, model=self.model_name)
        return self._response(messages, [answer])

    async def stream_items(
        self, messages: list[ChatMessage], settings: ModelSettings, params: RequestParams
    ) -> AsyncIterator[StreamItem]:
        """Yield ``stream_function``'s pieces (or ``function``'s answer), then the response."""
        if self.stream_function is None:
            response = await self.request(messages, settings, params)
            if response.text:
                yield TextDelta(response.text)
            for call in response.tool_calls:
                yield call
            yield response
            return
        pieces: list[Piece] = []
        async for piece in self._pieces(messages, settings, params):
            if piece:
                pieces.append(piece)
                yield TextDelta(piece) if isinstance(piece, str) else piece
        yield self._response(messages, pieces)

    async def _pieces(
        self, messages: list[ChatMessage], settings: ModelSettings, params: RequestParams
    ) -> AsyncIterator[Piece]:
        assert self.stream_function is not None
        pieces = self.stream_function(messages, settings, params)
        if isinstance(pieces, AsyncIterable):
            async for piece in pieces:
                yield piece
        else:
            for piece in pieces:
                yield piece

    def _response(self, messages: list[ChatMessage], pieces: list[Piece]) -> ModelResponse:
        text = "".join(p for p in pieces if isinstance(p, str))
        calls = tuple(p for p in pieces if isinstance(p, ToolCall))
        prompt = sum(len(m.content.split()) for m in messages)
        usage = Usage(prompt_tokens=prompt, completion_tokens=len(text.split()))
        return ModelResponse(text=text, usage=usage, model=self.model_name, tool_calls=calls)
