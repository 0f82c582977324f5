"""Explicit, debuggable routing: ordered rules, first match wins (seed 000 §5.2).

Keywords match whole words, with an optional plural or verb ending (``s``, ``es``,
``ing``, ``ed``), case-insensitively. The seed's substring test sent "uploads"
to the Growth Lead (it contains "ads"); whole words fix that, and compounds the
seed relied on ("webpage") are listed as keywords of their own. See
docs/decisions/0002-routing-whole-words.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import regex
from pydantic import TypeAdapter, ValidationError

from hansa import errors
from hansa.domain.agent import SUPERVISOR_ID
from hansa.domain.routing import RoutingDecision, RoutingRule
from hansa.engine.text import MATCH_TIMEOUT_SECONDS

"""A rule's regex gets this long per message; a rule that times out does not match."""

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


@dataclass(frozen=True, slots=True)
class _Compiled:
    rule: RoutingRule
    pattern: regex.Pattern[str]


def _compile(rule: RoutingRule) -> _Compiled:
    if rule.pattern is not None:
        source = rule.pattern
    else:
        words = "|".join(regex.escape(k.lower()) for k in rule.keywords)
        source = rf"\b(?:{words})(?:s|es|ing|ed)?\b"
    try:
        return _Compiled(rule, regex.compile(source, regex.IGNORECASE))
    except regex.error as exc:
        raise errors.ConfigError(f"routing rule {rule.id!r} has a bad pattern: {exc}") from exc


class Router:
    """Runs routing rules over a message; rules are data, the router is the engine."""

    def __init__(self, rules: tuple[RoutingRule, ...] | list[RoutingRule], agent_ids: set[str]):
        unknown = sorted({r.target for r in rules} - agent_ids)
        if unknown:
            raise errors.ConfigError(f"routing rules name unknown agents: {', '.join(unknown)}")
        self.rules = tuple(rules)
        self._compiled = [_compile(r) for r in rules]

    def decide(self, text: str, previous_agent_id: str | None) -> RoutingDecision:
        """The agent for ``text``; with no match the active agent (or Hans) keeps it."""
        previous = previous_agent_id or SUPERVISOR_ID
        for compiled in self._compiled:
            try:
                found = compiled.pattern.search(text, timeout=MATCH_TIMEOUT_SECONDS)
            except TimeoutError:
                continue
            if found:
                return RoutingDecision(
                    previous_agent_id=previous,
                    agent_id=compiled.rule.target,
                    rule_id=compiled.rule.id,
                    matched=found.group(0),
                    reason=compiled.rule.reason,
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
