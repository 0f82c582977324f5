"""Rules (seed 001): a trigger, a tree of conditions over facts, and actions, by priority.

A rule fires when its trigger happens and its conditions hold for the facts of that
moment (the message, the conversation, its context, the user, the project). Every
matching rule's actions run, highest priority first, until one with ``stop``.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import ConfigDict, Field, field_validator, model_validator

from hansa.domain.base import Wire

MAX_DEPTH = 5
"""How deeply condition groups may nest (a group inside a group … five levels)."""
MAX_LEAVES = 50
"""How many conditions one rule may hold in all."""
MAX_ACTIONS = 10
"""How many actions one rule may take."""

Trigger = Literal[
    "message.received",
    "conversation.created",
    "handoff.requested",
    "context.updated",
    "timer.fired",
]

FACT_ROOTS = ("message", "conversation", "context", "user", "project", "handoff", "timer")
"""Where a condition's field path may start (``message.content``, ``context.plan`` …)."""

ENGINE_ACTIONS = ("route", "graph.run")
"""Actions that are the trigger's own decisions (who answers, which graph starts); every
other action is a node of the rule's chain: a graph node type (``message.send``,
``llm.invoke``…) or any registered task type."""


class Operator(StrEnum):
    """The fifteen operators of seed 001, and ``words``: Hansa's whole-word match."""

    EQ = "eq"
    NEQ = "neq"
    GT = "gt"
    GTE = "gte"
    LT = "lt"
    LTE = "lte"
    CONTAINS = "contains"
    NOT_CONTAINS = "not_contains"
    STARTS_WITH = "starts_with"
    ENDS_WITH = "ends_with"
    MATCHES = "matches"
    """A regular expression, case-insensitive, searched under a time box."""
    IN = "in"
    NOT_IN = "not_in"
    EXISTS = "exists"
    NOT_EXISTS = "not_exists"
    WORDS = "words"
    """Any of the given words, whole, with an optional plural or verb ending (decision 0002)."""


_STRICT = ConfigDict(extra="forbid")
"""Rule parts refuse unknown keys: a typo is an error, not a condition that never holds."""
READ_ONLY = frozenset(
    {"id", "tenantId", "source", "version", "createdAt", "updatedAt", "lastFiredAt"}
)
"""Fields of a rule as read, which the server sets."""


class Condition(Wire):
    """One test of one fact: ``message.content contains "refund"``. The one condition
    language of rules and graphs (decision 0022): a rule's fields start at a fact root
    (:data:`FACT_ROOTS`), a graph's at anything its templates may name."""

    model_config = _STRICT

    field: str = Field(min_length=1, max_length=200)
    operator: Operator
    value: Any = None

    @field_validator("field")
    @classmethod
    def _dotted(cls, path: str) -> str:
        if any(not part for part in path.split(".")):
            raise ValueError(f"field {path!r} must be a dotted path (``context.plan.tier``)")
        return path


class ConditionGroup(Wire):
    """Conditions joined by ``and`` or ``or``; groups nest."""

    model_config = _STRICT

    logic: Literal["and", "or"] = "and"
    conditions: list[Condition | ConditionGroup] = Field(default_factory=list)

    def depth(self) -> int:
        """1 for a flat group, one more for each level of groups inside."""
        inner = [c.depth() for c in self.conditions if isinstance(c, ConditionGroup)]
        return 1 + max(inner, default=0)

    def leaves(self) -> int:
        """How many conditions the tree holds."""
        return sum(c.leaves() if isinstance(c, ConditionGroup) else 1 for c in self.conditions)

    def tests(self) -> Iterator[Condition]:
        """Every condition of the tree, in order."""
        for item in self.conditions:
            if isinstance(item, ConditionGroup):
                yield from item.tests()
            else:
                yield item


class Action(Wire):
    """What a firing rule does: an engine action or a task type, with its parameters."""

    model_config = _STRICT

    type: str = Field(min_length=1, max_length=100)
    params: dict[str, Any] = Field(default_factory=dict)


class Schedule(Wire):
    """When a ``timer.fired`` rule fires, and in which conversation its actions happen."""

    model_config = _STRICT

    every_seconds: int = Field(ge=1, le=7 * 24 * 3600)
    conversation_id: str = Field(min_length=1, max_length=36)
    """Where the firings are recorded and the actions act (a run needs a conversation)."""


class RuleSpec(Wire):
    """A rule as a caller writes it (``POST /api/rules``)."""

    model_config = _STRICT

    name: str = Field(min_length=1, max_length=200)
    priority: int = Field(default=0, ge=-10_000, le=10_000)
    enabled: bool = True
    trigger: Trigger
    conditions: ConditionGroup = Field(default_factory=ConditionGroup)
    actions: list[Action] = Field(min_length=1, max_length=MAX_ACTIONS)
    stop: bool = False
    """No rule of lower priority is evaluated after this one matched."""
    project_id: str | None = Field(default=None, max_length=36)
    schedule: Schedule | None = None

    @model_validator(mode="before")
    @classmethod
    def _read_only(cls, data: Any) -> Any:
        """A rule as read (or the seed's, with its ``id``) may be sent as it is: the fields
        the server sets are ignored, as a graph's are."""
        if cls is RuleSpec and isinstance(data, dict):
            return {k: v for k, v in data.items() if k not in READ_ONLY}
        return data

    @model_validator(mode="after")
    def _bounded(self) -> RuleSpec:
        for leaf in self.conditions.tests():
            if leaf.field.split(".", 1)[0] not in FACT_ROOTS:
                raise ValueError(
                    f"field {leaf.field!r} must start with one of {', '.join(FACT_ROOTS)}"
                )
        if self.conditions.depth() > MAX_DEPTH:
            raise ValueError(f"conditions nest deeper than {MAX_DEPTH} levels")
        if self.conditions.leaves() > MAX_LEAVES:
            raise ValueError(f"a rule holds at most {MAX_LEAVES} conditions")
        if (self.trigger == "timer.fired") != (self.schedule is not None):
            raise ValueError("a timer.fired rule needs a schedule, and only it takes one")
        return self


class Rule(RuleSpec):
    """A stored rule."""

    id: str
    tenant_id: str
    source: Literal["api", "config"] = "api"
    """``config``: compiled from ``hansa.toml``'s routing rules, read-only."""
    version: int = 1
    created_at: datetime | None = None
    updated_at: datetime | None = None


class ConditionResult(Wire):
    """How one condition fared: what it asked, what the fact was, whether it held."""

    field: str
    operator: Operator
    value: Any = None
    actual: Any = None
    matched: bool
    found: str | None = None
    """The text a ``matches`` or ``words`` condition found."""
    timed_out: bool = False


class Firing(Wire):
    """One rule's evaluation against one set of facts."""

    rule_id: str
    priority: int
    matched: bool
    conditions: list[ConditionResult]
    actions: list[Action]


class RecordedFiring(Wire):
    """A matched rule's firing as kept for its rule (the last few, for the panel's list)."""

    id: int
    """Increasing: a later firing has a larger id."""
    rule_id: str
    trigger: Trigger
    conversation_id: str | None = None
    """Where the trigger happened (the conversation its actions acted on)."""
    actions: list[Action]
    """The rule's actions as they were when it fired."""
    created_at: datetime
