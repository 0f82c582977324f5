"""Seed 001's action lists as a graph's nodes and edges: one shape for graphs and rules.

A seed action is ``{type, params}``; a graph's component is ``{id, type, config}``, and may
be written as an action too (``params`` for ``config``, the id left out). Three node types
carry lists of actions in their params: ``condition`` (``ifTrue``, ``ifFalse``),
``parallel`` (``actions``: side by side) and ``loop`` (``actions``: once per item). Each
list compiles to nodes joined by edges, so the run scheduler runs them as it runs any
graph (it already branches, forks and loops), and what the graph reads back is that flat,
canonical form, which can be sent again as it is. A rule's ``actions`` compile the same
way (:func:`chain`): one after the other.

Ids of nodes that had none: a ``resultKey`` when the action names one (so
``{{logsResult.total}}`` names its result), else ``<type>_<n>`` at the top and
``<parent>_true_<n>`` / ``<parent>_false_<n>`` / ``<parent>_<n>`` inside a list.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hansa.domain.node_configs import TYPE_NAMES, canonical

NESTED = {"condition": ("ifTrue", "ifFalse"), "parallel": ("actions",), "loop": ("actions",)}
"""The params of a node type that hold lists of actions."""
MAX_ACTIONS = 200
"""Actions one body may hold in all, nested ones included."""

Tail = tuple[str, str | None]
"""A node a list ends at, and the ``when`` an edge leaving it needs (a condition's empty
branch ends at the condition itself)."""


@dataclass
class Compiled:
    """A body's nodes and edges in the canonical form, and what kept them from it."""

    components: list[Any] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    """Where each component came from in the body (``components[0].params.ifTrue[1]``)."""
    edges: list[dict[str, Any]] = field(default_factory=list)
    problems: list[tuple[str, str]] = field(default_factory=list)
    """``(path, message)`` of every action that could not be read."""
    tails: dict[str, list[Tail]] = field(default_factory=dict)
    """The nodes a compound node's lists end at, by its id: an edge leaving it leaves them."""
    _ids: set[str] = field(default_factory=set)

    def _fresh(self, wanted: str) -> str:
        found, n = wanted, 1
        while found in self._ids:
            n += 1
            found = f"{wanted}_{n}"
        self._ids.add(found)
        return found


def graph(components: list[Any], edges: list[Any]) -> Compiled:
    """A graph body's components (nodes or actions, lists nested) and edges, flat: an edge
    from a compound node leaves from where its lists end."""
    out = Compiled()
    out._ids.update(c["id"] for c in components if isinstance(c, Mapping) and "id" in c)
    for i, item in enumerate(components):
        where = f"components[{i}]"
        if not isinstance(item, Mapping) or not isinstance(item.get("type"), str):
            out.components.append(item)  # the graph's checks say what is wrong with it
            out.paths.append(where)
            continue
        node = item["id"] if "id" in item else None
        _expand(item, node, _name(item, i + 1), where, out)
    for edge in edges:
        if not isinstance(edge, Mapping) or edge.get("when") is not None:
            out.edges.append(dict(edge) if isinstance(edge, Mapping) else edge)
            continue
        tails = out.tails.get(str(edge.get("from")))
        if tails is None:
            out.edges.append(dict(edge))
            continue
        out.edges += [_edge(tail, str(edge.get("to"))) for tail in tails]
    return out


def chain(actions: list[Any], prefix: str = "actions") -> Compiled:
    """A list of actions (a rule's), one after the other, as nodes and edges."""
    out = Compiled()
    _list(actions, "", prefix, out, start=[])
    return out


def _name(action: Mapping[str, Any], n: int, parent: str = "") -> str:
    key = _config(action).get("resultKey")
    if isinstance(key, str) and key:
        return key
    if parent:
        return f"{parent}_{n}"
    kind = str(action.get("type"))
    return f"{TYPE_NAMES.get(kind, kind).replace('.', '_').replace('-', '_')}_{n}"


def _config(action: Mapping[str, Any]) -> dict[str, Any]:
    given = action.get("config", action.get("params"))
    return dict(given) if isinstance(given, Mapping) else {}


def _edge(tail: Tail, to: str) -> dict[str, Any]:
    source, when = tail
    return {"from": source, "to": to} | ({"when": when} if when else {})


def _list(actions: Any, parent: str, where: str, out: Compiled, start: list[Tail]) -> list[Tail]:
    """Compile ``actions`` one after the other, the first after ``start``; where they end."""
    if not isinstance(actions, list):
        out.problems.append((where, f"{where} must be a list of actions"))
        return start
    tails = start
    for i, action in enumerate(actions):
        here = f"{where}[{i}]"
        if not isinstance(action, Mapping) or not isinstance(action.get("type"), str):
            out.problems.append((here, f"{here} must be an action: {{type, params}}"))
            continue
        if len(out.components) >= MAX_ACTIONS:
            out.problems.append((here, f"a body holds at most {MAX_ACTIONS} actions"))
            return tails
        mark = len(out.edges)
        node, ends = _expand(action, None, _name(action, i + 1, parent), here, out)
        out.edges[mark:mark] = [_edge(tail, node) for tail in tails]  # into it, then inside it
        tails = ends
    return tails


def _expand(
    action: Mapping[str, Any], node: str | None, wanted: str, where: str, out: Compiled
) -> tuple[str, list[Tail]]:
    """Add ``action`` (and the lists it holds) as nodes; its id, and where it ends."""
    kind = TYPE_NAMES.get(str(action["type"]), str(action["type"]))
    node_id = node if node is not None else out._fresh(wanted)
    if "config" in action and "params" in action:
        out.problems.append((where, f"{where}: give config or params, not both"))
    unknown = sorted(set(action) - {"id", "type", "config", "params"})
    if unknown:
        out.problems.append((where, f"{where}: unknown field {unknown[0]!r}"))
    config = _config(action)
    lists = {key: config.pop(key) for key in NESTED.get(kind, ()) if key in config}
    config = canonical(kind, config)
    out.components.append({"id": node_id, "type": kind, "config": config})
    out.paths.append(where)
    if not lists:
        return node_id, [(node_id, None)]
    key = "params" if "params" in action else "config"
    inner = f"{where}.{key}"
    tails: list[Tail] = []
    if kind == "condition":
        for when, name in (("true", "ifTrue"), ("false", "ifFalse")):
            start: list[Tail] = [(node_id, when)]
            tails += _list(lists.get(name, []), f"{node_id}_{when}", f"{inner}.{name}", out, start)
    else:
        children = lists["actions"]
        if not isinstance(children, list):
            out.problems.append((f"{inner}.actions", f"{inner}.actions must be a list"))
            children = []
        for i, child in enumerate(children):
            one = f"{inner}.actions[{i}]"
            if not isinstance(child, Mapping) or not isinstance(child.get("type"), str):
                out.problems.append((one, f"{one} must be an action: {{type, params}}"))
                continue
            if kind == "loop" and _holds_lists(child):
                out.problems.append((one, f"{one}: a loop's actions may not hold lists"))
                continue
            child_id, ends = _expand(child, None, _name(child, i + 1, node_id), one, out)
            out.edges.append(_edge((node_id, None), child_id))
            tails += ends
    out.tails[node_id] = tails
    return node_id, tails


def _holds_lists(action: Mapping[str, Any]) -> bool:
    return any(key in _config(action) for key in NESTED.get(str(action.get("type")), ()))
