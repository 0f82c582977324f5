"""Evaluate rules for a trigger, and check a rule before it is stored."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import regex

from hansa import errors
from hansa.domain.conversation import State
from hansa.domain.rules import (
    ENGINE_ACTIONS,
    Action,
    Condition,
    ConditionGroup,
    Firing,
    Operator,
    Rule,
    RuleSpec,
    Trigger,
)
from hansa.domain.conditions import Evaluator, compile_pattern


def evaluate(
    rules: Iterable[Rule], trigger: Trigger, facts: dict[str, Any], evaluator: Evaluator
) -> list[Firing]:
    """Every enabled rule of ``trigger``, highest priority first (ties by id), each with
    its conditions' results; evaluation ends after a matching rule with ``stop``."""
    chosen = sorted(
        (r for r in rules if r.enabled and r.trigger == trigger), key=lambda r: (-r.priority, r.id)
    )
    firings: list[Firing] = []
    for rule in chosen:
        held, results = evaluator.group(rule.conditions, facts)
        firings.append(
            Firing(
                rule_id=rule.id,
                priority=rule.priority,
                matched=held,
                conditions=results,
                actions=rule.actions if held else [],
            )
        )
        if held and rule.stop:
            break
    return firings


def check(spec: RuleSpec, task_types: set[str], agent_ids: set[str]) -> None:
    """Refuse (422, saying what is wrong) a rule whose actions or values cannot work."""
    for action in spec.actions:
        if action.type not in ENGINE_ACTIONS and action.type not in task_types:
            known = ", ".join(sorted({*ENGINE_ACTIONS, *task_types}))
            raise errors.InvalidInput(
                f"unknown action type {action.type!r}; known: {known}",
                details={"field": "actions.type"},
            )
        _check_params(action, agent_ids)
    for condition in _leaves(spec.conditions):
        _check_value(condition)


def _check_params(action: Action, agent_ids: set[str]) -> None:
    def bad(why: str) -> errors.InvalidInput:
        return errors.InvalidInput(f"action {action.type}: {why}", details={"field": "actions"})

    params = action.params
    agent = params.get("agentId")
    if agent is not None and agent not in agent_ids:
        raise bad(f"unknown agent {agent!r}")
    if action.type == "route" and agent is None:
        raise bad("needs agentId")
    if action.type == "message.send" and not (
        isinstance(params.get("content"), str) and params["content"].strip()
    ):
        raise bad("needs content")
    if action.type == "context.update" and not isinstance(params.get("set"), dict):
        raise bad("needs set: an object of context values")
    if action.type == "state.transition" and params.get("to") not in {s.value for s in State}:
        raise bad(f"needs to: one of {', '.join(s.value for s in State)}")
    if action.type == "graph.run" and not (
        isinstance(params.get("graphId"), str) and params["graphId"].strip()
    ):
        raise bad("needs graphId: the graph to run")
    if action.type == "graph.run" and not isinstance(params.get("inputs", {}), dict):
        raise bad("inputs must be an object")
    version = params.get("version")
    if (
        action.type == "graph.run"
        and version is not None
        and not (isinstance(version, int) and not isinstance(version, bool) and version >= 1)
    ):
        raise bad("version must be a whole number from 1")


def _leaves(group: ConditionGroup) -> Iterable[Condition]:
    for item in group.conditions:
        if isinstance(item, ConditionGroup):
            yield from _leaves(item)
        else:
            yield item


def _check_value(c: Condition) -> None:
    def bad(why: str) -> errors.InvalidInput:
        return errors.InvalidInput(
            f"condition on {c.field!r} ({c.operator.value}): {why}",
            details={"field": "conditions"},
        )

    op, value = c.operator, c.value
    if op is Operator.MATCHES:
        if not isinstance(value, str) or not value or len(value) > 500:
            raise bad("needs a regular expression of 1 to 500 characters")
        try:
            compile_pattern(value)
        except regex.error as exc:
            raise bad(f"the regular expression does not compile: {exc}") from exc
    elif op is Operator.WORDS:
        words = [value] if isinstance(value, str) else value
        if (
            not isinstance(words, list)
            or not words
            or not all(isinstance(w, str) and w.strip() for w in words)
        ):
            raise bad("needs a word or a list of words")
    elif op in (Operator.IN, Operator.NOT_IN) and not isinstance(value, list):
        raise bad("needs a list of values")
