"""The evaluator's time box (issue 28, H1): one evaluation's pattern tests share a budget,
and a ``words`` list too large to compile is never compiled (that an evaluation leaves the
event loop serving: ``tests/unit/engine/test_rule_limits.py`` and the e2e tests)."""

from __future__ import annotations

import time

import pytest
import regex

from hansa.domain.conditions import (
    MAX_PATTERN_SIZE,
    MAX_WORDS_CHARS,
    SHOWN_CHARS,
    Evaluator,
    compile_pattern,
    expanded_size,
)
from hansa.domain.rules import Condition, ConditionGroup, Operator

EVIL = Condition(field="message.content", operator=Operator.MATCHES, value=r"(a|a)*$")
FACTS = {"message": {"content": "a" * 30_000 + "!"}}


def test_fifty_catastrophic_leaves_share_one_budget() -> None:
    group = ConditionGroup(logic="or", conditions=[EVIL] * 50)
    started = time.monotonic()
    held, results = Evaluator(budget_seconds=0.1).group(group, FACTS)
    took = time.monotonic() - started
    assert not held
    assert all(r.timed_out and not r.matched for r in results)
    assert took < 1.0, f"50 leaves took {took:.2f} s; the budget is 0.1 s (2.5 s without it)"


def test_tests_other_than_patterns_run_past_the_budget() -> None:
    cheap = Condition(field="message.content", operator=Operator.CONTAINS, value="!")
    group = ConditionGroup(logic="and", conditions=[EVIL, cheap])
    _, (evil, plain) = Evaluator(budget_seconds=0.01).group(group, FACTS)
    assert evil.timed_out and plain.matched and not plain.timed_out


def test_a_words_list_too_large_to_compile_times_out_without_compiling() -> None:
    words = [f"w{n:05d}" for n in range(MAX_WORDS_CHARS // 5)]  # 6 chars each: past it
    huge = Condition(field="message.content", operator=Operator.WORDS, value=words)
    started = time.monotonic()
    result = Evaluator().condition(huge, {"message": {"content": "w00001"}})
    assert result.timed_out and not result.matched
    assert time.monotonic() - started < 0.1, "compiling it would take seconds"


def test_a_pattern_whose_repeats_expand_too_far_is_refused_without_compiling() -> None:
    assert expanded_size(r"order\s+\d+") < 20 and expanded_size("(a{100}){100}") == 10_000
    for source in ("(a{1000}){1000}", "((a{300}){300}){30}", "a{99999999999}"):
        assert expanded_size(source) > MAX_PATTERN_SIZE
        started = time.monotonic()
        with pytest.raises(regex.error, match="expand"):
            compile_pattern(source)
        assert time.monotonic() - started < 0.05, "refused before compiling (0.4 s to 2 s)"
    stored = Condition(field="message.content", operator=Operator.MATCHES, value="(a{9}){9999}")
    result = Evaluator().condition(stored, {"message": {"content": "a"}})
    assert result.timed_out and not result.matched


def test_a_result_shows_a_bounded_part_of_a_large_fact() -> None:
    """Each test's result is stored (the event, a condition node's result): 50 tests of a
    20,000-character message stored it 50 times."""
    contains = Condition(field="message.content", operator=Operator.CONTAINS, value="!")
    result = Evaluator().condition(contains, FACTS)
    assert result.matched and result.actual == "a" * SHOWN_CHARS + "…"
    whole = Condition(field="context", operator=Operator.EXISTS)
    big = Evaluator().condition(whole, {"context": {"k": ["x" * 1000] * 1000}})
    assert isinstance(big.actual, str) and len(big.actual) == SHOWN_CHARS + 1
    small = Evaluator().condition(whole, {"context": {"tier": "gold"}})
    assert small.actual == {"tier": "gold"}
