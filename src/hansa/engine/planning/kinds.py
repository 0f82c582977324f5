"""When no plan can be drafted for a change: Hans asks which kind of plan it is (seed 000
§16.1) instead of letting one agent answer about a change it cannot make.

The kinds offered are the playbooks that change something and name themselves
(``offer`` in ``playbooks.toml``); the answer is read by its number, or as a request of
its own (the playbooks' triggers).
"""

from __future__ import annotations

from hansa.engine.planning import answers
from hansa.engine.planning.playbooks import Playbook, builtin, find

KIND = "kind"
"""The name the question is kept under while it waits for an answer."""


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


def read(text: str) -> tuple[Playbook | None, bool]:
    """The kind ``text`` chooses, read like every answer (``answers``): by its number or
    its name; else the playbook the words trigger. The flag: whether the answer describes
    the change in words of its own (then it is read with the request); an answer that only
    names the kind adds nothing to it."""
    kinds = offered()
    question = answers.Question(
        KIND,
        "Kind of change",
        ("kind", "type"),
        tuple(answers.Option(p.id, p.offer or p.id, names=(p.id,)) for p in kinds),
        own_words=False,
    )
    answer = answers.read([question], text[: answers.SHORT_ANSWER_CHARS]).answers.get(KIND)
    if answer is not None:
        return next(p for p in kinds if p.id == answer.value), False
    found = find(text)
    return found, found is not None
