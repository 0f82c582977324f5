"""Simple answer or planning run? Seed 000 §16.1's criteria, explicit and recorded."""

from __future__ import annotations

import re
from dataclasses import dataclass

from hansa.engine.planning.playbooks import Playbook, find

_CHANGE = re.compile(
    r"\b(create|add|build|make|publish|launch|update|change|edit|delete|remove|set up|install|"
    r"deploy|migrate|send|notify)\b",
    re.I,
)
_IRREVERSIBLE = re.compile(r"\b(delete|remove|drop|erase|wipe|unpublish)\b", re.I)


@dataclass(frozen=True)
class Triage:
    """The decision and the criteria that made it."""

    plan: bool
    reason: str
    playbook: Playbook | None = None


def triage(text: str) -> Triage:
    """Plan when the request changes an outside system, spans agents or steps, or may be final."""
    playbook = find(text)
    if playbook is not None:
        owners = {step.owner for step in playbook.steps()}
        steps = len(playbook.steps())
        criteria = ["it changes the project's systems"] if playbook.changes else []
        if len(owners) > 1:
            criteria.append(f"{len(owners)} agents take part")
        if steps > 1:
            criteria.append(f"it takes {steps} steps")
        if _IRREVERSIBLE.search(text):
            criteria.append("it may include a step that cannot be undone")
        if not criteria:
            kinds = sorted({step.task_type for step in playbook.steps()})
            criteria.append(f"it runs a recorded task ({', '.join(kinds)})")
        return Triage(True, "planning run: " + ", ".join(criteria), playbook)
    if _IRREVERSIBLE.search(text):
        return Triage(True, "planning run: it may include a step that cannot be undone")
    if _CHANGE.search(text) and re.search(r"\b(page|product|site|post|ticket|dns)\b", text, re.I):
        return Triage(True, "planning run: it changes the project's systems")
    return Triage(False, "simple answer: no change to outside systems is asked for")
