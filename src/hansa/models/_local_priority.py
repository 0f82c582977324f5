"""Background work on the embedded model that never holds up a reply (issue 34 item 2).

The rolling summary is a call of Hans's on the same small model the replies use. Run on
the replies' llama.cpp context it evicted the prompt prefix they had evaluated, and a
reply queued behind it waited its 3-9 s. So background purposes (``BACKGROUND_PURPOSES``)
run on a second context of the same weights (mapped once: the second costs its KV cache,
~50 MB for 2,048 tokens), and that context evaluates and generates in chunks of
``CHUNK_TOKENS``, waiting before each chunk while a foreground call is *urgent*: from its
start to its first streamed text (the time to first text the user waits for). A reply's
prompt evaluation therefore shares the cores with at most one chunk of background work;
its generation after the first text may share them with the background.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from hansa import errors

if TYPE_CHECKING:
    from llama_cpp import Llama

BACKGROUND_PURPOSES = frozenset({"summary"})
"""The calls no one waits for (``engine/summarizer.PURPOSE``): run on the background context."""
CHUNK_TOKENS = 32
"""Tokens the background context evaluates between two looks at the foreground; also its
batch size (its logits buffer is ``CHUNK_TOKENS`` rows of the vocabulary, not 512)."""
MAX_YIELD_SECONDS = 30.0
"""The longest one background chunk waits for the foreground: a steady run of foreground
calls slows background work down, never starves it."""


class Urgency:
    """How many foreground calls are urgent now; background work waits while any is."""

    def __init__(self) -> None:
        """Nothing is urgent."""
        self._changed = threading.Condition()
        self._urgent = 0
        self._closed = False

    def close(self) -> None:
        """Stop background work at its next chunk (``wait`` raises): the model is closing,
        and freeing its context must not wait for a summary to finish."""
        with self._changed:
            self._closed = True
            self._changed.notify_all()

    def begin(self) -> Callable[[], None]:
        """Mark one foreground call urgent; the function returned ends that (once, however
        often it is called)."""
        with self._changed:
            self._urgent += 1
        ended = threading.Event()

        def end() -> None:
            if ended.is_set():
                return
            ended.set()
            with self._changed:
                self._urgent -= 1
                self._changed.notify_all()

        return end

    @property
    def urgent(self) -> int:
        """The foreground calls urgent now."""
        return self._urgent

    def wait(self, timeout: float = MAX_YIELD_SECONDS) -> bool:
        """Block until no foreground call is urgent (at most ``timeout`` seconds); whether
        none is.

        Raises:
            errors.ProviderError: The model is closing (``close``).
        """
        with self._changed:
            idle = self._changed.wait_for(lambda: self._urgent == 0 or self._closed, timeout)
            if self._closed:
                raise errors.ProviderError("the embedded model is closing: background work stopped")
            return idle


def yield_to(llm: Llama, urgency: Urgency, chunk: int = CHUNK_TOKENS) -> None:
    """Make ``llm`` (a background context) evaluate in chunks of ``chunk`` tokens, waiting
    for ``urgency`` before each: its prompt and each generated token alike, since
    llama-cpp-python's ``generate`` evaluates both through ``Llama.eval``."""
    evaluate = llm.eval

    def chunked(tokens: Sequence[int]) -> None:
        for start in range(0, len(tokens), chunk):
            urgency.wait()
            evaluate(tokens[start : start + chunk])

    llm.eval = chunked  # type: ignore[method-assign]  # the one hook llama.cpp's loop offers
