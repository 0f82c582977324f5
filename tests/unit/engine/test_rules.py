"""The rule engine's evaluator: every operator, nesting, priority, stop, time boxes, checks."""

from __future__ import annotations

import time
from typing import Any

import pytest
from pydantic import ValidationError

from hansa import errors
from hansa.domain.conditions import Evaluator
from hansa.domain.rules import (
    MAX_DEPTH,
    Action,
    Condition,
    ConditionGroup,
    Operator,
    Rule,
    RuleSpec,
)
from hansa.engine.rules.evaluate import check, evaluate
from hansa.tasks.registry import TaskRegistry, default_registry

REGISTRY = default_registry()

FACTS: dict[str, Any] = {
    "message": {"content": "Please refund my Order 42, the uploads failed", "author": "user"},
    "conversation": {"state": "ai_active", "currentAgent": "chief"},
    "context": {"plan": {"tier": "gold", "seats": 12}, "tags": ["vip", "eu"]},
    "user": {"email": "ana@example.com"},
}

# operator, field, value that holds, value that does not
TABLE: list[tuple[Operator, str, Any, Any]] = [
    (Operator.EQ, "context.plan.tier", "gold", "silver"),
    (Operator.NEQ, "context.plan.tier", "silver", "gold"),
    (Operator.GT, "context.plan.seats", 10, 12),
    (Operator.GTE, "context.plan.seats", 12, 13),
    (Operator.LT, "context.plan.seats", 13, 12),
    (Operator.LTE, "context.plan.seats", 12, 11),
    (Operator.CONTAINS, "message.content", "REFUND", "cancel"),
    (Operator.NOT_CONTAINS, "message.content", "cancel", "refund"),
    (Operator.STARTS_WITH, "user.email", "ana@", "bob@"),
    (Operator.ENDS_WITH, "user.email", "@example.com", "@example.org"),
    (Operator.MATCHES, "message.content", r"order\s+\d+", r"invoice\s+\d+"),
    (Operator.IN, "context.plan.tier", ["gold", "platinum"], ["silver"]),
    (Operator.NOT_IN, "context.plan.tier", ["silver"], ["gold"]),
    (Operator.EXISTS, "context.plan.tier", None, None),
    (Operator.NOT_EXISTS, "context.plan.discount", None, None),
    (Operator.WORDS, "message.content", ["refund", "chargeback"], ["ads"]),
]


def _holds(condition: Condition, facts: dict[str, Any] = FACTS) -> bool:
    return Evaluator().condition(condition, facts).matched


@pytest.mark.parametrize(("op", "field", "yes", "no"), TABLE, ids=[t[0].value for t in TABLE])
def test_every_operator_holds_fails_and_treats_a_missing_fact(
    op: Operator, field: str, yes: Any, no: Any
) -> None:
    assert len({t[0] for t in TABLE}) == len(Operator)  # the table covers every operator
    assert _holds(Condition(field=field, operator=op, value=yes))
    if op is Operator.EXISTS:
        assert not _holds(Condition(field="context.plan.discount", operator=op))
    elif op is Operator.NOT_EXISTS:
        assert not _holds(Condition(field="context.plan.tier", operator=op))
    else:
        assert not _holds(Condition(field=field, operator=op, value=no))
    missing = Condition(field="context.nothing.here", operator=op, value=yes)
    assert _holds(missing) is (op is Operator.NOT_EXISTS)


def test_words_are_whole_words_and_contains_is_a_substring() -> None:
    # "uploads" contains "ads": the seed's contains says yes, Hansa's words says no
    assert _holds(Condition(field="message.content", operator=Operator.CONTAINS, value="ads"))
    assert not _holds(Condition(field="message.content", operator=Operator.WORDS, value=["ads"]))
    found = Evaluator().condition(
        Condition(field="message.content", operator=Operator.WORDS, value="refund"), FACTS
    )
    assert found.found == "refund" and found.actual == FACTS["message"]["content"]


