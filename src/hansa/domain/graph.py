"""Prompt graphs (seed 001): nodes ("components") joined by edges, kept as immutable versions.

A graph is data; an engine runs it. It is checked when it is saved: :func:`problems` lists
everything wrong with a body at once (not only the first thing), and :func:`parse` turns a
body without problems into a :class:`GraphSpec`, or raises ``errors.InvalidGraph`` with the
list. Nothing here evaluates code: configs hold ``{{templates}}`` and plain values only.

A body may write its components as seed 001's actions (``{type, params}``, lists of actions
nested in a ``condition``, ``parallel`` or ``loop``): they are compiled to nodes and edges
first (``domain/action_lists.py``), and the graph is kept, and read back, in that flat form.
"""

from __future__ import annotations

import difflib
from collections import deque
from collections.abc import Collection, Iterable, Iterator, Mapping
from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import (
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from hansa import errors
from hansa.domain import action_lists, secrets
from hansa.domain.base import Wire
from hansa.domain.node_configs import (
    FACTS,
    ID_PATTERN,
    NODE_CONFIGS,
    RESERVED_IDS,
    TYPE_NAMES,
    ServiceCall,
    canonical,
)

MAX_NAME = 200
"""The longest graph name."""
MAX_PROBLEMS = 100
"""Problems listed at most; one more entry says how many were left out."""
READ_ONLY = frozenset({"id", "version", "tenantId", "createdAt", "createdBy"})
"""Fields of a graph as read: a body may carry them back (edit and save), they are ignored."""


_STRICT = ConfigDict(extra="forbid")


class Component(Wire):
    """One node: an id unique in its graph, a type, and the type's config."""

    model_config = _STRICT

    id: str
    type: str
    config: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _canonical(cls, data: Any) -> Any:
        """A node stored with the names of Hansa's first graphs reads in the one form."""
        if isinstance(data, Mapping) and isinstance(data.get("config"), Mapping):
            kind = str(data.get("type"))
            kind = TYPE_NAMES.get(kind, kind)
            return {**data, "type": kind, "config": canonical(kind, data["config"])}
        return data


class Edge(Wire):
    """``from`` → ``to``; ``when`` ("true" or "false") only on the edges of a condition."""

    model_config = _STRICT

    from_: str = Field(alias="from")
    to: str
    when: Literal["true", "false"] | None = None

    @field_validator("when", mode="before")
    @classmethod
    def _boolean(cls, when: Any) -> Any:
        return str(when).lower() if isinstance(when, bool) else when


class GraphSpec(Wire):
    """A graph as a caller writes it (``POST /api/graphs``), once :func:`parse` passed it."""

    model_config = _STRICT

    name: str = Field(min_length=1, max_length=MAX_NAME)
    components: list[Component]
    edges: list[Edge] = Field(default_factory=list)


class Graph(GraphSpec):
    """One stored version of a graph; versions are never changed, only added."""

    id: str
    tenant_id: str
    version: int
    """1 for the first; each ``POST /api/graphs/{id}/versions`` adds the next."""
    created_at: datetime
    created_by: str
    """``<kind>:<id>`` of the principal that saved this version (``user:<keyId>``…)."""


class Code(StrEnum):
    """What is wrong with a graph."""

    INVALID_FIELD = "invalid_field"
    """A field of the body, a component or an edge is missing, unknown or of a wrong type."""
    NO_NODES = "no_nodes"
    TOO_MANY_NODES = "too_many_nodes"
    INVALID_ID = "invalid_id"
    DUPLICATE_ID = "duplicate_id"
    UNKNOWN_TYPE = "unknown_type"
    BAD_CONFIG = "bad_config"
    UNKNOWN_EDGE_END = "unknown_edge_end"
    DUPLICATE_EDGE = "duplicate_edge"
    UNEXPECTED_WHEN = "unexpected_when"
    """``when`` on an edge that does not leave a condition."""
    MISSING_WHEN = "missing_when"
    """An edge of a condition without ``when``."""
    CYCLE = "cycle"
    NO_ROOT = "no_root"
    UNREACHABLE = "unreachable"
    UNKNOWN_SERVICE = "unknown_service"
    """A ``service.call`` names a service the tenant has not configured (``/api/services``)."""
    TOO_MANY_PROBLEMS = "too_many_problems"


class Problem(Wire):
    """One thing wrong with a graph, and where."""

    code: Code
    message: str
    node: str | None = None
    """The component's id."""
    edge: int | None = None
    """The edge's index in ``edges``."""
    field: str | None = None
    """The path of the offending field (``components[2].config.prompt``)."""
    nodes: list[str] | None = None
    """A cycle's nodes."""


def problems(
    body: Any,
    known_task_types: Iterable[str],
    max_nodes: int,
    services: Collection[str] | None = None,
) -> list[Problem]:
    """Everything wrong with ``body`` (a ``POST /api/graphs`` body), in the order of the body,
    then the graph's shape: cycles, roots, unreachable nodes. Empty: it may be saved.
    ``services``: the tenant's service names a ``service.call`` may name (None: unchecked)."""
    return _checked(body, known_task_types, max_nodes, services)[0]


def _checked(
    body: Any,
    known_task_types: Iterable[str],
    max_nodes: int,
    services: Collection[str] | None = None,
) -> tuple[list[Problem], action_lists.Compiled]:
    if not isinstance(body, Mapping):
        message = "a graph is a JSON object"
        return [Problem(code=Code.INVALID_FIELD, message=message)], action_lists.Compiled()
    found: list[Problem] = []
    _fields(body, found)
    raw, edges = body.get("components"), body.get("edges", [])
    compiled = action_lists.graph(
        raw if isinstance(raw, list) else [], edges if isinstance(edges, list) else []
    )
    found += [_field(path, message) for path, message in compiled.problems]
    if len(compiled.components) > max_nodes:
        size = len(compiled.components)
        message = f"a graph has at most {max_nodes} nodes; this one has {size}"
        found.append(Problem(code=Code.TOO_MANY_NODES, message=message, field="components"))
    known = {*NODE_CONFIGS, *known_task_types}
    nodes = _components(compiled.components, compiled.paths, known, found, services)
    links = _edges(compiled.edges, nodes, found)
    _shape(list(nodes), links, found)
    if len(found) > MAX_PROBLEMS:
        more = len(found) - MAX_PROBLEMS
        left_out = Problem(code=Code.TOO_MANY_PROBLEMS, message=f"and {more} more problems")
        found = [*found[:MAX_PROBLEMS], left_out]
    return found, compiled


def parse(
    body: Any,
    known_task_types: Iterable[str],
    max_nodes: int,
    services: Collection[str] | None = None,
) -> GraphSpec:
    """The graph ``body`` describes, in the flat, canonical form, or ``errors.InvalidGraph``
    listing all its problems."""
    found, compiled = _checked(body, known_task_types, max_nodes, services)
    if found:
        raise errors.InvalidGraph(
            [p.model_dump(mode="json", by_alias=True, exclude_none=True) for p in found]
        )
    flat = {"name": body["name"], "components": compiled.components, "edges": compiled.edges}
    return GraphSpec.model_validate(flat)


def _fields(body: Mapping[str, Any], found: list[Problem]) -> None:
    for key in sorted(set(body) - {"name", "components", "edges"} - READ_ONLY):
        found.append(_field(key, f"unknown field {key!r}"))
    name = body.get("name")
    if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME:
        found.append(_field("name", f"name must be a text of 1 to {MAX_NAME} characters"))
    components = body.get("components")
    if not isinstance(components, list):
        found.append(_field("components", "components must be a list of nodes"))
    elif not components:
        found.append(Problem(code=Code.NO_NODES, message="a graph needs at least one node"))
    if not isinstance(body.get("edges", []), list):
        found.append(_field("edges", "edges must be a list"))


def _field(path: str, message: str, **where: Any) -> Problem:
    return Problem(code=Code.INVALID_FIELD, message=message, field=path, **where)


def _path(prefix: str, loc: Iterable[int | str]) -> str:
    return prefix + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc)


