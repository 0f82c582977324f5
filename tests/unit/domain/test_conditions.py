"""The one condition evaluator, as rules and graphs both use it: a rule tests the trigger's
facts, a graph's ``condition`` node the facts its fields name, filled from a template
scope as it starts; the same conditions decide the same way."""

from __future__ import annotations

from typing import Any

import pytest

from hansa.domain.conditions import Evaluator
from hansa.domain.node_configs import FACTS, Condition, canonical
from hansa.domain.rules import ConditionGroup, Operator
from hansa.engine import templates
from hansa.tasks.builtin.graph_nodes import decided

SCOPE = templates.Scope(
    message={"content": "Please refund my Order 42, it failed"},
    user={"email": "ana@example.com"},
    context={"plan": {"tier": "gold", "seats": 12}, "tags": ["vip", "eu"]},
    results={"logsResult": {"total": 3, "entries": [{"level": "error"}]}},
    llm_response="The disk is full",
)
FACTS_OF_RULE: dict[str, Any] = {
    "message": SCOPE.message,
    "user": SCOPE.user,
    "context": SCOPE.context,
    "logsResult": SCOPE.results["logsResult"],
    "llmResponse": SCOPE.llm_response,
}

# one condition per operator: (field, operator, value, whether it holds)
CASES: list[tuple[str, Operator, Any, bool]] = [
    ("context.plan.tier", Operator.EQ, "gold", True),
    ("context.plan.tier", Operator.NEQ, "gold", False),
    ("logsResult.total", Operator.GT, 0, True),
    ("logsResult.total", Operator.GTE, 4, False),
    ("context.plan.seats", Operator.LT, 13, True),
    ("context.plan.seats", Operator.LTE, 11, False),
    ("message.content", Operator.CONTAINS, "REFUND", True),
    ("llmResponse", Operator.NOT_CONTAINS, "disk", False),
    ("user.email", Operator.STARTS_WITH, "ana@", True),
    ("user.email", Operator.ENDS_WITH, "@example.org", False),
    ("message.content", Operator.MATCHES, r"order\s+\d+", True),
    ("context.plan.tier", Operator.IN, ["silver"], False),
    ("context.plan.tier", Operator.NOT_IN, ["silver"], True),
    ("logsResult.entries", Operator.EXISTS, None, True),
    ("context.plan.discount", Operator.NOT_EXISTS, None, True),
    ("message.content", Operator.WORDS, ["refund"], True),
]


def _node(condition: dict[str, Any]) -> Condition:
    """A graph's condition node as it starts: its facts filled from the scope."""
    config = {"condition": condition}
    fields = [t.field for t in Condition.model_validate(config).group().tests()]
    rendered = templates.render_value({**config, FACTS: templates.facts_wanted(fields)}, SCOPE)
    return Condition.model_validate(rendered)


@pytest.mark.parametrize(("field", "op", "value", "holds"), CASES, ids=[c[1].value for c in CASES])
def test_a_rule_and_a_graph_decide_a_condition_alike(
    field: str, op: Operator, value: Any, holds: bool
) -> None:
    assert len({c[1] for c in CASES}) == len(Operator)  # every operator, both ways
    test = {"field": field, "operator": op.value, "value": value}
    group = ConditionGroup.model_validate({"conditions": [test]})
    held, _ = Evaluator().group(group, FACTS_OF_RULE)
    branch = decided(_node(test))["branch"]
    assert held is holds
    assert branch == ("true" if holds else "false")


def test_groups_nest_in_a_graph_as_in_a_rule() -> None:
    tree = {
        "logic": "or",
        "conditions": [
            {"field": "context.plan.tier", "operator": "eq", "value": "silver"},
            {
                "logic": "and",
                "conditions": [
                    {"field": "logsResult.total", "operator": "gt", "value": 2},
                    {"field": "message.content", "operator": "words", "value": "refund"},
                ],
            },
        ],
    }
    result = decided(_node(tree))
    assert result["branch"] == "true"
    assert [c["matched"] for c in result["conditions"]] == [False, True, True]
    assert result["conditions"][1]["actual"] == 3


def test_a_missing_fact_holds_only_for_not_exists_and_a_result_alias_is_read() -> None:
    gone = decided(_node({"field": "nothing.here", "operator": "not_exists"}))
    aliased = decided(_node({"field": "logsResult.result.total", "operator": "eq", "value": 3}))
    assert gone["branch"] == "true"
    assert aliased["branch"] == "true"


def test_the_first_graph_condition_reads_as_the_rules_language() -> None:
    old = {"value": "{{context.plan.tier}}", "in": ["gold"]}
    assert canonical("condition", old) == {
        "condition": {"field": "context.plan.tier", "operator": "in", "value": ["gold"]}
    }
    assert canonical("condition", {"value": "{{x.y}}", "exists": False}) == {
        "condition": {"field": "x.y", "operator": "not_exists"}
    }
    assert canonical("condition", {"value": 1, "equals": 1}) == {"value": 1, "equals": 1}
