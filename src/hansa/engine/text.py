"""Text helpers the engine shares: a bound on every regular expression, a walk over
the strings of nested parameters, and a model's structured answer read as a JSON object."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any, TypeVar, cast

from hansa.domain.conditions import MATCH_TIMEOUT_SECONDS

T = TypeVar("T")

__all__ = ["MATCH_TIMEOUT_SECONDS", "json_object", "map_strings"]


def json_object(raw: str) -> dict[str, Any] | None:
    """``raw`` read as a JSON object; None when it is not JSON or not an object."""
    try:
        found = json.loads(raw)
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


def map_strings(value: T, change: Callable[[str], Any]) -> T:
    """``value`` with every string, however deeply nested in dicts and lists, replaced by
    ``change(it)`` (the same shape: a dict stays a dict), in document order.

    Iterative, so no nesting depth can exhaust the stack.
    """
    given: Any = value
    if isinstance(given, str):
        return cast(T, change(given))
    root = _shell(given)
    if root is given:
        return value
    # each frame: the children still to visit, and the copy they go into
    stack: list[tuple[Iterator[tuple[Any, Any]], Any]] = [(_children(given), root)]
    while stack:
        children, copy = stack[-1]
        for key, child in children:
            if isinstance(child, str):
                copy[key] = change(child)
                continue
            copy[key] = inner = _shell(child)
            if inner is not child:  # a dict or a list: visit it before its next sibling
                stack.append((_children(child), inner))
                break
        else:
            stack.pop()
    return cast(T, root)


def _shell(value: Any) -> Any:
    """An empty copy of a dict or a list (a list already of its length); else ``value``."""
    if isinstance(value, dict):
        return {}
    if isinstance(value, list):
        return [None] * len(value)
    return value


def _children(value: dict[Any, Any] | list[Any]) -> Iterator[tuple[Any, Any]]:
    return iter(value.items()) if isinstance(value, dict) else enumerate(value)
