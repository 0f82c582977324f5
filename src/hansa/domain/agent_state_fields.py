"""The typed fields of an agent's state (seed 002 §8.6; issue 32 item 3).

A state is one flat JSON object (its wire shape since issue 19). These keys have a type,
checked whenever a delta changes the state; every other key is a free note of any JSON:

- ``goal``: the text of what the user is after in this conversation;
- ``facts``, ``decisions``, ``openQuestions``: lists of texts;
- ``entities``: the entities in play, ``{id, kind, name?}``;
- ``dependencies``: links between them, ``{from, to, rel?}``;
- ``assumptions``: hypotheses with a confidence, ``{id, hypothesis, confidence,
  evidence?}``.
  An assumption is never deleted by a delta: one that no longer holds is set to
  confidence 0 (the seed's rule). Clearing the whole state (the user's request, or the
  conversation resolved or archived) still empties it.

:func:`compact` shrinks a state to a byte cap, dropping what matters least first (free
notes, then the oldest facts, dependencies, entities, assumptions at confidence 0,
decisions, open questions; never the goal): how the end of a turn keeps the stored state
within its share of the model's window, after :func:`settle` kept a repeated text once and
let an open question go once a decision or a fact records it.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    TypeAdapter,
    ValidationError,
)

from hansa import errors

MAX_TEXT = 500
"""Characters a text of a typed field may have (a goal, a fact, a hypothesis…)."""
GOAL = "goal"
FACTS = "facts"
DECISIONS = "decisions"
OPEN_QUESTIONS = "openQuestions"
ENTITIES = "entities"
DEPENDENCIES = "dependencies"
ASSUMPTIONS = "assumptions"
NEVER_DELETED = frozenset({ASSUMPTIONS})
"""Keys whose items a delta may change but not delete."""


class _Item(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class Entity(_Item):
    """An entity in play: what the agent knows it is called."""

    id: str = Field(min_length=1, max_length=64)
    kind: str = Field(min_length=1, max_length=64)
    name: str | None = Field(default=None, max_length=MAX_TEXT)


class Dependency(_Item):
    """A link between two entities (``entity.link`` notes one)."""

    from_: str = Field(alias="from", min_length=1, max_length=64)
    to: str = Field(min_length=1, max_length=64)
    rel: str | None = Field(default=None, max_length=64)


class Assumption(_Item):
    """A hypothesis the agent works with, and how sure it is (0: no longer holds)."""

    id: str = Field(min_length=1, max_length=64)
    hypothesis: str = Field(min_length=1, max_length=MAX_TEXT)
    confidence: float = Field(ge=0, le=1)
    evidence: list[str] = Field(default_factory=list, max_length=10)


_Text = Annotated[str, StringConstraints(min_length=1, max_length=MAX_TEXT)]
_TEXTS = TypeAdapter(list[_Text])
_TYPES: dict[str, TypeAdapter[Any]] = {
    GOAL: TypeAdapter(_Text),
    FACTS: _TEXTS,
    DECISIONS: _TEXTS,
    OPEN_QUESTIONS: _TEXTS,
    ENTITIES: TypeAdapter(list[Entity]),
    DEPENDENCIES: TypeAdapter(list[Dependency]),
    ASSUMPTIONS: TypeAdapter(list[Assumption]),
}
TYPED = tuple(_TYPES)
"""The typed keys, most important first (the prompt's order)."""


def json_schema() -> dict[str, Any]:
    """The state's JSON schema, for the API's description: the typed keys, and any other
    key as a free note (each item's schema inline: a state is read whole)."""
    text = {"type": "string", "minLength": 1, "maxLength": MAX_TEXT}
    texts = {"type": "array", "items": text}

    def items(model: type[BaseModel]) -> dict[str, Any]:
        return {"type": "array", "items": model.model_json_schema(by_alias=True)}

    return {
        "type": "object",
        "description": "Typed keys; every other key is a free note of any JSON.",
        "properties": {
            GOAL: text,
            FACTS: texts,
            DECISIONS: texts,
            OPEN_QUESTIONS: texts,
            ENTITIES: items(Entity),
            DEPENDENCIES: items(Dependency),
            ASSUMPTIONS: items(Assumption),
        },
        "additionalProperties": True,
    }


def check_types(state: dict[str, Any]) -> None:
    """InvalidInput naming the first typed key whose value is not of its type."""
    for key, adapter in _TYPES.items():
        if key not in state:
            continue
        try:
            adapter.validate_python(state[key], strict=True)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in (key, *first["loc"]))
            raise errors.InvalidInput(
                f"the agent state's {key} is not of its type at {where}: {first['msg']}",
                details={"field": where},
            ) from None


