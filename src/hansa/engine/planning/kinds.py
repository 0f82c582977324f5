"""When no plan can be drafted for a change: Hans asks which kind of plan it is (seed 000
§16.1) instead of letting one agent answer about a change it cannot make.

The kinds offered are the playbooks that change something and name themselves
(``offer`` in ``playbooks.toml``); the answer is read by its number, or as a request of
its own (the playbooks' triggers).
"""

from __future__ import annotations

import re

from hansa.engine.planning.playbooks import Playbook, builtin, find

KIND = "kind"
"""The name the question is kept under while it waits for an answer."""
_NUMBER = re.compile(r"^\s*(?:option\s+)?(\d{1,2})\s*[.)]?\s*$", re.I)


def offered() -> list[Playbook]:
    """The kinds of plan Hans offers, in the playbooks' order."""
    return [p for p in builtin() if p.changes and p.offer]


def question(reason: str) -> str:
    """What Hans asks: why he wants a plan, then the kinds, numbered."""
    lines = [
        f"I want to plan this before anything changes ({reason}), but I could not turn it "
        "into steps I can run yet. Which of these is it closest to?"
    ]
    lines += [f"{i}. {p.offer}" for i, p in enumerate(offered(), start=1)]
    lines.append("Answer with its number, or tell me the change in other words.")
    return "\n".join(lines)


def read(text: str) -> Playbook | None:
    """The kind ``text`` chooses: by its number, or the playbook its words trigger."""
    number = _NUMBER.match(text[:200])
    if number is not None:
        kinds = offered()
        index = int(number.group(1)) - 1
        return kinds[index] if 0 <= index < len(kinds) else None
    lowered = text.strip().lower()
    for p in offered():
        if p.offer and lowered and lowered in p.offer.lower():
            return p
    return find(text)
