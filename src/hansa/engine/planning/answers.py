"""Reading the user's answers: labelled values, numbered answers, fork choices, approval.

Every pattern here runs in time linear in the message (no two unbounded quantifiers
compete for the same characters: a possessive ``\\s*+`` or a single-character lookahead
settles each run of spaces once), because they run on the event loop and a message is
up to 20,000 characters. The playbooks' own extractors are data and run under the
regex time box, on the first ``EXTRACT_CHARS`` characters only.
"""

from __future__ import annotations

import functools
import re

from hansa.domain.plan import Plan
from hansa.engine.planning.playbooks import Playbook, Searches

SHORT_ANSWER_CHARS = 200
"""Longer messages are never read as a bare "yes, proceed" or "cancel"."""
EXTRACT_CHARS = 2_000
"""How much of a message the playbooks' extractors (data, time-boxed) search."""

_APPROVE = re.compile(
    r"\s*+(?:yes|yep|yeah|ok(?:ay)?|sure|go(?: ahead)?|approved?|do it|let'?s go|proceed"
    r"|looks good)\b[\s,.!]*+(?:please\s*+)?(?:proceed|go ahead|go|do it|start)?\W*+",
    re.I,
)
_CANCEL = re.compile(r"\s*+(?:no|cancel|stop|never ?mind|forget it|abort)\b", re.I)
_SEPARATORS = re.compile(
    r"[;\n]|(?<=\w)\.\s++|,\s++(?=[A-Za-z][A-Za-z ]{1,29}\s{0,30}(?::|=|\bis\b))"
)
_ASSIGN = r"\s*+(?::|=|\bis\b|\bshould be\b|-)"
_NUMBER = re.compile(r"(?<!\S)(\d)[.)]")
"""A question's number: a digit at the start or after a space, then ``.`` or ``)``."""
_NUMBERED_END = re.compile(r"[\n;]|\s(?=\d[.)]\s)")
"""Where a numbered answer ends: a line break, ``;``, or the space before the next number."""
_FORK_WORD = re.compile(r"\b(?:layout|option|fork)\s++([a-z0-9])\b")


def is_approval(text: str) -> bool:
    """ "yes, proceed" and friends."""
    return len(text) <= SHORT_ANSWER_CHARS and _APPROVE.fullmatch(text) is not None


def is_cancel(text: str) -> bool:
    """ "cancel", "stop", "never mind"."""
    return len(text) <= SHORT_ANSWER_CHARS and _CANCEL.match(text) is not None


def _fork_id(playbook: Playbook, value: str) -> str | None:
    text = value.strip().lower()
    if not text:
        return None
    for i, fork in enumerate(playbook.forks, start=1):
        if text in (fork.id.lower(), str(i), f"option {fork.id.lower()}", f"option {i}"):
            return fork.id
    match = _FORK_WORD.search(text)
    if match:
        return _fork_id(playbook, match.group(1))
    for fork in playbook.forks:
        title = fork.title.lower()
        if title in text or (len(text) >= 6 and text in title):
            return fork.id
    return None


def _labelled(playbook: Playbook, text: str) -> dict[str, str]:
    names = {a.lower(): s.name for s in reversed(playbook.requirements) for a in s.aliases}
    pattern = _label_pattern(tuple(names))
    found: dict[str, str] = {}
    for part in _SEPARATORS.split(text):
        m = pattern.match(part.lstrip())
        if m and names[m.group(1).lower()] not in found:
            found[names[m.group(1).lower()]] = m.group(2).strip().strip("\"'“”").rstrip(".")
    return found


@functools.cache
def _label_pattern(aliases: tuple[str, ...]) -> re.Pattern[str]:
    """``alias: value`` for any of ``aliases``, the longest first (``page title`` before
    ``page``)."""
    choices = "|".join(re.escape(a) for a in sorted(aliases, key=len, reverse=True))
    return re.compile(rf"(?:the\s++)?({choices}){_ASSIGN}(.+)", re.I)


def _numbered(text: str) -> list[tuple[int, str]]:
    """``1. English 2. homeowners`` (or one per line): the answers by question number.

    A number with nothing after it but spaces gives an empty answer (which still counts
    as that question's answer, so the whole message is not taken for it).
    """
    out: list[tuple[int, str]] = []
    pos = 0
    while (m := _NUMBER.search(text, pos)) is not None:
        start = m.end()
        while start < len(text) and text[start].isspace():
            start += 1
        if start == len(text) or text[start] == ";":
            if text[m.end() : start].strip("\n"):  # a space or tab: a blank answer
                out.append((int(m.group(1)), ""))
            pos = start
            continue
        end_match = _NUMBERED_END.search(text, start + 1)
        end = len(text) if end_match is None else end_match.start()
        out.append((int(m.group(1)), text[start:end].strip().rstrip(".")))
        pos = end
    return out


def extract(playbook: Playbook, plan: Plan, text: str, *, first: bool) -> dict[str, str]:
    """Values this message gives, by requirement name.

    Labelled (``language: English``), numbered (``1. English`` for the questions in
    the order asked), a fork by its letter or title, the playbook's extractors on
    the first message, or — when exactly one value is missing — the whole message.
    """
    found = _labelled(playbook, text)
    missing = [r.name for r in plan.missing]
    for number, answer in _numbered(text):
        index = number - 1
        if 0 <= index < len(missing) and missing[index] not in found:
            found[missing[index]] = answer
    if first:
        head = text[:EXTRACT_CHARS]
        searches = Searches()
        for spec in playbook.requirements:
            for extractor in spec.extract:
                m = searches.search(extractor, head)
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