def _invalid(exc: ValidationError, prefix: str, code: Code, **where: Any) -> list[Problem]:
    out: list[Problem] = []
    for error in exc.errors(include_url=False):
        path = _path(prefix, error["loc"])
        message = f"{path}: {error['msg']}"
        out.append(Problem(code=code, message=message, field=path, **where))
    return out


def _components(
    raw: list[Any],
    paths: list[str],
    known: set[str],
    found: list[Problem],
    services: Collection[str] | None = None,
) -> dict[str, str]:
    """The nodes by id (the first of a duplicated id), with their types."""
    nodes: dict[str, str] = {}
    for item, where in zip(raw, paths, strict=True):
        try:
            component = Component.model_validate(item)
        except ValidationError as exc:
            node = item.get("id") if isinstance(item, Mapping) else None
            if isinstance(node, str) and node not in nodes:
                nodes[node] = str(item.get("type"))  # its edges are not unknown ends too
            found.extend(_invalid(exc, where, Code.INVALID_FIELD))
            continue
        node, kind = component.id, component.type
        if not ID_PATTERN.fullmatch(node):
            message = (
                f"node id {node[:70]!r} must be 1 to 64 letters, digits or _, "
                "not starting with a digit"
            )
            found.append(Problem(code=Code.INVALID_ID, message=message, node=node, field=where))
        elif node in RESERVED_IDS:
            message = f"node id {node!r} is a template namespace; choose another"
            found.append(Problem(code=Code.INVALID_ID, message=message, node=node, field=where))
        if node in nodes:
            message = f"node id {node!r} is used more than once"
            found.append(Problem(code=Code.DUPLICATE_ID, message=message, node=node, field=where))
            continue
        nodes[node] = kind
        if kind not in known:
            near = difflib.get_close_matches(kind, known, n=1)
            hint = f"; did you mean {near[0]!r}?" if near else ""
            message = f"node {node!r} has an unknown type {kind!r}{hint}"
            found.append(
                Problem(code=Code.UNKNOWN_TYPE, message=message, node=node, field=f"{where}.type")
            )
        elif kind in NODE_CONFIGS and FACTS in component.config:
            message = f"{where}.config.{FACTS} is filled by the engine as the node starts"
            found.append(_field(f"{where}.config.{FACTS}", message, node=node))
        elif kind in NODE_CONFIGS:
            try:
                config = NODE_CONFIGS[kind].model_validate(component.config)
            except ValidationError as exc:
                found.extend(_invalid(exc, f"{where}.config", Code.BAD_CONFIG, node=node))
            else:
                found.extend(_unknown_service(config, services, node, f"{where}.config.service"))
        for path in _credentials(component.config, f"{where}.config"):
            message = (
                f"{path} holds a credential: whoever may read the graph would see it; "
                "keep credentials in a service's headers (POST /api/services) and name the service"
            )
            found.append(Problem(code=Code.BAD_CONFIG, message=message, node=node, field=path))
    return nodes


