"""Evaluate rules for a trigger, and check a rule before it is stored (its actions as the
chain of graph nodes they run as: ``engine/triggers/actions.py``)."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import anyio.to_thread
import regex
from pydantic import ValidationError

from hansa import errors
from hansa.domain import action_lists, graph
from hansa.domain.conditions import Evaluator, compile_pattern
from hansa.domain.node_configs import NODE_CONFIGS
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
from hansa.engine import templates
from hansa.engine.rules import reachable
from hansa.tasks.base import TaskType
from hansa.tasks.registry import TaskRegistry

TRIGGER_MESSAGE: Trigger = "message.received"


@dataclass(frozen=True)
class WordsCap:
    """How large a ``words`` list may be (``HANSA_MAX_RULE_WORDS``, ``…_CHARS``)."""

    words: int
    chars: int


async def evaluate_off_loop(
    rule_sets: Sequence[Iterable[Rule]],
    trigger: Trigger,
    facts: dict[str, Any],
    budget_seconds: float,
) -> list[Firing]:
    """:func:`evaluate` for each of ``rule_sets`` in turn, on a worker thread, their pattern
    tests sharing ``budget_seconds`` (the event loop never waits on a pattern: a tenant's
    rules cannot stall another tenant's requests). The clock starts on the thread."""

    def go() -> list[Firing]:
        evaluator = Evaluator(budget_seconds)
        return [f for rules in rule_sets for f in evaluate(rules, trigger, facts, evaluator)]

    return await anyio.to_thread.run_sync(go)


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


def check(
    spec: RuleSpec,
    registry: TaskRegistry,
    agent_ids: set[str],
    words_cap: WordsCap | None = None,
    *,
    conditions: bool = True,
    services: Collection[str] | None = None,
) -> None:
    """Refuse (422, saying what is wrong) a rule whose actions or values cannot work: an
    unknown action type, an agent that is not there, a node's parameters its node type
    refuses, a template naming what the chain will not have, and (unless ``conditions`` is
    false: checked before, by :func:`check_conditions`) a condition's value. What a node
    binds and names is its task type's to say (``registry``). ``services``: the tenant's
    service names a ``service.call`` may name (None: unchecked)."""
    task_types = {t.name for t in registry.all()}
    known = {*ENGINE_ACTIONS, *NODE_CONFIGS, *task_types}
    for action in spec.actions:
        if action.type not in known:
            raise errors.InvalidInput(
                f"unknown action type {action.type!r}; known: {', '.join(sorted(known))}",
                details={"field": "actions.type"},
            )
        _check_params(action, agent_ids)
    nodes = [(i, a) for i, a in enumerate(spec.actions) if a.type not in ENGINE_ACTIONS]
    if nodes:
        _check_chain(spec.trigger, nodes, registry, services)
    reachable.check(spec, registry)
    if conditions:
        check_conditions(spec.conditions, words_cap)


def check_conditions(group: ConditionGroup, words_cap: WordsCap | None = None) -> None:
    """Refuse a condition whose value cannot work: a ``matches`` pattern that does not
    compile (or would take long to), a ``words`` list past ``words_cap`` (a tenant's rules;
    the config's are the operator's). It compiles patterns: from async code, call it on a
    worker thread, outside any transaction."""
    for condition in _leaves(group):
        _check_value(condition, words_cap)


def _check_params(action: Action, agent_ids: set[str]) -> None:
    def bad(why: str) -> errors.InvalidInput:
        return errors.InvalidInput(f"action {action.type}: {why}", details={"field": "actions"})

    params = action.params
    agent = params.get("agentId")
    if agent is not None and agent not in agent_ids:
        raise bad(f"unknown agent {agent!r}")
    if action.type == "route" and agent is None:
        raise bad("needs agentId")
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


def _check_chain(
    trigger: Trigger,
    nodes: list[tuple[int, Action]],
    registry: TaskRegistry,
    services: Collection[str] | None = None,
) -> None:
    """The rule's chain checked as the graph it runs as (``domain/graph.py``): every problem
    of its nodes, then every template reference, in order, against what the chain will
    hold when that node starts."""
    actions = [a.model_dump() for _, a in nodes]
    compiled = action_lists.chain(actions)
    where = [_in_rule(path, nodes) for path in compiled.paths]
    for path, message in compiled.problems:
        _refuse(_in_rule(path, nodes), message)
    body = {"name": "rule", "components": compiled.components, "edges": compiled.edges}
    task_types = [t.name for t in registry.all()]
    for problem in graph.problems(body, task_types, action_lists.MAX_ACTIONS, services):
        path = problem.field or ""
        for i, origin in reversed(list(enumerate(where))):
            path = path.replace(f"components[{i}].config", f"{origin}.params")
            path = path.replace(f"components[{i}]", origin)
        _refuse(path or "actions", problem.message.replace(problem.field or "\0", path))
    _check_references(trigger, compiled, where, registry)


def _in_rule(path: str, nodes: list[tuple[int, Action]]) -> str:
    """``actions[2]…`` of the chain as the index of the rule's own ``actions``."""
    head, _, rest = path.partition("]")
    index = head.removeprefix("actions[")
    if not index.isdigit() or int(index) >= len(nodes):
        return path
    return f"actions[{nodes[int(index)][0]}]{rest}"


def _check_references(
    trigger: Trigger, compiled: action_lists.Compiled, where: list[str], registry: TaskRegistry
) -> None:
    """Every template reference of the chain, and every name a node's parameters give
    besides (``TaskType.refers``: a condition's fields), node by node in the order they
    were written, against the names the nodes before it set: each node's id, the latest
    model answer once a node ``answers``, and for the nodes that depend on it directly (a
    loop's body) what a node ``binds``, as the run will (a template naming nothing would
    stop its node under the law of clarity: knowable now, so refused now)."""
    known = {"user", "context", "project"} | ({"message"} if trigger == TRIGGER_MESSAGE else set())
    given: dict[str, set[str]] = {}  # by node: what the nodes it depends on bind for it
    for component, path in zip(compiled.components, where, strict=True):
        node, config = str(component["id"]), component["config"]
        kind = _kind(registry, str(component["type"]))
        here = known | given.get(node, set())
        names = [*templates.references(config, loop_keys=here), *_refers(kind, config)]
        for name in names:
            if name.split(".", 1)[0] not in here:
                _refuse(
                    f"{path}.params",
                    f"{path}: {{{{{name}}}}} names nothing this rule's actions have here; "
                    f"they have {', '.join(sorted(here))}",
                )
        known.add(node)
        if kind is not None and kind.answers:
            known.add(templates.LLM_RESPONSE)
        bound = _binds(kind, config)
        for edge in compiled.edges if bound else ():
            if edge.get("from") == node:
                given.setdefault(str(edge.get("to")), set()).update(bound)


def _kind(registry: TaskRegistry, node_type: str) -> TaskType[Any] | None:
    try:
        return registry.for_node(node_type)
    except errors.InvalidInput:
        return None


def _refers(kind: TaskType[Any] | None, config: Mapping[str, Any]) -> Collection[str]:
    if kind is None or kind.refers is None or (params := _params(kind, config)) is None:
        return ()
    return kind.refers(params)


def _binds(kind: TaskType[Any] | None, config: Mapping[str, Any]) -> Collection[str]:
    if kind is None or kind.binds is None or (params := _params(kind, config)) is None:
        return ()
    return kind.binds(params)


def _params(kind: TaskType[Any], config: Mapping[str, Any]) -> Any:
    """The node's parameters; None where they do not validate (a task type's node: its
    parameters are checked when its task is created; a node type's were checked above)."""
    try:
        return kind.params.model_validate(config)
    except ValidationError:
        return None


def _refuse(path: str, message: str) -> None:
    raise errors.InvalidInput(message, details={"field": path})


def _leaves(group: ConditionGroup) -> Iterable[Condition]:
    for item in group.conditions:
        if isinstance(item, ConditionGroup):
            yield from _leaves(item)
        else:
            yield item


def _check_value(c: Condition, words_cap: WordsCap | None) -> None:
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
        if words_cap is not None and (
            len(words) > words_cap.words or sum(len(w) for w in words) > words_cap.chars
        ):
            raise bad(
                f"a words list holds at most {words_cap.words} words and "
                f"{words_cap.chars} characters in all"
            )
    elif op in (Operator.IN, Operator.NOT_IN) and not isinstance(value, list):
        raise bad("needs a list of values")
