"""The one condition evaluator of rules and graphs (decision 0022): field paths into the
facts, sixteen operators, a time box.

The time box has two edges: one pattern search may take :data:`MATCH_TIMEOUT_SECONDS`,
and one evaluation (all the rules of a trigger, a graph's condition node) may take its
``budget_seconds`` in all; a ``matches`` or ``words`` test past either counts as no match
and says ``timedOut``. Searches release the GIL (``concurrent=True``), so callers run an
evaluation on a worker thread (``anyio.to_thread``) and the event loop goes on serving
while a pathological pattern burns its time box. Compiled patterns are kept across
evaluations (:func:`_compiled`), and a ``words`` list longer than :data:`MAX_WORDS_CHARS`
is never compiled (compiling holds the GIL: 20,000 words held it 200 ms).

A rule tests the facts of its trigger (``message``, ``context``…); a graph's ``condition``
node tests the facts its fields name, filled as it starts from what its templates could
name (``engine/templates.py``: ``logsResult.total``, ``llmResponse``). Same shape
(``domain/rules.py``), same operators, same results.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import regex

from hansa.domain.rules import Condition, ConditionGroup, ConditionResult, Operator

MATCH_TIMEOUT_SECONDS = 0.05
"""How long one condition, routing rule, playbook trigger or answer extractor may match
(patterns are data, and a bad one must not stall a turn); past it the pattern counts as no
match."""
DEFAULT_BUDGET_SECONDS = 0.25
"""How long one evaluation's pattern tests may take in all, unless its caller says."""
MAX_WORDS_CHARS = 20_000
"""The most characters a ``words`` list may hold and still be compiled (the ceiling of the
``HANSA_MAX_RULE_WORDS_CHARS`` setting; rules stored before that cap count as timed out)."""
MISSING = object()
"""A field path that leads nowhere in the facts."""
SHOWN_CHARS = 500
"""The most of a fact a condition's result shows (``actual``): a result is stored in the
``rule_evaluated`` event and a condition node's result, once per test, and 50 tests of a
20,000-character message would store it 50 times."""


def lookup(facts: dict[str, Any], path: str) -> Any:
    """The fact at a dotted ``path`` (``context.plan.tier``), or ``MISSING``."""
    found: Any = facts
    for part in path.split("."):
        if isinstance(found, dict) and part in found:
            found = found[part]
        else:
            return MISSING
    return found


def word_pattern(words: list[str]) -> regex.Pattern[str]:
    """Any of ``words``, whole, with an optional plural or verb ending (decision 0002)."""
    alternatives = "|".join(regex.escape(w.lower()) for w in words)
    return regex.compile(rf"\b(?:{alternatives})(?:s|es|ing|ed)?\b", regex.IGNORECASE)


MAX_PATTERN_SIZE = 5_000
"""The most items a ``matches`` pattern may expand to once its counted repeats are written
out (:func:`expanded_size`): compiling writes them out, and ``(a{1000}){1000}`` took 0.4 s
(``((a{300}){300}){30}`` 1.9 s) where a rule is saved; 10,000 items took ~1.4 MB."""
_COUNTED = regex.compile(r"\{(\d*)(?:,\d*)?\}")


def expanded_size(source: str) -> int:
    """About how many items compiling ``source`` writes out: each counted repeat's least
    count multiplies what it repeats (nested ones multiply each other); a cheap scan, no
    compile."""
    frames: list[list[int]] = [[0, 0]]  # per group: [size so far, size of its last item]
    i = 0
    while i < len(source):
        char, step, size = source[i], 1, 1
        if char == "\\":
            step = 2
        elif char == "[":
            end = i + 1 + (source[i + 1 : i + 2] == "]")
            while end < len(source) and source[end] != "]":
                end += 2 if source[end] == "\\" else 1
            step = end + 1 - i
        elif char == "(":
            frames.append([0, 0])
            i += 1
            continue
        elif char == ")" and len(frames) > 1:
            size = max(1, frames.pop()[0])
        elif char == "{" and (counted := _COUNTED.match(source, i)) is not None:
            digits = counted.group(1)
            times = max(1, int(digits) if 0 < len(digits) <= 9 else (1 if not digits else 10**9))
            frame = frames[-1]
            frame[0] += frame[1] * (times - 1)
            frame[1] *= times
            i = counted.end()
            continue
        frames[-1][0] += size
        frames[-1][1] = size
        i += step
    return sum(frame[0] for frame in frames)


def compile_pattern(source: str) -> regex.Pattern[str]:
    """A ``matches`` value as a case-insensitive pattern (``regex.error`` if it is not one,
    or if it would expand past :data:`MAX_PATTERN_SIZE`, which compiling would take long)."""
    if expanded_size(source) > MAX_PATTERN_SIZE:
        raise regex.error(f"its counted repeats expand to more than {MAX_PATTERN_SIZE} items")
    return regex.compile(source, regex.IGNORECASE)


_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, default=str)