def settle(state: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """The state as a turn's end leaves it before it is cut to its share of the window (a
    new object), and how many items it lost: a text said twice in ``facts``, ``decisions``
    or ``openQuestions`` kept once (its first place; case and spacing aside), and an open
    question also recorded as a decision or a fact gone (it is answered)."""
    out = json.loads(json.dumps(state, default=str))
    lost = 0
    settled = {_said(t) for key in (DECISIONS, FACTS) for t in _texts(out, key)}
    for key in (FACTS, DECISIONS, OPEN_QUESTIONS):
        items = out.get(key)
        if not isinstance(items, list):
            continue
        seen = set(settled) if key == OPEN_QUESTIONS else set()
        kept = []
        for item in items:
            said = _said(item) if isinstance(item, str) else None
            if said is not None and said in seen:
                continue
            kept.append(item)
            if said is not None:
                seen.add(said)
        lost += len(items) - len(kept)
        if kept:
            out[key] = kept
        else:
            del out[key]
    return out, lost


def _texts(state: dict[str, Any], key: str) -> list[str]:
    items = state.get(key)
    return [t for t in items if isinstance(t, str)] if isinstance(items, list) else []


def _said(text: str) -> str:
    return " ".join(text.casefold().split()).rstrip(".?!")


def check_kept(before: dict[str, Any], after: dict[str, Any]) -> None:
    """InvalidInput when ``after`` lost an assumption ``before`` held (by id): a delta
    sets a spent one to confidence 0 instead of deleting it."""
    for key in sorted(NEVER_DELETED):
        had, has = _ids(before.get(key)), _ids(after.get(key))
        gone = sorted(had - has)
        if gone:
            raise errors.InvalidInput(
                f"{key} are never deleted ({gone[0]}): set its confidence to 0 instead",
                details={"field": key},
            )


def _ids(items: Any) -> set[str]:
    if not isinstance(items, list):
        return set()
    return {str(i["id"]) for i in items if isinstance(i, dict) and "id" in i}


Ref = tuple[str, int | None]
"""An item of a state: a typed list's key and the item's index, or a key whole (a free
note; the goal)."""


def size(state: dict[str, Any]) -> int:
    """Bytes of the state as compact JSON (UTF-8)."""
    return len(json.dumps(state, ensure_ascii=False, separators=(",", ":"), default=str).encode())


def drop_order(state: dict[str, Any]) -> list[Ref]:
    """What a state too large loses, first first: the free notes, then the oldest facts,
    dependencies, entities, the assumptions at confidence 0, decisions, open questions, and
    last the other assumptions. Never the goal."""
    order: list[Ref] = [(k, None) for k in state if k not in _TYPES]
    for key in (FACTS, DEPENDENCIES, ENTITIES):
        order += [(key, i) for i in range(len(_list(state, key)))]
    assumptions = _list(state, ASSUMPTIONS)
    spent = [i for i, a in enumerate(assumptions) if _confidence(a) == 0]
    order += [(ASSUMPTIONS, i) for i in spent]
    for key in (DECISIONS, OPEN_QUESTIONS):
        order += [(key, i) for i in range(len(_list(state, key)))]
    order += [(ASSUMPTIONS, i) for i in range(len(assumptions)) if i not in set(spent)]
    return order


def without(state: dict[str, Any], refs: list[Ref]) -> dict[str, Any]:
    """``state`` less the items ``refs`` name (a new object; a list they empty goes)."""
    gone = set(refs)
    out: dict[str, Any] = {}
    for key, value in state.items():
        if (key, None) in gone:
            continue
        if key in _TYPES and isinstance(value, list) and value:
            kept = [v for i, v in enumerate(value) if (key, i) not in gone]
            if kept:
                out[key] = kept
            continue
        out[key] = value
    copied: dict[str, Any] = json.loads(json.dumps(out, default=str))
    return copied


def compact(state: dict[str, Any], cap: int) -> tuple[dict[str, Any], int]:
    """``state`` shrunk to at most ``cap`` bytes (a new object), items going in
    :func:`drop_order`, and how many went. A goal alone past the cap stays."""
    order = drop_order(state)
    low, high = 0, len(order)  # the fewest drops that fit: removing never grows a state
    while low < high:
        mid = (low + high) // 2
        if size(without(state, order[:mid])) <= cap:
            high = mid
        else:
            low = mid + 1
    return without(state, order[:low]), low


def _list(state: dict[str, Any], key: str) -> list[Any]:
    value = state.get(key)
    return value if isinstance(value, list) else []


def _confidence(item: Any) -> float | None:
    value = item.get("confidence") if isinstance(item, dict) else None
    return float(value) if isinstance(value, int | float) else None
