"""Turn-taking and rules told in words, from their events (the timeline's lines).

Who claimed a message, with which priority and confidence and why; who deferred to whom; who
watched; who answers and why; which rule fired on which trigger, each condition with the
value the fact actually had. The panel tells the same from the same events (``web/static/
turn-taking.js``).
"""

from __future__ import annotations

import json
from typing import Any

from hansa.domain import claims, event
from hansa.domain.rules import ConditionResult, Firing

ACTUAL_CHARS = 60
"""The longest actual value shown whole (longer: cut with …)."""


def rule_evaluated(data: event.RuleEvaluatedData) -> str:
    """``Rule R fired on message.received: message.content contains "logs" (it was "…")``;
    or that none did."""
    fired = [f for f in data.firings if f.matched]
    if not fired:
        return f"No rule matched {data.trigger} ({data.skipped + len(data.firings)} evaluated)"
    return "; ".join(_fired(f, data.trigger) for f in fired)


def _fired(firing: Firing, trigger: str) -> str:
    why = " and ".join(condition(c) for c in firing.conditions) or "no conditions"
    return f"Rule {firing.rule_id} fired on {trigger}: {why}"


def condition(c: ConditionResult) -> str:
    """``user.tier eq "vip" (it was "vip")``."""
    asked = f"{c.field} {c.operator.value}"
    if c.value is not None:
        asked += f" {_shown(c.value)}"
    if c.timed_out:
        return f"{asked} (timed out)"
    seen = f"found {_shown(c.found)}" if c.found else f"it was {_shown(c.actual)}"
    return f"{asked} ({seen})"


def claimed(names: dict[str, str], data: event.ClaimData) -> str:
    """Who claimed the message, how strongly and why."""
    who = names.get(data.assistant_key, data.assistant_key)
    terms = f"priority {data.claim.priority}, confidence {data.justification.confidence:g}"
    return f"{who} claimed the message ({terms}): {_why(data.justification)}"


def deferred(names: dict[str, str], data: event.DeferData) -> str:
    """Who gave way to whom, and what it had claimed for."""
    who = names.get(data.assistant_key, data.assistant_key)
    winner = names.get(data.deferred_to, data.deferred_to)
    return (
        f"{who} deferred to {winner}, a stronger claim; it had claimed: {data.justification.reason}"
    )


def observed(names: dict[str, str], data: event.ObserveData) -> str:
    """Who watched without answering, and why."""
    who = ", ".join(names.get(k, k) for k in data.assistant_keys)
    return f"{who} watched without answering: {data.justification.reason}"


def responded(names: dict[str, str], data: event.RespondData) -> str:
    """Who answers, and why."""
    who = names.get(data.assistant_key, data.assistant_key)
    outside = " (from outside, on its own)" if data.external else ""
    return f"{who} answers{outside}: {_why(data.justification)}"


def _why(j: claims.Justification) -> str:
    if not j.conditions:
        return j.reason
    rule = f"rule {j.trigger_rule}: " if j.trigger_rule else ""
    return f"{j.reason} ({rule}{' and '.join(condition(c) for c in j.conditions)})"


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= ACTUAL_CHARS else text[: ACTUAL_CHARS - 1] + "…"
