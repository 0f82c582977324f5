"""Explicit, debuggable routing: ordered rules, first match wins (seed 000 §5.2).

Keywords match whole words, with an optional plural or verb ending (``s``, ``es``,
``ing``, ``ed``), case-insensitively. The seed's substring test sent "uploads"
to the Growth Lead (it contains "ads"); whole words fix that, and compounds the
seed relied on ("webpage") are listed as keywords of their own. See
docs/decisions/0002-routing-whole-words.md.
"""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter, ValidationError

from hansa import errors
from hansa.domain.agent import SUPERVISOR_ID
from hansa.domain.conditions import Evaluator
from hansa.domain.routing import RoutingDecision, RoutingRule
from hansa.engine.rules.evaluate import check_conditions, evaluate
from hansa.engine.rules.routing import compile_routing

DEFAULT_RULES: tuple[RoutingRule, ...] = (
    RoutingRule(
        id="delivery",
        target="deliveryLead",
        reason="delivery planning intent",
        keywords=("delivery", "timeline"),
    ),
    RoutingRule(
        id="client",
        target="clientSuccess",
        reason="client relationship intent",
        keywords=("client", "account"),
    ),
    RoutingRule(
        id="creative",
        target="creativeLead",
        reason="brand and creative intent",
        keywords=("brand", "visual", "creative"),
    ),
    RoutingRule(
        id="growth",
        target="growthLead",
        reason="SEO intent",
        keywords=("seo", "traffic", "ads", "campaign"),
    ),
    RoutingRule(
        id="technical",
        target="technicalLead",
        reason="hosting and integration intent",
        keywords=("hosting", "server", "ssl", "integration"),
    ),
    RoutingRule(
        id="web",
        target="webEngineer",
        reason="page building intent",
        keywords=("page", "webpage", "homepage", "post", "template", "layout"),
    ),
)
"""Seed 000's ``determineAgent``, in its order."""

_RULES = TypeAdapter(list[RoutingRule])
_NO_MATCH = "no routing rule matched; the active agent keeps the conversation"


class Router:
    """Runs routing rules over a message; rules are data, the router is the engine.

    The routing rules are compiled into ``message.received`` rules and evaluated by the
    rule engine's one condition evaluator (``engine/rules``).
    """

    def __init__(self, rules: tuple[RoutingRule, ...] | list[RoutingRule], agent_ids: set[str]):
        unknown = sorted({r.target for r in rules} - agent_ids)
        if unknown:
            raise errors.ConfigError(f"routing rules name unknown agents: {', '.join(unknown)}")
        self.rules = tuple(rules)
        self.linear = all(rule.pattern is None for rule in self.rules)
        """Whether every rule is keywords (a word list matches in linear time: it may be
        decided on the event loop); a ``pattern`` rule's regular expression may not."""
        self.compiled = compile_routing(self.rules)
        """The routing rules as rules (``source: config``)."""
        for rule in self.compiled:  # a bad pattern is a start-up error, not a silent miss
            try:
                check_conditions(rule.conditions)
            except errors.InvalidInput as exc:
                raise errors.ConfigError(
                    f"routing rule {rule.id!r} has a bad pattern: {exc}"
                ) from exc

    def decide(self, text: str, previous_agent_id: str | None) -> RoutingDecision:
        """The agent for ``text``; with no match the active agent (or Hans) keeps it. Its
        pattern tests may take their time box: call it on a worker thread from async code."""
        previous = previous_agent_id or SUPERVISOR_ID
        facts = {"message": {"content": text}}
        evaluator = Evaluator()  # patterns are compiled once per process; the budget is per call
        for firing in evaluate(self.compiled, "message.received", facts, evaluator):
            if not firing.matched:
                continue
            route = firing.actions[0].params
            return RoutingDecision(
                previous_agent_id=previous,
                agent_id=str(route["agentId"]),
                rule_id=firing.rule_id,
                matched=firing.conditions[0].found,
                reason=str(route["reason"]),
            )
        return self.keep(previous, _NO_MATCH)

    def keep(self, previous_agent_id: str | None, reason: str) -> RoutingDecision:
        """No rule runs: the active agent (or Hans) keeps the conversation, for ``reason``."""
        previous = previous_agent_id or SUPERVISOR_ID
        return RoutingDecision(
            previous_agent_id=previous, agent_id=previous, rule_id=None, matched=None, reason=reason
        )


def rules_from_config(config: dict[str, Any]) -> tuple[RoutingRule, ...]:
    """``[[routing.rules]]`` from the config, or the default rules."""
    routing = config.get("routing", {})
    if "rules" not in routing:
        return DEFAULT_RULES
    try:
        return tuple(_RULES.validate_python(routing["rules"]))
    except ValidationError as exc:
        raise errors.ConfigError(f"[[routing.rules]] in the config is invalid: {exc}") from exc
