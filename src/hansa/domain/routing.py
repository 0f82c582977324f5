"""Routing rules are data: ordered, each with keywords or a regex, a target and a reason."""

from __future__ import annotations

from pydantic import Field, model_validator

from hansa.domain.base import Wire


class RoutingRule(Wire):
    """One routing rule; the first rule that matches a message decides its agent."""

    id: str = Field(min_length=1, max_length=64)
    target: str
    reason: str = Field(min_length=1, max_length=200)
    """Plain words for the thinking entry, e.g. "SEO intent"."""
    keywords: tuple[str, ...] = ()
    pattern: str | None = Field(default=None, max_length=500)
    """A regular expression, matched case-insensitively, instead of keywords."""

    @model_validator(mode="after")
    def _one_matcher(self) -> RoutingRule:
        if not self.keywords and not self.pattern:
            raise ValueError(f"routing rule {self.id!r} needs keywords or a pattern")
        return self


class RoutingDecision(Wire):
    """Who answers a turn, and why."""

    previous_agent_id: str
    agent_id: str
    rule_id: str | None
    """None when no rule matched and the active agent kept the turn."""
    matched: str | None
    reason: str

    @property
    def changed(self) -> bool:
        """True when the turn goes to another agent than the previous one."""
        return self.agent_id != self.previous_agent_id
