"""Rules' limits (issue 28, H1): a ``words`` list is capped at save, and an evaluation runs
on a worker thread, its pattern tests sharing one budget."""

from __future__ import annotations

import threading
import time
from typing import Any

import anyio
import pytest

from hansa import errors
from hansa.domain.rules import Action, Condition, ConditionGroup, Operator, Rule, RuleSpec
from hansa.engine.rules.evaluate import WordsCap, check, evaluate_off_loop
from hansa.tasks.registry import TaskRegistry


def _spec(words: list[str]) -> RuleSpec:
    return RuleSpec.model_validate(
        {
            "name": "r",
            "trigger": "message.received",
            "conditions": {
                "conditions": [{"field": "message.content", "operator": "words", "value": words}]
            },
            "actions": [{"type": "route", "params": {"agentId": "chief"}}],
        }
    )


def test_a_words_list_past_the_cap_is_refused_at_save() -> None:
    cap = WordsCap(words=3, chars=20)
    check(_spec(["refund", "chargeback"]), TaskRegistry(), {"chief"}, cap)
    with pytest.raises(errors.InvalidInput, match="at most 3 words"):
        check(_spec(["a", "b", "c", "d"]), TaskRegistry(), {"chief"}, cap)
    with pytest.raises(errors.InvalidInput, match="20 characters"):
        check(_spec(["x" * 21]), TaskRegistry(), {"chief"}, cap)
    check(_spec(["x" * 21] * 5), TaskRegistry(), {"chief"})  # the config's rules: the operator's


def _evil(rule_id: str) -> Rule:
    leaf = Condition(field="message.content", operator=Operator.MATCHES, value=r"(a|a)*$")
    return Rule(
        id=rule_id,
        tenant_id="t",
        name=rule_id,
        trigger="message.received",
        conditions=ConditionGroup(logic="or", conditions=[leaf] * 50),
        actions=[Action(type="context.update", params={"set": {"x": 1}})],
    )


def test_an_evaluation_runs_off_the_loop_within_its_budget() -> None:
    facts: dict[str, Any] = {"message": {"content": "a" * 30_000 + "!"}}
    seen: dict[str, Any] = {}

    async def main() -> None:
        loop_thread = threading.get_ident()
        ticks = 0

        async def tick() -> None:
            nonlocal ticks
            while True:
                await anyio.sleep(0.01)
                ticks += 1

        async with anyio.create_task_group() as group:
            group.start_soon(tick)
            started = time.monotonic()
            seen["firings"] = await evaluate_off_loop(
                [[_evil("a")], [_evil("b")]], "message.received", facts, 0.3
            )
            seen["took"] = time.monotonic() - started
            seen["ticks"] = ticks
            group.cancel_scope.cancel()
        seen["loop_thread"] = loop_thread

    anyio.run(main)
    firings = seen["firings"]
    assert [f.rule_id for f in firings] == ["a", "b"] and not any(f.matched for f in firings)
    assert all(c.timed_out for f in firings for c in f.conditions)
    assert seen["took"] < 2.0, "one budget for both rule sets (5 s without it)"
    assert seen["ticks"] >= 5, "the loop went on while the patterns ran"
