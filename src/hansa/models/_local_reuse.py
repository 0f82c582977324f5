"""Evaluated tokens that moved in the prompt are kept, not evaluated again (issue 34 item 2).

llama-cpp-python keeps the tokens its context last evaluated and, for a new prompt, reuses
only their common beginning. A conversation's prompts rarely grow only at the end: a turn
to another agent leaves the previous agent's system message out from between the history
and the question, a history over its budget drops its oldest message, and a new rolling
summary puts new text before the history. Everything after such a change was evaluated
already, a few places off. So, before each prompt, the context's cache is matched against
it, as llama.cpp's server does (``--cache-reuse``) and further: after the common beginning,
each run of at least ``MIN_RUN`` cached tokens found, in order, in the prompt is moved to
its new position (the tokens skipped are removed; llama.cpp shifts the keys' rotary
positions), the prompt's new text between two runs (a *gap*) is evaluated in place, and
only what follows the last run is left to ``generate``.

A gap is evaluated on a second sequence of the same cache (``SEQUENCES``): llama.cpp takes a
batch only at the position after a sequence's last, so sequence 1 shares the cells before
the gap, evaluates it, and hands its cells to sequence 0. A context built with one sequence
(the background context) moves runs but evaluates no gap: what follows a gap is evaluated
again there.

A moved run keeps the attention it computed over what preceded it then (the previous
agent's persona, the older summary), not over what precedes it now; llama.cpp's server
makes the same trade. Runs shorter than ``MIN_RUN`` are evaluated again, so a few tokens
that match by chance (a role header) are never reused out of their place.
"""

from __future__ import annotations

import bisect
import contextlib
import logging
from collections import defaultdict
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from llama_cpp import Llama

MIN_RUN = 16
"""The fewest tokens a moved run must have to be reused."""
SEQUENCES = 2
"""The sequences of a context that evaluates gaps: the prompt's, and one to evaluate on."""
_GAP = 1
"""The sequence a gap is evaluated on."""

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Run:
    """``length`` cached tokens at ``cached`` that the prompt has at ``prompt``."""

    cached: int
    prompt: int
    length: int

    @property
    def shift(self) -> int:
        """How far the run moves."""
        return self.prompt - self.cached


def runs(
    cached: Sequence[int], prompt: Sequence[int], min_run: int = MIN_RUN, *, gaps: bool = True
) -> list[Run]:
    """The cached runs the prompt reuses, in order: the common beginning (if any), then each
    later run of at least ``min_run`` tokens, found in the cache after the previous run, that
    the prompt has after the previous run (right after it, without ``gaps``). The prompt's
    last token is never in a run (its logits are sampled, so it is always evaluated)."""
    usable = len(prompt) - 1
    found: list[Run] = []
    head = 0
    while head < min(len(cached), usable) and cached[head] == prompt[head]:
        head += 1
    if head:
        found.append(Run(0, 0, head))
    starts = _starts(cached, head, min_run)
    head_c = head_p = head
    while head_p + min_run <= usable:
        at = starts.get(tuple(prompt[head_p : head_p + min_run]), [])
        i = bisect.bisect_left(at, head_c)
        if i == len(at):
            if not gaps:
                break
            head_p += 1  # new text: a gap, evaluated in place
            continue
        start = at[i]
        length = min_run
        while (
            start + length < len(cached)
            and head_p + length < usable
            and cached[start + length] == prompt[head_p + length]
        ):
            length += 1
        found.append(Run(start, head_p, length))
        head_c = start + length
        head_p += length
    return found


def _starts(cached: Sequence[int], after: int, width: int) -> dict[tuple[int, ...], list[int]]:
    """Where each ``width`` tokens of the cache (from ``after`` on) start, ascending."""
    starts: dict[tuple[int, ...], list[int]] = defaultdict(list)
    for at in range(after, len(cached) - width + 1):
        starts[tuple(cached[at : at + width])].append(at)
    return starts


@contextlib.contextmanager
def two_sequences() -> Iterator[None]:
    """While open, a new ``Llama`` gets a context of ``SEQUENCES`` sequences sharing one
    cache of its ``n_ctx`` cells (llama-cpp-python's constructor takes no such setting)."""
    import llama_cpp.llama_cpp as low

    defaults = low.llama_context_default_params

    def params() -> Any:
        chosen = defaults()
        chosen.n_seq_max = SEQUENCES
        chosen.kv_unified = True  # not a cache per sequence of n_ctx / SEQUENCES cells
        return chosen

    low.llama_context_default_params = params
    try:
        yield
    finally:
        low.llama_context_default_params = defaults


