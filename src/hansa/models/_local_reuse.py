"""Evaluated tokens that moved in the prompt are kept, not evaluated again (issue 34 item 2).

llama-cpp-python keeps the tokens its context last evaluated and, for a new prompt, reuses
only their common beginning. A conversation's prompts rarely grow only at the end: a turn
to another agent drops the previous agent's system message from between the history and the
question, and a history over its budget drops its oldest message. Everything after such a
gap was evaluated already, one place further on. So, before each prompt, the context's
cache is matched against it the way llama.cpp's server does (``--cache-reuse``): after the
common beginning, runs of at least ``MIN_RUN`` cached tokens that the prompt continues with
are moved to their new positions (the tokens skipped between them are removed; llama.cpp
shifts the keys' rotary positions), and only what follows the last run is evaluated.

A moved run keeps the attention it computed over what preceded it then (the previous
agent's persona, an older message), not over what precedes it now; llama.cpp's server makes
the same trade. Runs shorter than ``MIN_RUN`` are evaluated again, so a few tokens that
happen to match (a role header) are never reused out of their place.
"""

from __future__ import annotations

import logging
from collections.abc import Generator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from llama_cpp import Llama

MIN_RUN = 16
"""The fewest tokens a moved run must have to be reused."""

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Run:
    """``length`` cached tokens at ``cached`` that the prompt has at ``prompt``."""

    cached: int
    prompt: int
    length: int


def runs(cached: Sequence[int], prompt: Sequence[int], min_run: int = MIN_RUN) -> list[Run]:
    """The cached runs the prompt reuses, in order: the common beginning (if any), then
    each later run of at least ``min_run`` tokens that continues the prompt where the
    previous one ended. The prompt's last token is never in a run (its logits are sampled,
    so it is always evaluated)."""
    usable = len(prompt) - 1
    found: list[Run] = []
    head = 0
    while head < min(len(cached), usable) and cached[head] == prompt[head]:
        head += 1
    if head:
        found.append(Run(0, 0, head))
    head_c = head_p = head
    while head_c < len(cached) and head_p < usable:
        length = 0
        while (
            head_c + length < len(cached)
            and head_p + length < usable
            and cached[head_c + length] == prompt[head_p + length]
        ):
            length += 1
        if length >= min_run:
            found.append(Run(head_c, head_p, length))
            head_c += length
            head_p += length
        else:
            head_c += 1
    return found


def reuse_moved(llm: Llama, min_run: int = MIN_RUN) -> None:
    """Make ``llm`` move the cached runs each prompt reuses before it evaluates the rest
    (a no-op for a model whose cache cannot shift positions)."""
    import llama_cpp

    memory = llm._ctx.memory
    if memory is None or not llama_cpp.llama_memory_can_shift(memory):
        return
    generate = llm.generate

    def generating(
        tokens: Sequence[int], *args: Any, **kwargs: Any
    ) -> Generator[int, Sequence[int] | None, None]:
        if kwargs.get("reset", True) and llm.n_tokens > 0:
            _move(llm, list(tokens), min_run)
        return (yield from generate(tokens, *args, **kwargs))

    llm.generate = generating  # type: ignore[method-assign]  # as _local_priority hooks eval


def _move(llm: Llama, prompt: list[int], min_run: int) -> None:
    """Move the runs into place and mark them evaluated; ``generate`` keeps them as the
    prompt's common beginning and evaluates what follows."""
    cached = llm.input_ids[: llm.n_tokens].tolist()
    found = runs(cached, prompt, min_run)
    if len(found) < 2:  # nothing moved: llama-cpp-python's own prefix match does the rest
        return
    ctx = llm._ctx
    end = found[0].length if found[0].cached == 0 and found[0].prompt == 0 else 0
    for run in found:
        if run.cached == run.prompt:
            continue
        if not ctx.kv_cache_seq_rm(0, end, run.cached):
            break  # this cache cannot drop a middle part: keep what is in place
        ctx.kv_cache_seq_shift(0, run.cached, run.cached + run.length, run.prompt - run.cached)
        llm.input_ids[run.prompt : run.prompt + run.length] = cached[
            run.cached : run.cached + run.length
        ]
        end = run.prompt + run.length
    llm.n_tokens = end
    _log.debug(
        "prompt of %d tokens: %d kept in place, %d moved, %d to evaluate",
        len(prompt),
        found[0].length if found[0].cached == 0 else 0,
        end - (found[0].length if found[0].cached == 0 else 0),
        len(prompt) - end,
    )
