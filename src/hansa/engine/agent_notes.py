"""An agent's state as its prompt carries it: a budgeted section (issue 32 item 3).

The state (``domain/agent_state.py``) rides in the agent's prompt as a system message of
its own after the agent's persona: internal notes, one line per typed item (goal, open
questions, decisions, assumptions, entities, dependencies, facts) and one per free note.
It is a section of the context budget (``context_budget.fit``): at most ``STATE_SHARE`` of
the window. When it does not fit, items go in the order the stored state is compacted in
(``agent_state_fields.compact``: free notes, then the oldest facts…, never the goal), and
``context_usage`` names what was left out.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from hansa.domain import agent_state_fields as fields
from hansa.domain.agent_state import AgentState
from hansa.domain.event import ContextDrop
from hansa.engine.context_packs import MESSAGE_TOKENS, estimate_tokens

STATE_SHARE = 0.15
"""The most of the model's window an agent's state may take in its prompt, and what the
stored state is cut to at a turn's end (``turns/reconcile.py``): on the embedded model's
2,048 tokens, 307."""
INTRO = "Your notes from earlier in this conversation (your agent state"
"""How the notes' system message begins."""
SECTION = "state"
"""The section's name in ``context_usage``."""


@dataclass(frozen=True, slots=True)
class Notes:
    """One agent's stored state, for its prompt."""

    agent_id: str
    version: int
    state: dict[str, Any]


def of(stored: AgentState) -> Notes:
    """The notes of a stored state."""
    return Notes(stored.agent_id, stored.version, stored.state)


def render(notes: Notes) -> str:
    """The notes as the model reads them; empty for an empty state."""
    if not notes.state:
        return ""
    return "\n".join([_head(notes.version), *(line for _, line in _lines(notes.state))])


def fit(notes: Notes, budget: int, dropped: list[ContextDrop]) -> str:
    """The notes cut to ``budget`` tokens (with their message's cost); what is left out
    is named in ``dropped``."""
    whole = render(notes)
    if not whole or _cost(whole) <= budget:
        return whole
    state, lost = shrink(notes, budget)
    text = render(Notes(notes.agent_id, notes.version, state))
    if cost(text) > budget:  # the goal alone does not fit: nothing of the notes goes in
        text = ""
    what = (
        f"agent state v{notes.version}: {lost} of its items and notes (free notes and the "
        "oldest facts first)"
        if text
        else f"agent state v{notes.version}: all of it (its goal alone is past the budget)"
    )
    tokens = _cost(whole) - cost(text)
    dropped.append(ContextDrop(section=SECTION, what=what, tokens=tokens))
    return text


def shrink(notes: Notes, budget: int) -> tuple[dict[str, Any], int]:
    """The notes' state with items dropped in compaction's order
    (``agent_state_fields.drop_order``) until its message costs at most ``budget`` tokens,
    and how many went; the goal stays, even alone past the budget. One pass: each item is
    one line of the message, so its length says what dropping it saves."""
    lines = _lines(notes.state)
    if not lines and not notes.state:
        return notes.state, 0
    length = len(_head(notes.version)) + sum(len(line) + 1 for _, line in lines)
    saves: dict[fields.Ref, int] = {}
    for ref, line in lines:
        saves[ref] = saves.get(ref, 0) + len(line) + 1
    order = fields.drop_order(notes.state)
    count = 0
    while count < len(order) and (length + 3) // 4 + MESSAGE_TOKENS > budget:
        length -= saves.get(order[count], 0)
        count += 1
    if count == 0:
        return notes.state, 0
    return fields.without(notes.state, order[:count]), count


def cost(text: str) -> int:
    """Estimated tokens of the notes' message (0 for none)."""
    return _cost(text) if text else 0


def _cost(text: str) -> int:
    return estimate_tokens(text) + MESSAGE_TOKENS


def _head(version: int) -> str:
    return (
        f"{INTRO}, version {version}; internal, never shown to the user; change them "
        "with the agent_state.update tool when what you know changes):"
    )


def _lines(state: dict[str, Any]) -> list[tuple[fields.Ref, str]]:
    """One line per item, in the prompt's order, each with the item it shows."""
    lines: list[tuple[fields.Ref, str]] = []
    if isinstance(state.get(fields.GOAL), str):
        lines.append(((fields.GOAL, None), f"Goal: {state[fields.GOAL]}"))
    for label, key in (
        ("Open question", fields.OPEN_QUESTIONS),
        ("Decision", fields.DECISIONS),
        ("Fact", fields.FACTS),
    ):
        lines += [((key, i), f"{label}: {_text(v)}") for i, v in enumerate(_list(state, key))]
    for i, a in enumerate(_list(state, fields.ASSUMPTIONS)):
        if isinstance(a, dict):
            said = f"{a.get('id')} (confidence {a.get('confidence')}): {a.get('hypothesis')}"
            lines.append(((fields.ASSUMPTIONS, i), f"Assumption {said}"))
    for i, e in enumerate(_list(state, fields.ENTITIES)):
        if isinstance(e, dict):
            name = f"{e['name']} " if e.get("name") else ""
            line = f"Entity in play: {name}({e.get('kind')} {e.get('id')})"
            lines.append(((fields.ENTITIES, i), line))
    for i, d in enumerate(_list(state, fields.DEPENDENCIES)):
        if isinstance(d, dict):
            rel = d.get("rel") or "links to"
            line = f"Dependency: {d.get('from')} {rel} {d.get('to')}"
            lines.append(((fields.DEPENDENCIES, i), line))
    for key, value in state.items():
        if key not in fields.TYPED:
            note = json.dumps(value, ensure_ascii=False, default=str)
            lines.append(((key, None), f"Note {key}: {note}"))
    return lines


def _list(state: dict[str, Any], key: str) -> list[Any]:
    value = state.get(key)
    return value if isinstance(value, list) else []


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
