"""A documented transition table for lifecycle enums."""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import TypeVar

from hansa import errors

S = TypeVar("S", bound=StrEnum)


class TransitionError(errors.Conflict):
    """A lifecycle was asked to move along an edge its table does not have (HTTP 409)."""

    code = "invalid_transition"


def check_transition(table: Mapping[S, frozenset[S]], current: S, target: S) -> None:
    """Raise TransitionError unless ``current -> target`` is an edge of ``table``."""
    if target not in table.get(current, frozenset()):
        name = type(current).__name__
        raise TransitionError(f"{name} cannot move from {current.value} to {target.value}")


def sources(table: Mapping[S, frozenset[S]], target: S) -> frozenset[S]:
    """Every state from which ``target`` may be reached."""
    return frozenset(state for state, targets in table.items() if target in targets)
