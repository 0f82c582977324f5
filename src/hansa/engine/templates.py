"""The one template renderer, for task parameters and prompts: ``{{namespace.path}}`` filled
from a :class:`Scope`, by substitution only.

What a reference may name:

- ``{{message.content}}``, ``{{user.x}}``, ``{{context.x}}``, ``{{project.x}}``: the
  namespaces a scope carries;
- ``{{copy.html}}`` / ``{{copy.result.html}}``: the result of the step whose ref (or the
  node whose id) is ``copy`` (``.result`` is an alias for the whole result);
- ``{{llmResponse}}``: the last model answer of a prompt graph;
- ``{{logsResult}}`` / ``{{logsResult.total}}``: a step result by a bare name (a node's
  id, which a seed action's ``resultKey`` chooses);
- ``{{item}}`` / ``{{item.name}}`` / ``{{i}}``: loop variables, by the names a loop's
  ``itemKey`` / ``indexKey`` chose.

Path segments are identifiers or list indexes (``items.0.name``), looked up in mappings and
lists only, never as attributes; a name starting with ``_`` is not a reference at all.
Anything that is not a reference (``{{__class__}}``, ``{{1+1}}``, ``{{ title }}`` that no
loop binds) stays exactly as written, and what a reference brings in is never rendered
again, so text that arrives through a variable cannot reach the scope. A reference that
names nothing stops the task under the law of clarity, and the cap bounds what
substitution builds.

A node may also ask for values by path without a template: a parameter holding
``{"$facts": ["logsResult.total", "message.content"]}`` (:func:`facts_wanted`) is filled
with exactly those values, nested by path, the ones that name nothing left out. A
condition's fields are read so (``exists`` may ask about what is not there), by the same
lookup as a reference: a field and a template name the same things.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from hansa import errors
from hansa.engine.text import map_strings

T = TypeVar("T")

MAX_OUTPUT_BYTES = 64 * 1024
"""The most one rendered string may hold, in UTF-8 bytes (substitution could otherwise
multiply one large value many times)."""

LLM_RESPONSE = "llmResponse"
"""The bare name bound to the last model answer."""

NAMESPACES = ("message", "user", "context", "project")
"""The named namespaces a scope may carry."""

_NAME = r"[A-Za-z][A-Za-z0-9_]*"
_REFERENCE = re.compile(rf"\{{\{{\s*({_NAME}(?:\.(?:{_NAME}|[0-9]+))*)\s*\}}\}}")
_CLARITY = "the law of clarity"
_MISSING: Any = object()
FACTS_WANTED = "$facts"


@dataclass(frozen=True)
class Scope:
    """What references may name. A reference's first name is looked up among the loop
    variables, then as ``llmResponse``, then as a namespace, then among the results. A
    namespace (or ``llm_response``) left ``None`` is not carried: its name then refers to a
    step result of that name, as a plan's refs always have."""

    message: Mapping[str, Any] | None = None
    """The message that started the work (``content``, ``senderId``…)."""
    user: Mapping[str, Any] | None = None
    """Inputs and facts about the user."""
    context: Mapping[str, Any] | None = None
    """The conversation's context."""
    project: Mapping[str, Any] | None = None
    """The project the work belongs to."""
    results: Mapping[str, Any] = field(default_factory=dict)
    """Results of earlier steps, by task id, plan step ref or graph node id."""
    llm_response: Any = None
    """What ``{{llmResponse}}`` names; ``None`` when no model has answered."""
    loop: Mapping[str, Any] = field(default_factory=dict)
    """Loop variables by the names the loop chose (its ``itemKey`` and ``indexKey``)."""


