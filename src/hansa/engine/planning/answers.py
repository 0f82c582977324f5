"""Reading the user's answers: labelled values, numbered answers, fork choices, approval."""

from __future__ import annotations

import re

import regex

from hansa.domain.plan import Plan
from hansa.engine.planning.playbooks import Playbook
from hansa.engine.text import MATCH_TIMEOUT_SECONDS

_APPROVE = re.compile(
    r"^\s*(yes|yep|yeah|ok(ay)?|sure|go( ahead)?|approved?|do it|let'?s go|proceed|looks good)"
    r"\b[\s,.!]*(please\s*)?(proceed|go ahead|go|do it|start)?\W*$",
    re.I,
)
_CANCEL = re.compile(r"^\s*(no|cancel|stop|never ?mind|forget it|abort)\b", re.I)
_SEPARATORS = re.compile(r"[;\n]|(?<=\w)\.\s+|,\s+(?=[A-Za-z ]{2,30}\s*(?::|=|\bis\b))")


_ASSIGN = r"\s*(?::|=|\bis\b|\bshould be\b|-)\s*"


def is_approval(text: str) -> bool:
    """ "yes, proceed" and friends."""
    return bool(_APPROVE.match(text))


def is_cancel(text: str) -> bool:
    """ "cancel", "stop", "never mind"."""
    return bool(_CANCEL.match(text))


def _fork_id(playbook: Playbook, value: str) -> str | None:
    text = value.strip().lower()
    if not text:
        return None
    for i, fork in enumerate(playbook.forks, start=1):
        if text in (fork.id.lower(), str(i), f"option {fork.id.lower()}", f"option {i}"):
            return fork.id
    match = re.search(r"\b(?:layout|option|fork)\s+([a-z0-9])\b", text)
    if match:
        return _fork_id(playbook, match.group(1))
    for fork in playbook.forks:
        title = fork.title.lower()
        if title in text or (len(text) >= 6 and text in title):
            return fork.id
    return None


def _labelled(playbook: Playbook, text: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for part in _SEPARATORS.split(text):
        for spec in playbook.requirements:
            for alias in sorted(spec.aliases, key=len, reverse=True):
                m = re.match(rf"^\s*(?:the\s+)?{re.escape(alias)}{_ASSIGN}(.+?)\s*$", part, re.I)
                if m and spec.name not in found:
                    found[spec.name] = m.group(1).strip().strip("\"'“”").rstrip(".")
                    break
    return found


def extract(playbook: Playbook, plan: Plan, text: str, *, first: bool) -> dict[str, str]:
    """Values this message gives, by requirement name.

    Labelled (``language: English``), numbered (``1. English`` for the questions in
    the order asked), a fork by its letter or title, the playbook's extractors on
    the first message, or — when exactly one value is missing — the whole message.
    """
    found = _labelled(playbook, text)
    missing = [r.name for r in plan.missing]
    numbered = re.findall(r"(?:^|\s)(\d)[.)]\s*([^\n;]+?)(?=\s+\d[.)]\s|[\n;]|$)", text)
    for number, value in numbered:
        index = int(number) - 1
        if 0 <= index < len(missing) and missing[index] not in found:
            found[missing[index]] = value.strip().rstrip(".")
    if first:
        for spec in playbook.requirements:
            for pattern in spec.extract:
                try:
                    m = regex.search(pattern, text, timeout=MATCH_TIMEOUT_SECONDS)
                except TimeoutError:
                    m = None
                if m and spec.name not in found:
                    found[spec.name] = m.group(1).strip()
    for spec in playbook.requirements:
        if spec.fork:
            choice = _fork_id(playbook, found.get(spec.name, "")) or (
                _fork_id(playbook, text) if re.search(r"\b(layout|option)\b", text, re.I) else None
            )
            if choice:
                found[spec.name] = choice
            else:
                found.pop(spec.name, None)
    if not first and not found and len(missing) == 1:
        spec = playbook.spec(missing[0])
        value = _fork_id(playbook, text) if spec.fork else text.strip().rstrip(".")
        if value:
            found[missing[0]] = value
    return {k: v for k, v in found.items() if v}