def _unknown_service(
    config: Any, services: Collection[str] | None, node: str, path: str
) -> list[Problem]:
    named = config.service if isinstance(config, ServiceCall) else None
    if services is None or named is None or named in services:
        return []
    have = f"; the tenant has {', '.join(sorted(services))}" if services else ""
    message = f"{path}: no service called {named!r} is configured (POST /api/services){have}"
    return [Problem(code=Code.UNKNOWN_SERVICE, message=message, node=node, field=path)]


def _credentials(value: Any, path: str) -> Iterator[str]:
    """Where ``value`` holds a secret (docs/security.md): graphs are shown as saved, so none
    may hold one."""
    if isinstance(value, Mapping):
        named = value.get("name")  # {"name": "Authorization", "value": "…"}: a header list
        pair = isinstance(named, str) and secrets.is_secret_name(named)
        for key, inner in value.items():
            here = f"{path}.{key}"
            secret = secrets.is_secret_name(str(key)) or (pair and key == "value")
            if secret and inner not in (None, ""):
                yield here
            else:
                yield from _credentials(inner, here)
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            yield from _credentials(inner, f"{path}[{i}]")
    elif isinstance(value, str) and "://" in value[:20] and secrets.mask_url(value) != value:
        yield path


def _edges(raw: list[Any], nodes: dict[str, str], found: list[Problem]) -> list[tuple[str, str]]:
    """The edges between known nodes, once each."""
    links: dict[tuple[str, str], None] = {}
    for i, item in enumerate(raw):
        where = f"edges[{i}]"
        try:
            edge = Edge.model_validate(item)
        except ValidationError as exc:
            found.extend(_invalid(exc, where, Code.INVALID_FIELD, edge=i))
            continue
        ends = {"from": edge.from_, "to": edge.to}
        unknown = [(side, end) for side, end in ends.items() if end not in nodes]
        for side, end in unknown:
            message = f"edge {i} goes {side} {end[:70]!r}, which is not a node"
            found.append(
                Problem(
                    code=Code.UNKNOWN_EDGE_END, message=message, edge=i, field=f"{where}.{side}"
                )
            )
        if unknown:
            continue
        if (edge.from_, edge.to) in links:
            message = f"edge {i} repeats {edge.from_!r} → {edge.to!r}"
            found.append(Problem(code=Code.DUPLICATE_EDGE, message=message, edge=i, field=where))
            continue
        links[edge.from_, edge.to] = None
        from_condition = nodes[edge.from_] == "condition"
        if from_condition and edge.when is None:
            message = f'edge {i} leaves condition {edge.from_!r}: say when ("true" or "false")'
            found.append(
                Problem(code=Code.MISSING_WHEN, message=message, edge=i, field=f"{where}.when")
            )
        elif not from_condition and edge.when is not None:
            message = f"edge {i} has when, but {edge.from_!r} is not a condition"
            found.append(
                Problem(code=Code.UNEXPECTED_WHEN, message=message, edge=i, field=f"{where}.when")
            )
    return list(links)


