"""A playbook's searches share one time budget: a hostile message cannot make every
trigger use its whole time box in turn on the event loop (security review 2026-11-27, H1)."""

from __future__ import annotations

import time

import pytest

from hansa.engine.planning import playbooks
from hansa.engine.planning.playbooks import Playbook, Searches, find
from hansa.engine.planning.triage import triage

CATASTROPHIC = "(a|a)*$"
"""Backtracks for ever on ``"a" * n + "!"``: each search runs until its time box ends."""


def _playbook(n: int, trigger: str) -> Playbook:
    return Playbook(id=f"p{n}", title="t", intent="i", triggers=[trigger], stages=[])


def test_every_playbooks_triggers_are_searched_within_one_budget() -> None:
    evil = tuple(_playbook(n, CATASTROPHIC) for n in range(20))  # 20 time boxes of 50 ms
    started = time.perf_counter()
    found = find("a" * 5_000 + "!", evil)
    took = time.perf_counter() - started

    assert found is None  # a search past the budget finds nothing
    # one budget (20 ms) rather than 20 x 50 ms = 1 s; generous for a loaded machine
    assert took < 0.5, f"the triggers took {took:.3f} s"


def test_a_spent_budget_finds_nothing_and_a_fresh_one_finds_the_match() -> None:
    spent = Searches(seconds=0)
    assert spent.search("page", "a new page") is None
    assert Searches().search("page", "a new page") is not None


def test_a_trigger_that_matches_within_the_budget_is_found() -> None:
    plain = (_playbook(1, r"\bnever\b"), _playbook(2, r"\bhello\b"))
    assert find("well, hello", plain) is plain[1]
    # a hostile message spends the budget on the first playbook: the rest find nothing
    assert find("a" * 5_000 + "! hello", (_playbook(3, CATASTROPHIC), *plain)) is None


def test_triage_searches_the_builtin_triggers_within_one_budget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the built-in triggers (``\b(create|…)\b.*\b(page|…)\b``) are quadratic on a message
    # repeating the first word: each used its 50 ms time box in turn (170 ms in all)
    budgets: list[Searches] = []
    made = playbooks.Searches.__init__

    def counted(self: Searches, seconds: float = playbooks.SEARCH_BUDGET_SECONDS) -> None:
        made(self, seconds)
        budgets.append(self)

    monkeypatch.setattr(playbooks.Searches, "__init__", counted)
    decision = triage("create " * 2_850)

    assert decision.playbook is None
    assert len(budgets) == 1  # every playbook's triggers, one budget
