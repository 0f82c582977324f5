"""Routing rules from the config, compiled into rules: one condition evaluator for both.

Each routing rule becomes a ``message.received`` rule with one condition on
``message.content`` (``words`` for keywords, ``matches`` for a pattern), a ``route``
action and ``stop``; priorities descend in the config's order, so the first routing
rule that matches still decides.
"""

from __future__ import annotations

from collections.abc import Sequence

from hansa.domain.routing import RoutingRule
from hansa.domain.rules import Action, Condition, ConditionGroup, Operator, Rule

CONFIG_TENANT = "*"
"""The tenant of rules compiled from the config: they apply to every tenant."""
TOP_PRIORITY = 1000
"""The first routing rule's priority; the next ones get one less each."""


def compile_routing(rules: Sequence[RoutingRule]) -> list[Rule]:
    """``rules`` as read-only rules (``source: config``), in the same order of precedence."""
    return [_compiled(rule, TOP_PRIORITY - i) for i, rule in enumerate(rules)]


def _compiled(rule: RoutingRule, priority: int) -> Rule:
    if rule.pattern is not None:
        condition = Condition(
            field="message.content", operator=Operator.MATCHES, value=rule.pattern
        )
    else:
        words = [k.lower() for k in rule.keywords]
        condition = Condition(field="message.content", operator=Operator.WORDS, value=words)
    route = Action(type="route", params={"agentId": rule.target, "reason": rule.reason})
    return Rule(
        id=rule.id,
        tenant_id=CONFIG_TENANT,
        name=f"route to {rule.target}: {rule.reason}",
        priority=priority,
        trigger="message.received",
        conditions=ConditionGroup(conditions=[condition]),
        actions=[route],
        stop=True,
        source="config",
    )