def _shape(nodes: list[str], links: list[tuple[str, str]], found: list[Problem]) -> None:
    """Cycles (Kahn's algorithm, then the cycles among what it could not order), roots, and
    nodes no root reaches."""
    if not nodes:
        return
    after: dict[str, list[str]] = {n: [] for n in nodes}
    entering = dict.fromkeys(nodes, 0)
    for source, target in links:
        after[source].append(target)
        entering[target] += 1
    roots = [n for n in nodes if entering[n] == 0]
    ready, left = deque(roots), dict(entering)
    while ready:
        for target in after[ready.popleft()]:
            left[target] -= 1
            if left[target] == 0:
                ready.append(target)
    stuck = {n for n in nodes if left[n] > 0}
    if stuck:
        inside = {n: [t for t in after[n] if t in stuck] for n in nodes if n in stuck}
        for cycle in _cycles([n for n in nodes if n in stuck], inside):
            message = f"these nodes form a cycle: {', '.join(cycle)}"
            found.append(Problem(code=Code.CYCLE, message=message, nodes=cycle))
    if not roots:
        message = "no node is a start: every node has an edge into it"
        found.append(Problem(code=Code.NO_ROOT, message=message))
        return
    seen, queue = set(roots), deque(roots)
    while queue:
        for target in after[queue.popleft()]:
            if target not in seen:
                seen.add(target)
                queue.append(target)
    for node in nodes:
        if node not in seen:
            message = f"node {node!r} cannot be reached from a start node"
            found.append(Problem(code=Code.UNREACHABLE, message=message, node=node))


def _cycles(nodes: list[str], after: Mapping[str, list[str]]) -> list[list[str]]:
    """The strongly connected components that hold a cycle (Tarjan's, without recursion),
    each in the order of ``nodes``."""
    order = {n: i for i, n in enumerate(nodes)}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def enter(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)

    for start in nodes:
        if start in index:
            continue
        enter(start)
        work = [(start, iter(after[start]))]
        while work:
            node, targets = work[-1]
            for target in targets:
                if target not in index:
                    enter(target)
                    work.append((target, iter(after[target])))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component: list[str] = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1 or node in after[node]:
                        out.append(sorted(component, key=order.__getitem__))
    return sorted(out, key=lambda c: order[c[0]])
