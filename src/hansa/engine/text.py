"""Text helpers the engine shares: a bound on every regular expression, and a walk over
the strings of nested parameters."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

T = TypeVar("T")

MATCH_TIMEOUT_SECONDS = 0.05
"""How long one routing rule, playbook trigger or answer extractor may match (patterns
are data, and a bad one must not stall a turn); past it the pattern counts as no match."""


def map_strings(value: T, change: Callable[[str], Any]) -> T:
    """``value`` with every string, however deeply nested in dicts and lists, replaced by
    ``change(it)`` (the same shape: a dict stays a dict)."""
    # a module function, not a closure calling itself: that would be a reference cycle
    # per call, left for the cyclic collector
    found: Any = value
    if isinstance(found, str):
        found = change(found)
    elif isinstance(found, dict):
        found = {k: map_strings(v, change) for k, v in found.items()}
    elif isinstance(found, list):
        found = [map_strings(v, change) for v in found]
    return cast(T, found)