def preview(value: Any) -> Any:
    """``value`` as a result shows it: itself when small, else its first
    :data:`SHOWN_CHARS` characters (as compact JSON when it is not a string) and ``…``."""
    if isinstance(value, str):
        return value if len(value) <= SHOWN_CHARS else value[:SHOWN_CHARS] + "…"
    if value is None or isinstance(value, bool | int | float):
        return value
    chunks, size = [], 0
    for chunk in _ENCODER.iterencode(value):  # lazily: a large value is never encoded whole
        chunks.append(chunk)
        size += len(chunk)
        if size > SHOWN_CHARS:
            return "".join(chunks)[:SHOWN_CHARS] + "…"
    return value


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def _compare(test: Callable[[float, float], bool]) -> Callable[[Any, Any], bool]:
    def check(actual: Any, value: Any) -> bool:
        a, b = _number(actual), _number(value)
        return a is not None and b is not None and test(a, b)

    return check


def _contains(actual: Any, value: Any) -> bool:
    if isinstance(actual, str):
        return isinstance(value, str) and value.lower() in actual.lower()
    if isinstance(actual, list | tuple):
        return value in actual
    if isinstance(actual, dict):
        return value in actual
    return False


def _affix(method: str) -> Callable[[Any, Any], bool]:
    def check(actual: Any, value: Any) -> bool:
        a, v = _text(actual), _text(value)
        return a is not None and v is not None and bool(getattr(a.lower(), method)(v.lower()))

    return check


def _member(actual: Any, value: Any) -> bool:
    return isinstance(value, list | tuple) and actual in value


def _search(pattern: regex.Pattern[str], actual: Any, timeout: float) -> str | None:
    if not isinstance(actual, str):
        return None
    found = pattern.search(actual, timeout=timeout, concurrent=True)
    return None if found is None else found.group(0)


@lru_cache(maxsize=64)
def _compiled(op: Operator, words: tuple[str, ...]) -> regex.Pattern[str]:
    """A condition's pattern, compiled once per process (a rule set fires again and again);
    the last 64 are kept (a large one takes about a megabyte)."""
    return compile_pattern(words[0]) if op is Operator.MATCHES else word_pattern(list(words))


_CHECKS: dict[Operator, Callable[[Any, Any], bool]] = {
    Operator.EQ: lambda a, v: bool(a == v),
    Operator.NEQ: lambda a, v: bool(a != v),
    Operator.GT: _compare(lambda a, b: a > b),
    Operator.GTE: _compare(lambda a, b: a >= b),
    Operator.LT: _compare(lambda a, b: a < b),
    Operator.LTE: _compare(lambda a, b: a <= b),
    Operator.CONTAINS: _contains,
    Operator.NOT_CONTAINS: lambda a, v: not _contains(a, v),
    Operator.STARTS_WITH: _affix("startswith"),
    Operator.ENDS_WITH: _affix("endswith"),
    Operator.IN: _member,
    Operator.NOT_IN: lambda a, v: isinstance(v, list | tuple) and a not in v,
}


class Evaluator:
    """Evaluates conditions for one evaluation: its pattern tests share ``budget_seconds``,
    counted from the evaluator's making (run it on a worker thread, not the event loop)."""

    def __init__(self, budget_seconds: float = DEFAULT_BUDGET_SECONDS) -> None:
        self._deadline = time.monotonic() + budget_seconds

    def group(
        self, group: ConditionGroup, facts: dict[str, Any]
    ) -> tuple[bool, list[ConditionResult]]:
        """Whether ``group`` holds, and every leaf's result (an empty group holds)."""
        results: list[ConditionResult] = []
        outcomes: list[bool] = []
        for item in group.conditions:
            if isinstance(item, ConditionGroup):
                held, inner = self.group(item, facts)
                results.extend(inner)
            else:
                result = self.condition(item, facts)
                held = result.matched
                results.append(result)
            outcomes.append(held)
        if not outcomes:
            return True, results
        return (all(outcomes) if group.logic == "and" else any(outcomes)), results

    def condition(self, condition: Condition, facts: dict[str, Any]) -> ConditionResult:
        """One condition against the facts; a missing fact matches only ``not_exists``."""
        actual = lookup(facts, condition.field)
        op, value = condition.operator, condition.value
        shown = None if actual is MISSING else preview(actual)
        if op is Operator.EXISTS or op is Operator.NOT_EXISTS:
            there = actual is not MISSING and actual is not None
            held = there if op is Operator.EXISTS else not there
            return ConditionResult(
                field=condition.field, operator=op, value=value, actual=shown, matched=held
            )
        if actual is MISSING:
            return ConditionResult(
                field=condition.field, operator=op, value=value, actual=None, matched=False
            )
        timed_out, found = False, None
        if op is Operator.MATCHES or op is Operator.WORDS:
            found, timed_out = self._find(op, value, actual)
            held = found is not None
        else:
            held = _CHECKS[op](actual, value)
        return ConditionResult(
            field=condition.field,
            operator=op,
            value=value,
            actual=shown,
            matched=held,
            found=found,
            timed_out=timed_out,
        )

    def _find(self, op: Operator, value: Any, actual: Any) -> tuple[str | None, bool]:
        """What a pattern test found, and whether it ran out of time (its own time box,
        the evaluation's budget, or a ``words`` list too large to compile)."""
        words = (value,) if isinstance(value, str) else tuple(str(w) for w in value or ())
        if sum(len(w) for w in words) > MAX_WORDS_CHARS:
            return None, True
        timeout = min(MATCH_TIMEOUT_SECONDS, self._deadline - time.monotonic())
        if timeout <= 0:
            return None, True
        try:
            return _search(_compiled(op, words), actual, timeout), False
        except (TimeoutError, regex.error):  # a pattern too large to compile counts so too
            return None, True