class MissingVariable(errors.InvalidInput):
    """The law of clarity: a reference names nothing in the scope (never guessed)."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(f"{_CLARITY}: {message}", details={"law": "clarity", "missing": [name]})
        self.name = name
        """The reference as written, without braces (``copy.html``)."""


class OutputTooLarge(errors.InvalidInput):
    """A rendered string would exceed :data:`MAX_OUTPUT_BYTES`."""

    code = "template_too_large"

    def __init__(self) -> None:
        super().__init__(
            f"a template renders to more than {MAX_OUTPUT_BYTES} bytes",
            details={"limitBytes": MAX_OUTPUT_BYTES},
        )


def render(text: str, scope: Scope) -> str:
    """``text`` with every reference replaced by its value (strings as they are, anything
    else as compact JSON), in a single pass. A text with references renders to at most
    :data:`MAX_OUTPUT_BYTES`; one without any is returned as it is.

    Raises:
        MissingVariable: a reference names nothing in ``scope``.
        OutputTooLarge: the result would exceed :data:`MAX_OUTPUT_BYTES`.
    """
    parts: list[str] = []
    size = 0
    end = 0
    for match in _matches(text, _bound(scope)):
        piece = text[end : match.start()]
        filled = _as_text(_lookup(match.group(1), scope))
        size += _bytes(piece) + _bytes(filled)
        if size > MAX_OUTPUT_BYTES:
            raise OutputTooLarge
        parts += (piece, filled)
        end = match.end()
    if end == 0:  # nothing substituted: the text as given, bounded by whoever gave it
        return text
    tail = text[end:]
    if size + _bytes(tail) > MAX_OUTPUT_BYTES:
        raise OutputTooLarge
    parts.append(tail)
    return "".join(parts)


class ParamsTooLarge(errors.InvalidInput):
    """A node's parameters, filled, would exceed their cap (``HANSA_MAX_NODE_PARAMS_BYTES``):
    each string and each whole-reference value counts by its size, so one large result named
    a thousand times counts a thousand times (it would be stored so)."""

    code = "template_too_large"

    def __init__(self, limit: int) -> None:
        super().__init__(
            f"the node's parameters render to more than {limit} bytes "
            "(HANSA_MAX_NODE_PARAMS_BYTES); nothing was done or stored",
            details={"limitBytes": limit},
        )


def render_value(value: T, scope: Scope, *, max_bytes: int | None = None) -> T:
    """``value`` with every string in it (however deeply nested in dicts and lists)
    rendered; a string that is exactly one reference (spaces around it allowed) becomes
    the referenced value itself, keeping its type (and its size: nothing is built). Keys
    are left as they are. A top-level parameter asking for facts (:func:`facts_wanted`)
    gets them, after the strings are rendered (so nothing it brings in is rendered).

    Raises:
        ParamsTooLarge: with ``max_bytes``, the strings and values filled in add up to more
            (counted as they are filled: past the cap nothing more is measured).
    """
    used = 0

    def counted(filled: Any) -> Any:
        nonlocal used
        if max_bytes is not None:
            used += json_bytes(filled, max_bytes - used)
            if used > max_bytes:
                raise ParamsTooLarge(max_bytes)
        return filled

    rendered = map_strings(value, lambda text: counted(_fill(text, scope)))
    if not isinstance(rendered, dict):
        return rendered
    filled = {
        k: counted(_facts(v[FACTS_WANTED], scope)) if _wants_facts(v) else v
        for k, v in rendered.items()
    }
    return filled  # type: ignore[return-value]


def json_bytes(value: Any, enough: int | None = None) -> int:
    """About how many bytes ``value`` takes as compact JSON (a string by its UTF-8 bytes);
    with ``enough``, a string longer than that counts by its length alone (it is past any
    cap the caller checks, and encoding it all would only cost time)."""
    if isinstance(value, str):
        if enough is not None and len(value) > enough:
            return len(value)
        return _bytes(value) + 2
    return len(_as_text(value).encode("utf-8"))


def facts_wanted(paths: Collection[str]) -> dict[str, list[str]]:
    """A parameter that :func:`render_value` fills with the values at ``paths``."""
    return {FACTS_WANTED: sorted(set(paths))}


def _wants_facts(value: Any) -> bool:
    return isinstance(value, dict) and set(value) == {FACTS_WANTED}


def _facts(paths: Any, scope: Scope) -> dict[str, Any]:
    """The values at ``paths`` nested by path (``{"a": {"b": 1}}`` for ``a.b``); a path that
    names nothing is left out. Values from the scope are never changed: a longer path
    inside a value already taken is in it."""
    out: dict[str, Any] = {}
    ours = {id(out)}
    for path in sorted(str(p) for p in paths if isinstance(p, str)):
        try:
            value = _lookup(path, scope)
        except MissingVariable:
            continue
        *parents, last = path.split(".")
        here = out
        for part in parents:
            inner = here.get(part)
            if inner is None:
                inner = here[part] = {}
                ours.add(id(inner))
            if id(inner) not in ours:
                break
            here = inner
        else:
            here.setdefault(last, value)
    return out


def references(value: Any, *, loop_keys: Collection[str] = ()) -> tuple[str, ...]:
    """The references ``value``'s strings name (``copy.html``, ``llmResponse``), in order
    and without repeats, for validation before anything runs; ``loop_keys`` are the loop
    variable names that will be bound.
    """
    loop = dict.fromkeys(loop_keys)
    found: dict[str, None] = {}

    def collect(text: str) -> str:
        for match in _matches(text, loop):
            found.setdefault(match.group(1))
        return text

    map_strings(value, collect)
    return tuple(found)


def mask(value: T, stand_in: str, *, loop_keys: Collection[str] = ()) -> T:
    """``value`` with every reference replaced by ``stand_in``, for validating parameters
    whose references are not filled yet (a whole reference becomes ``stand_in`` too)."""
    loop = dict.fromkeys(loop_keys)

    def blank(text: str) -> str:
        pieces: list[str] = []
        end = 0
        for match in _matches(text, loop):
            pieces += (text[end : match.start()], stand_in)
            end = match.end()
        return "".join(pieces) + text[end:] if pieces else text

    return map_strings(value, blank)


def _fill(text: str, scope: Scope) -> Any:
    whole = _REFERENCE.fullmatch(text.strip())
    if whole and _is_reference(whole.group(1), _bound(scope)):
        return _lookup(whole.group(1), scope)
    return render(text, scope)


def _bound(scope: Scope) -> Mapping[str, Any]:
    """The bare names something binds: loop variables and step results."""
    return {**scope.results, **scope.loop} if scope.results else scope.loop


def _matches(text: str, loop: Mapping[str, Any]) -> Iterator[re.Match[str]]:
    for match in _REFERENCE.finditer(text):
        if _is_reference(match.group(1), loop):
            yield match


def _is_reference(name: str, bound: Mapping[str, Any]) -> bool:
    # a bare name is a reference only when something binds it (a loop variable, a step
    # result): text such as an HTML template's ``{{ title }}`` stays as written
    return "." in name or name == LLM_RESPONSE or name in bound


def _lookup(name: str, scope: Scope) -> Any:
    head, *path = name.split(".")
    if head in scope.loop:
        found = _walk(scope.loop[head], path)
    elif head == LLM_RESPONSE and scope.llm_response is not None:
        found = _walk(scope.llm_response, path)
    elif head in NAMESPACES and (namespace := getattr(scope, head)) is not None:
        found = _walk(namespace, path)
    elif head in scope.results:
        found = _walk(scope.results[head], path[1:] if path[:1] == ["result"] else path)
        if found is _MISSING:  # in the words plans have always used
            where = ".".join(path)
            raise MissingVariable(
                name, f"the result of step {head!r} has no {where!r} ({{{{{name}}}}})"
            )
    else:
        raise MissingVariable(name, f"nothing named {head!r} is set (for {{{{{name}}}}})")
    if found is _MISSING:
        raise MissingVariable(name, f"{{{{{name}}}}} names nothing: {head!r} has no such value")
    return found


def _walk(value: Any, path: list[str]) -> Any:
    for part in path:
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif isinstance(value, list | tuple) and _index(part) < len(value):
            value = value[_index(part)]
        else:
            return _MISSING
    return value


def context_too_large(context: Mapping[str, Any], limit: int) -> str | None:
    """Why ``context`` may not be a conversation's context (more than ``limit`` bytes of
    JSON, ``HANSA_MAX_CONVERSATION_CONTEXT_BYTES``), or None: a ``context.update`` whose
    values filled in would take it past that fails and changes nothing."""
    if json_bytes(dict(context)) <= limit:
        return None
    return (
        f"the conversation's context would hold more than {limit} bytes "
        "(HANSA_MAX_CONVERSATION_CONTEXT_BYTES); nothing was changed"
    )


def _index(part: str) -> int:
    """A path segment as a list index; one no list could reach (a 5,000-digit number, which
    ``int`` refuses to convert) or that is not a number at all is past every list."""
    if not (part.isascii() and part.isdigit()) or len(part) > 18:
        return 1 << 62
    return int(part)


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)


def _bytes(text: str) -> int:
    return len(text.encode("utf-8"))
