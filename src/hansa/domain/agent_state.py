"""An agent's scratchpad (seed 002 §8.6): what it knows, assumes and expects in one
conversation, kept between turns and changed only by deltas.

The state is a JSON object whose typed keys (goal, facts, decisions, open questions,
entities, dependencies, assumptions: ``agent_state_fields.py``) are checked and whose
other keys are free notes. A delta says which keys to ``unset``, which list items to
``remove``, which keys to ``set`` and which lists to ``append`` to, applied in that order
by :func:`apply`, a pure function: the engine reads the stored state, applies the delta
and writes the result with a new version, in the transaction of the tool result that
caused it.

Appending a dict with an ``id`` replaces the list's item of that ``id`` (an entity
noted again keeps one entry); appending an item the list already holds adds nothing.
Removing names an item by its ``id`` (a dict item) or by its value. An assumption is
never deleted by a delta (unset or removed): it is set to confidence 0 instead (seed 002
§8.6).

Limits keep the state small enough to ride in every prompt: at most ``MAX_KEYS`` keys,
``MAX_KEY_CHARS`` characters a key, ``MAX_BYTES`` bytes as compact JSON. A delta that
would break one is refused whole (:class:`StateTooLarge`); nothing of it applies.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from pydantic import ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from hansa import errors
from hansa.domain import agent_state_fields as fields
from hansa.domain.base import Wire

MAX_KEYS = 40
"""Top-level keys a state may hold."""
MAX_KEY_CHARS = 64
"""Characters a key may have."""
MAX_BYTES = 16_000
"""Bytes the state may take as compact JSON (UTF-8)."""

State = dict[str, Any]
"""A scratchpad: a JSON object."""


class StateTooLarge(errors.InvalidInput):
    """The delta would take the state past one of its limits."""

    code = "agent_state_too_large"


class Delta(Wire):
    """A change to a state: keys to remove, keys to set, lists to extend."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, frozen=True, extra="forbid"
    )

    unset: list[str] = Field(default_factory=list)
    """Keys to remove (a missing key is no error)."""
    remove: dict[str, list[Any]] = Field(default_factory=dict)
    """List items to remove, by key: an item's ``id`` or the item itself (one the list
    does not hold is no error)."""
    set: dict[str, Any] = Field(default_factory=dict)
    """Keys and the values they take (replacing what they held)."""
    append: dict[str, list[Any]] = Field(default_factory=dict)
    """Lists to extend, by key (a missing key starts an empty list)."""

    def empty(self) -> bool:
        """Whether the delta changes nothing."""
        return not (self.unset or self.remove or self.set or self.append)


class AgentState(Wire):
    """One agent's stored scratchpad in one conversation."""

    conversation_id: str
    agent_id: str
    version: int
    """0 before the first change; each applied delta and each clearing adds one."""
    state: State
    updated_at: datetime | None = None


def parse_delta(raw: Any) -> Delta:
    """A delta from JSON, or InvalidInput saying what is wrong with it."""
    try:
        return Delta.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "delta"
        raise errors.InvalidInput(
            f"the agent state delta is invalid at {where}: {first['msg']}",
            details={"field": where},
        ) from None


def apply(state: State, delta: Delta) -> State:
    """``state`` changed by ``delta`` (a new object; ``state`` is left as it was).

    Raises InvalidInput when the delta deletes an assumption, when ``append`` or
    ``remove`` names a key that holds no list, or when a typed key would not hold its
    type; StateTooLarge when the result would break a limit.
    """
    result = {k: v for k, v in state.items() if k not in set(delta.unset)}
    for key, gone in delta.remove.items():
        current = result.get(key, [])
        if not isinstance(current, list):
            raise errors.InvalidInput(
                f"cannot remove from {key!r}: it holds no list", details={"field": key}
            )
        left = [item for item in current if not _named(item, gone)]
        if left:
            result[key] = left
        else:
            result.pop(key, None)
    result.update(_copy(delta.set))
    for key, items in delta.append.items():
        current = result.get(key, [])
        if not isinstance(current, list):
            raise errors.InvalidInput(
                f"cannot append to {key!r}: it holds no list", details={"field": key}
            )
        result[key] = _extended(current, _copy(items))
    changed = {k: v for k, v in result.items() if state.get(k) != v}
    fields.check_types(changed)  # a state stored before the types were checked still changes
    fields.check_kept(state, result)
    check(result)
    return result


def _named(item: Any, names: list[Any]) -> bool:
    """Whether ``item`` is one of ``names``: by its id (a dict item) or by its value."""
    item_id = item.get("id") if isinstance(item, dict) else None
    return item in names or (item_id is not None and item_id in names)


def check(state: State) -> None:
    """StateTooLarge unless ``state`` keeps within the limits."""
    if len(state) > MAX_KEYS:
        raise StateTooLarge(f"the agent state may hold at most {MAX_KEYS} keys ({len(state)})")
    long = next((k for k in state if len(k) > MAX_KEY_CHARS), None)
    if long is not None:
        raise StateTooLarge(
            f"an agent state key may have at most {MAX_KEY_CHARS} characters ({long[:20]}…)"
        )
    size = len(encode(state))
    if size > MAX_BYTES:
        raise StateTooLarge(f"the agent state may take at most {MAX_BYTES} bytes ({size})")


def encode(state: State) -> bytes:
    """The state as compact JSON (what the byte limit counts)."""
    return json.dumps(state, ensure_ascii=False, separators=(",", ":"), default=str).encode()


def _copy(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


def _extended(items: list[Any], more: list[Any]) -> list[Any]:
    out = list(items)
    for item in more:
        item_id = item.get("id") if isinstance(item, dict) else None
        at = next(
            (
                i
                for i, old in enumerate(out)
                if item_id is not None and isinstance(old, dict) and old.get("id") == item_id
            ),
            None,
        )
        if at is not None:
            out[at] = item
        elif item not in out:
            out.append(item)
    return out