def reuse_moved(llm: Llama, min_run: int = MIN_RUN) -> None:
    """Make ``llm`` reuse the cached runs each prompt has before it evaluates the rest (a
    no-op for a model whose cache cannot shift positions); it evaluates gaps in place if its
    context was built in ``two_sequences``."""
    import llama_cpp

    memory = llm._ctx.memory
    if memory is None or not llama_cpp.llama_memory_can_shift(memory):
        return
    gaps = llm.context_params.n_seq_max >= SEQUENCES
    generate = llm.generate

    def generating(
        tokens: Sequence[int], *args: Any, **kwargs: Any
    ) -> Generator[int, Sequence[int] | None, None]:
        if kwargs.get("reset", True) and llm.n_tokens > 0:
            _reuse(llm, list(tokens), min_run, gaps=gaps)
        return (yield from generate(tokens, *args, **kwargs))

    llm.generate = generating  # type: ignore[method-assign]  # as _local_priority hooks eval


def _reuse(llm: Llama, prompt: list[int], min_run: int, *, gaps: bool) -> None:
    """Put the runs in place, evaluate the gaps, and mark all of it evaluated: ``generate``
    keeps it as the prompt's common beginning and evaluates what follows."""
    cached = llm.input_ids[: llm.n_tokens].tolist()
    found = runs(cached, prompt, min_run, gaps=gaps)
    if not found or found == [Run(0, 0, found[0].length)]:
        return  # llama-cpp-python's own prefix match does it all
    ctx = llm._ctx
    kept = 0
    for run in found:  # drop every cached token no run keeps, before anything moves
        if not ctx.kv_cache_seq_rm(0, kept, run.cached):
            return  # this cache cannot drop a middle part; the prefix match still holds
        kept = run.cached + run.length
    ctx.kv_cache_seq_rm(0, kept, -1)
    # Left moves first, from the front; then right moves from the back: a run never lands
    # on cells of a run that has not moved yet.
    for run in [r for r in found if r.shift < 0] + [r for r in reversed(found) if r.shift > 0]:
        ctx.kv_cache_seq_shift(0, run.cached, run.cached + run.length, run.shift)
    end = 0
    evaluated = 0
    for run in found:
        if run.prompt > end:
            try:
                _evaluate_gap(llm, prompt[end : run.prompt], end)
            except RuntimeError:  # llama_decode refused: keep what is in place before it
                _log.warning("the embedded model could not evaluate a gap of its prompt")
                ctx.kv_cache_seq_rm(0, end, -1)
                break
            evaluated += run.prompt - end
        end = run.prompt + run.length
    llm.input_ids[:end] = prompt[:end]
    llm.n_tokens = end
    _log.debug(
        "prompt of %d tokens: %d kept, %d in gaps evaluated, %d left to evaluate",
        len(prompt),
        end - evaluated,
        evaluated,
        len(prompt) - end,
    )


def _evaluate_gap(llm: Llama, tokens: list[int], at: int) -> None:
    """Evaluate ``tokens`` at positions from ``at`` on, attending to what the prompt has
    before ``at``, and add them to the prompt's sequence."""
    ctx = llm._ctx
    ctx.kv_cache_seq_cp(0, _GAP, 0, at)  # the gap's sequence shares what comes before it
    try:
        batch = llm._batch.batch
        for start in range(0, len(tokens), llm.n_batch):
            part = tokens[start : start + llm.n_batch]
            batch.n_tokens = len(part)
            for i, token in enumerate(part):
                batch.token[i] = token
                batch.pos[i] = at + start + i
                batch.seq_id[i][0] = _GAP
                batch.n_seq_id[i] = 1
                batch.logits[i] = False
            batch.logits[len(part) - 1] = True
            ctx.decode(llm._batch)
        ctx.kv_cache_seq_cp(_GAP, 0, at, at + len(tokens))
    finally:
        ctx.kv_cache_seq_rm(_GAP, -1, -1)
