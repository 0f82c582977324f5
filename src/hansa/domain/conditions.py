"""The one condition evaluator of rules and graphs (decision 0022): field paths into the
facts, sixteen operators, a time box.

A rule tests the facts of its trigger (``message``, ``context``…); a graph's ``condition``
node tests the facts its fields name, filled as it starts from what its templates could
name (``engine/templates.py``: ``logsResult.total``, ``llmResponse``). Same shape
(``domain/rules.py``), same operators, same results.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import regex

from hansa.domain.rules import Condition, ConditionGroup, ConditionResult, Operator

MATCH_TIMEOUT_SECONDS = 0.05
"""How long one condition, routing rule, playbook trigger or answer extractor may match
(patterns are data, and a bad one must not stall a turn); past it the pattern counts as no
match."""
MISSING = object()
"""A field path that leads nowhere in the facts."""


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


def compile_pattern(source: str) -> regex.Pattern[str]:
    """A ``matches`` value as a case-insensitive pattern (``regex.error`` if it is not one)."""
    return regex.compile(source, regex.IGNORECASE)


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


def _search(pattern: regex.Pattern[str], actual: Any) -> str | None:
    if not isinstance(actual, str):
        return None
    found = pattern.search(actual, timeout=MATCH_TIMEOUT_SECONDS)
    return None if found is None else found.group(0)


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
    """Evaluates conditions; compiled patterns are kept, so a rule set compiles once."""

    def __init__(self) -> None:
        self._patterns: dict[tuple[Operator, str], regex.Pattern[str]] = {}

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
        shown = None if actual is MISSING else actual
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
            try:
                found = _search(self._pattern(op, value), actual)
            except TimeoutError:
                timed_out = True
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

    def _pattern(self, op: Operator, value: Any) -> regex.Pattern[str]:
        words = [value] if isinstance(value, str) else [str(w) for w in value or []]
        key = (op, "\x00".join(words))
        pattern = self._patterns.get(key)
        if pattern is None:
            pattern = compile_pattern(words[0]) if op is Operator.MATCHES else word_pattern(words)
            self._patterns[key] = pattern
        return pattern
