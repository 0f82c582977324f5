"""Turn-taking and rules told in words (engine/triggers/explain.py): each condition with
the value the fact had, who claimed how strongly and why, who deferred to whom."""

from __future__ import annotations

from datetime import UTC, datetime

from hansa.domain import event
from hansa.domain.claims import ClaimTerms, Justification
from hansa.domain.rules import ConditionResult, Firing, Operator
from hansa.engine.triggers import explain

AT = datetime(2026, 11, 27, 10, 0, tzinfo=UTC)
NAMES = {"errBot": "Error Bot", "logBot": "Log Bot"}
TIER = ConditionResult(
    field="user.tier", operator=Operator.EQ, value="vip", actual="vip", matched=True
)


def _firing(rule: str, matched: bool, *conditions: ConditionResult) -> Firing:
    return Firing(
        rule_id=rule, priority=1, matched=matched, conditions=list(conditions), actions=[]
    )


def test_a_rule_that_fired_says_each_condition_and_its_actual_value() -> None:
    found = ConditionResult(
        field="message.content",
        operator=Operator.MATCHES,
        value="order \\d+",
        actual="x" * 99,
        matched=True,
        found="order 12",
    )
    slow = ConditionResult(
        field="message.content",
        operator=Operator.MATCHES,
        value="(a+)+$",
        matched=False,
        timed_out=True,
    )
    data = event.RuleEvaluatedData(
        trigger="message.received",
        firings=[_firing("vip", True, TIER, found), _firing("slow", False, slow)],
        skipped=3,
    )
    assert explain.rule_evaluated(data) == (
        'Rule vip fired on message.received: user.tier eq "vip" (it was "vip") and '
        'message.content matches "order \\\\d+" (found "order 12")'
    )
    none = event.RuleEvaluatedData(
        trigger="context.updated", firings=[_firing("slow", False, slow)], skipped=3
    )
    assert explain.rule_evaluated(none) == "No rule matched context.updated (4 evaluated)"
    assert explain.condition(slow) == 'message.content matches "(a+)+$" (timed out)'
    long = ConditionResult(
        field="context.note", operator=Operator.EXISTS, actual="y" * 99, matched=True
    )
    said = explain.condition(long)
    assert said.startswith('context.note exists (it was "yyy') and said.endswith("…)")
    assert len(said) < 100


def test_claims_defers_observers_and_the_responder_are_told_with_their_reasons() -> None:
    terms = ClaimTerms(claimed_at=AT, expires_at=AT, priority=30)
    ruled = Justification(reason="logs", trigger_rule="r1", conditions=[TIER], confidence=0.8)
    claim = event.ClaimData(assistant_key="technicalLead", justification=ruled, claim=terms)
    assert explain.claimed(NAMES, claim) == (
        "technicalLead claimed the message (priority 30, confidence 0.8): logs "
        '(rule r1: user.tier eq "vip" (it was "vip"))'
    )
    reads = Justification(reason="logBot reads logs", confidence=0.9)
    defer = event.DeferData(assistant_key="logBot", justification=reads, deferred_to="errBot")
    assert explain.deferred(NAMES, defer) == (
        "Log Bot deferred to Error Bot, a stronger claim; it had claimed: logBot reads logs"
    )
    quiet = event.ObserveData(
        assistant_keys=["chief", "logBot"],
        justification=Justification(reason="no rule of theirs matched"),
    )
    assert (
        explain.observed(NAMES, quiet)
        == "chief, Log Bot watched without answering: no rule of theirs matched"
    )
    respond = event.RespondData(
        assistant_key="errBot",
        justification=Justification(reason="mine"),
        claim=terms,
        external=True,
    )
    assert explain.responded(NAMES, respond) == "Error Bot answers (from outside, on its own): mine"