def test_and_or_groups_nest() -> None:
    gold = Condition(field="context.plan.tier", operator=Operator.EQ, value="gold")
    cancel = Condition(field="message.content", operator=Operator.CONTAINS, value="cancel")
    refund = Condition(field="message.content", operator=Operator.CONTAINS, value="refund")
    either = ConditionGroup(logic="or", conditions=[cancel, refund])
    assert Evaluator().group(ConditionGroup(logic="and", conditions=[gold, either]), FACTS)[0]
    neither = ConditionGroup(logic="or", conditions=[cancel, cancel])
    held, results = Evaluator().group(ConditionGroup(conditions=[gold, neither]), FACTS)
    assert not held and [r.matched for r in results] == [True, False, False]


def _rule(rule_id: str, priority: int, value: str, *, stop: bool = False) -> Rule:
    return Rule(
        id=rule_id,
        tenant_id="t",
        name=rule_id,
        priority=priority,
        trigger="message.received",
        conditions=ConditionGroup(
            conditions=[Condition(field="message.content", operator=Operator.CONTAINS, value=value)]
        ),
        actions=[Action(type="context.update", params={"set": {rule_id: True}})],
        stop=stop,
    )


def test_rules_run_by_priority_then_id_until_one_that_stops() -> None:
    rules = [
        _rule("b-low", 1, "refund"),
        _rule("a-high", 5, "refund"),
        _rule("c-high", 5, "nothing"),
        _rule("d-stop", 3, "order", stop=True),
        _rule("e-after-stop", 2, "refund"),
    ]
    firings = evaluate(rules, "message.received", FACTS, Evaluator())
    assert [(f.rule_id, f.matched) for f in firings] == [
        ("a-high", True),
        ("c-high", False),
        ("d-stop", True),
    ]
    assert firings[1].actions == [] and firings[0].actions[0].type == "context.update"


def test_disabled_rules_and_other_triggers_are_not_evaluated() -> None:
    off = _rule("off", 9, "refund").model_copy(update={"enabled": False})
    other = _rule("other", 9, "refund").model_copy(update={"trigger": "context.updated"})
    assert evaluate([off, other], "message.received", FACTS, Evaluator()) == []


def test_a_catastrophic_pattern_is_time_boxed_and_recorded() -> None:
    evil = Condition(field="message.content", operator=Operator.MATCHES, value=r"(a|a)*$")
    started = time.monotonic()  # unbounded, this search takes seconds (2.4 s for 30 a's here)
    result = Evaluator().condition(evil, {"message": {"content": "a" * 30 + "!"}})
    assert time.monotonic() - started < 1.0  # the time box is 50 ms
    assert not result.matched and result.timed_out


def _spec(**changes: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "name": "r",
        "trigger": "message.received",
        "conditions": {"logic": "and", "conditions": []},
        "actions": [{"type": "route", "params": {"agentId": "chief"}}],
    }
    spec.update(changes)
    return spec


def test_a_rule_is_refused_when_it_cannot_work() -> None:
    with pytest.raises(ValidationError, match="field"):
        RuleSpec.model_validate(
            _spec(conditions={"conditions": [{"field": "secrets.x", "operator": "eq"}]})
        )
    with pytest.raises(ValidationError):
        RuleSpec.model_validate(_spec(trigger="message.deleted"))
    with pytest.raises(ValidationError):
        RuleSpec.model_validate(
            _spec(conditions={"conditions": [{"field": "message.content", "operator": "like"}]})
        )
    deep: dict[str, Any] = {"conditions": []}
    for _ in range(MAX_DEPTH):
        deep = {"logic": "or", "conditions": [deep]}
    with pytest.raises(ValidationError, match="deeper"):
        RuleSpec.model_validate(_spec(conditions=deep))
    with pytest.raises(ValidationError, match="schedule"):
        RuleSpec.model_validate(_spec(trigger="timer.fired"))
    bad_regex = _spec(
        conditions={
            "conditions": [
                {"field": "message.content", "operator": "matches", "value": "(unclosed"}
            ]
        }
    )
    with pytest.raises(errors.InvalidInput, match="does not compile"):
        check(RuleSpec.model_validate(bad_regex), TaskRegistry(), {"chief"})
    with pytest.raises(errors.InvalidInput, match="unknown action type 'launch'"):
        check(RuleSpec.model_validate(_spec(actions=[{"type": "launch"}])), REGISTRY, set())
    check(RuleSpec.model_validate(_spec(actions=[{"type": "create_page"}])), REGISTRY, set())


def test_a_rules_actions_are_checked_as_the_chain_they_run_as() -> None:
    def refused(actions: list[dict[str, Any]], trigger: str = "message.received") -> str:
        spec = RuleSpec.model_validate(_spec(actions=actions, trigger=trigger))
        with pytest.raises(errors.InvalidInput) as caught:
            check(spec, REGISTRY, {"chief"})
        return f"{caught.value.message} {caught.value.details}"

    ask = {"type": "llm.invoke", "params": {"promptTemplate": "Asked: {{message.content}}"}}
    tell = {"type": "message.send", "params": {"content": "{{llmResponse}}"}}
    fetch = {"type": "service.call", "params": {"service": "logs", "resultKey": "found"}}
    total = {"type": "message.send", "params": {"content": "{{found.total}} in all"}}
    check(RuleSpec.model_validate(_spec(actions=[ask, tell])), REGISTRY, set())
    check(RuleSpec.model_validate(_spec(actions=[fetch, total])), REGISTRY, set())
    assert "llmResponse" in refused([tell, ask])
    assert "found.total" in refused([total, fetch])
    assert "message.content" in refused([ask], trigger="conversation.created")
    assert "actions[1].params" in refused(
        [ask, {"type": "message.send", "params": {"content": ""}}]
    )
    assert "llmResponse" in refused([{"type": "message.send", "params": {}}])  # its default
    assert "temperature" in refused([{**ask, "params": {"promptTemplate": "x", "temperature": 5}}])
    nested = {
        "type": "condition",
        "params": {
            "condition": {"field": "nowhere.x", "operator": "exists"},
            "ifTrue": [tell],
        },
    }
    assert "nowhere.x" in refused([nested])


def test_a_loops_names_are_its_bodys_and_what_a_node_gives_is_its_types_to_say() -> None:
    def spec(actions: list[dict[str, Any]], trigger: str = "message.received") -> RuleSpec:
        return RuleSpec.model_validate(_spec(actions=actions, trigger=trigger))

    fetch = {"type": "service.call", "params": {"service": "logs", "resultKey": "logs"}}
    loop = {
        "type": "loop",
        "params": {
            "collection": "{{logs.entries}}",
            "itemKey": "entry",
            "indexKey": "i",
            "actions": [{"type": "message.send", "params": {"content": "{{i}}: {{entry.text}}"}}],
        },
    }
    after = {"type": "message.send", "params": {"content": "last: {{entry.text}}"}}
    check(spec([fetch, loop]), REGISTRY, set())
    with pytest.raises(errors.InvalidInput, match="entry.text") as caught:
        check(spec([fetch, loop, after]), REGISTRY, set())  # the run binds it in the body only
    assert caught.value.details == {"field": "actions[2].params"}
    # an llm.invoke's contextFields are only filled in (a namespace the trigger lacks is
    # given empty), never refused as a condition's fields are
    ask = {"type": "llm.invoke", "params": {"promptTemplate": "hi", "contextFields": ["message"]}}
    check(spec([ask], trigger="conversation.created"), REGISTRY, set())
    # without the task types, a node binds and answers nothing
    tell = {"type": "message.send", "params": {"content": "{{llmResponse}}"}}
    check(spec([ask, tell]), REGISTRY, set())
    with pytest.raises(errors.InvalidInput, match="llmResponse"):
        check(spec([ask, tell]), TaskRegistry(), set())
