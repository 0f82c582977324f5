"""Invented claims: what a text states that none of its inputs holds (issue 30).

A weak model writes figures, statistics, links, dates and promises out of nothing ("35.9% of
the total page views", "https://www4…", "completed by tomorrow morning"). ``invented`` finds
each such claim in a text and keeps those no input holds: the request, the project, the
tools' results (its ``grounds``). It is the one checker of both the answer check
(``engine/quality_gate.py``) and Hans's review of a run's steps (``tasks/builtin/checks.py``
and the audit's score, ``tasks/builtin/audit.py``).

A claim is grounded when an input holds the same figure (``20,000`` and ``20000`` are one),
the same link (with or without ``https://`` and ``www.``), the same date (``28 November`` and
``November 28th`` are one) or, for a promise, the same deadline. No model is asked whether a
claim is true: what no input holds is reported, never silently kept.

What is not a claim: small counts (up to ``SMALL``) written without a unit, list numbers at
the start of a line, and digits inside a word (an id). Pure functions: no I/O.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Literal

Kind = Literal["figure", "statistic", "link", "date", "promise"]

SMALL = 10
"""Whole numbers up to this, with no unit, are counts of the text's own ("3 steps"), not
facts about the world."""
MAX_CHARS = 200_000
"""How much of a text, and of all its grounds together, is read."""
SHOWN = 5
"""Claims a description names at most; it says how many more there are."""

_WORDS: dict[Kind, str] = {
    "figure": "the figure",
    "statistic": "the statistic",
    "link": "the link",
    "date": "the date",
    "promise": "the promise",
}


@dataclass(frozen=True)
class Invented:
    """One claim no input holds."""

    kind: Kind
    text: str
    """The claim as the text writes it (at most 80 characters)."""


@dataclass(frozen=True)
class _Claim:
    kind: Kind
    text: str
    keys: frozenset[str]
    """What grounds it: inputs that hold every one of these ("9 out of 10": both figures;
    a date: its day and its year; a promise: its deadline)."""


_MONTHS = "january|february|march|april|may|june|july|august|september|october|november|december"
_SHORT = "jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec"
_MONTH_NUMBER = {
    name: i
    for i, names in enumerate(
        [("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr")]
        + [("may",), ("june", "jun"), ("july", "jul"), ("august", "aug")]
        + [("september", "sep", "sept"), ("october", "oct"), ("november", "nov")]
        + [("december", "dec")],
        start=1,
    )
    for name in names
}
_ANY_MONTH = rf"(?P<m>{_MONTHS}|{_SHORT})\.?"
_DAY = r"(?P<d>[0-3]?\d)(?:st|nd|rd|th)?"
_DAY_FIRST = rf"\b{_DAY}\s+(?:of\s+)?{_ANY_MONTH}(?:,?\s+(?P<y>(?:19|20)\d\d))?\b"
_MONTH_FIRST = rf"\b{_ANY_MONTH}\s+{_DAY}\b(?:,?\s+(?P<y>(?:19|20)\d\d)\b)?"
_DATES = [
    re.compile(_DAY_FIRST, re.I),
    re.compile(_MONTH_FIRST, re.I),
    re.compile(
        r"\b(?P<n>\d{1,4}[/.-]\d{1,2}[/.-]\d{2,4})\b"  # 28/11/2026, 2026-11-28
        r"|\b(?P<t>[01]?\d(?::[0-5]\d)?\s*(?:a\.?m\.?|p\.?m\.?)|[012]?\d:[0-5]\d)(?!\w)"  # 10pm
        r"|\b(?P<w>(?:next|this|coming)\s+(?:week(?:end)?|month|year|"
        r"monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
        r"|tomorrow(?:'s|’s)?(?:\s+(?:morning|afternoon|evening|night))?|tonight|midnight|noon"
        r"|end\s+of\s+(?:the\s+)?(?:day|week|month|year)"
        r"|(?:within|in)\s+(?:\d+|an?|one|two|three|a\s+few)\s+(?:minutes?|hours?|days?|weeks?)"
        r"|monday|tuesday|wednesday|thursday|friday|saturday|sunday"
        r"|january|february|march|april|june|july|august|september|october|november|december)\b"
        r"|\b(?P<y>(?:19|20)\d\d)\b(?![.,]\d)",
        re.I,
    ),
]
_LINK = re.compile(
    r"\b(?:https?://|www\.)[^\s<>\"'`()\[\]{}]+"
    r"|\b[\w.+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)+"
    r"|\b[a-z0-9][a-z0-9-]*(?:\.[a-z0-9-]+)*\.(?:com|net|org|ca|io|co|de|uk|info|biz|us|eu)"
    r"\b(?:/[^\s<>\"'`()\[\]{}]*)?",
    re.I,
)
_STATISTIC = re.compile(
    r"(?P<a>\d[\d,]*(?:\.\d+)?)\s*(?:%|percent\b|per\s+cent\b)"
    r"|\b(?P<b>\d[\d,]*)\s+(?:out\s+of|in\s+every|of\s+every)\s+(?P<c>\d[\d,]*)\b"
    r"|\b(?P<x>\d[\d,]*(?:\.\d+)?)\s*(?:x\b|×|times\s+(?:more|faster|better|less|as))",
    re.I,
)
_MONEY = re.compile(
    r"[$€£¥]\s?(?P<a>\d[\d,]*(?:\.\d+)?)|\b(?P<b>\d[\d,]*(?:\.\d+)?)\s*(?:usd|cad|eur|dollars?)\b",
    re.I,
)
_PHONE = re.compile(r"(?<![\w.])\+?\(?\d{2,4}\)?(?:[\s.-]\d{2,4}){2,4}(?!\w|[.,]\d)")
_NUMBER = re.compile(r"(?<![\w.,])\d[\d,]*(?:\.\d+)?(?![\w]|[.,]\d)")
_FIGURES: tuple[tuple[re.Pattern[str], Kind], ...] = (
    (_STATISTIC, "statistic"),
    (_MONEY, "figure"),
    (_PHONE, "figure"),
)
_YEAR = re.compile(r"(?:19|20)\d\d")
_ANY_DIGITS = re.compile(r"\d[\d,]*(?:\.\d+)?")
_LIST_MARK = re.compile(r"^\s*\d{1,3}[.)]\s", re.M)
_PROMISE = re.compile(
    r"\b(?:will|shall|won't|won’t)\b|(?:'ll|’ll)\b|\b(?:we|i)\s+(?:guarantee|promise)\b"
    r"|\bguaranteed?\b",
    re.I,
)
"""A promise: something the future holds, said with a deadline in its sentence ("will be
installed within 24 hours"), or a guarantee."""
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")
_TAG = re.compile(r"<(?P<body>[^<>]*)>")
_ATTRIBUTE = re.compile(r"""\b(?:href|src|content|alt|title)\s*=\s*["']([^"']*)["']""", re.I)
_SPACE = re.compile(r"\s+")


def invented(text: str, grounds: Iterable[str]) -> list[Invented]:
    """The claims of ``text`` (plain text or HTML) that none of ``grounds`` holds, each once,
    in the order the text makes them."""
    claims = _claims(_plain(text[:MAX_CHARS]), counts=False)
    if not claims:
        return []
    held, flat = _held(grounds)
    found: list[Invented] = []
    for claim in claims:
        linked = claim.kind == "link" and _link(claim.text) in flat
        grounded = linked or (bool(claim.keys) and claim.keys <= held)  # every part of it
        shown = Invented(claim.kind, claim.text[:80])
        if not grounded and shown not in found:
            found.append(shown)
    return found


def describe(found: list[Invented]) -> str:
    """``found`` in words: “the figure “35.9%”, the link “https://…””, the first ``SHOWN``."""
    named = [f"{_WORDS[f.kind]} “{f.text}”" for f in found[:SHOWN]]
    more = len(found) - SHOWN
    return ", ".join(named) + (f" and {more} more" if more > 0 else "")


def _plain(text: str) -> str:
    """HTML's text, with the links and descriptions its tags hold; plain text unchanged."""

    def tag(match: re.Match[str]) -> str:
        values = _ATTRIBUTE.findall(match.group("body"))
        return " " + " ".join(values) + " " if values else " "

    return html.unescape(_TAG.sub(tag, text))


def _held(grounds: Iterable[str]) -> tuple[set[str], str]:
    """Every key the grounds hold, and their links' text (lowercase, no scheme, no www)."""
    budget, parts = MAX_CHARS, []
    for ground in grounds:
        if budget <= 0:
            break
        parts.append(ground[:budget])
        budget -= len(parts[-1])
    joined = _plain("\n".join(parts))
    digits = _ANY_DIGITS.findall(joined)
    held = {_number(n) for n in digits}  # a figure in an id or a timestamp grounds too
    held |= {f"y:{n}" for n in digits if _YEAR.fullmatch(n)}
    for claim in _claims(joined, counts=True):
        held |= claim.keys
    return held, _link(joined)


def _claims(text: str, *, counts: bool) -> list[_Claim]:
    """Every claim of ``text`` in order; ``counts``: small numbers and list marks too (an
    input's every figure grounds a claim)."""
    found: list[tuple[int, _Claim]] = []
    taken = [False] * len(text)

    def take(start: int, end: int) -> bool:
        if any(taken[start:end]):
            return False
        taken[start:end] = [True] * (end - start)
        return True

    for m in _LINK.finditer(text):
        link = m.group(0).rstrip(".,;:!?")
        if take(m.start(), m.start() + len(link)):
            found.append((m.start(), _Claim("link", link, frozenset({"link:" + _link(link)}))))
    for sentence in _SENTENCE.finditer(text):
        said_at = [sentence.start() + m.start() for m in _PROMISE.finditer(sentence.group(0))]
        for start, until in zip(said_at, [*said_at[1:], sentence.end()], strict=False):
            deadlines = _dates(text, start, until, taken, counts)
            word = _PROMISE.match(text, start)
            assert word is not None
            if deadlines or re.search("guarantee|promise", word.group(0), re.I):
                end = max([word.end(), *(e for _, e, _ in deadlines)])
                keys = frozenset(k for _, _, c in deadlines for k in c.keys)
                said = _SPACE.sub(" ", text[_word_before(text, start) : end]).strip()
                taken[start:end] = [True] * (end - start)
                found.append((start, _Claim("promise", said, keys or frozenset({"promise"}))))
    for start, _end, claim in _dates(text, 0, len(text), taken, counts):
        found.append((start, claim))
    for pattern, kind in _FIGURES:
        for m in pattern.finditer(text):
            if not take(m.start(), m.end()):
                continue
            if pattern is _PHONE:
                keys = frozenset({"n:" + re.sub(r"\D", "", m.group(0))})
            else:
                keys = frozenset(_number(v) for v in m.groupdict().values() if v)
            found.append((m.start(), _Claim(kind, m.group(0).strip(), keys)))
    marks = set() if counts else {m.end() - 2 for m in _LIST_MARK.finditer(text)}
    for m in _NUMBER.finditer(text):
        key = _number(m.group(0))
        small = "." not in m.group(0) and Decimal(key[2:]) <= SMALL
        if (not counts and (small or m.end() - 1 in marks)) or not take(m.start(), m.end()):
            continue
        found.append((m.start(), _Claim("figure", m.group(0), frozenset({key}))))
    return [c for _, c in sorted(found, key=lambda f: f[0])]


def _word_before(text: str, start: int) -> int:
    """Where the word a promise's "'ll" is joined to starts ("I'll"); else ``start``."""
    if text[start] not in "'’":
        return start
    while start > 0 and text[start - 1].isalpha():
        start -= 1
    return start


def _dates(
    text: str, start: int, end: int, taken: list[bool], wide: bool
) -> list[tuple[int, int, _Claim]]:
    """The dates between ``start`` and ``end`` not yet taken, taking them (``wide``: a
    day's month grounds the month alone too)."""
    found = []
    for pattern in _DATES:
        for m in pattern.finditer(text, start, end):
            if any(taken[m.start() : m.end()]):
                continue
            taken[m.start() : m.end()] = [True] * (m.end() - m.start())
            found.append((m.start(), m.end(), _Claim("date", m.group(0), _date_keys(m, wide))))
    return found


def _date_keys(m: re.Match[str], wide: bool) -> frozenset[str]:
    parts = {k: v for k, v in m.groupdict().items() if v}
    if "m" in parts and "d" in parts:
        month = _MONTH_NUMBER[parts["m"].lower().rstrip(".")]
        keys = {f"d:{month}-{int(parts['d'])}"}
        if wide:
            keys.add("w:" + _MONTHS.split("|")[month - 1])
        return frozenset(keys | ({f"y:{parts['y']}"} if "y" in parts else set()))
    if "n" in parts:
        return frozenset({"d:" + re.sub(r"\D+", "-", parts["n"])})
    if "t" in parts:
        return frozenset({"t:" + re.sub(r"[\s.]", "", parts["t"].lower())})
    if "w" in parts:
        return frozenset({"w:" + _SPACE.sub(" ", parts["w"].lower().replace("’", "'"))})
    return frozenset({f"y:{parts.get('y', m.group(0))}"})


def _number(text: str) -> str:
    """A figure's key: its value, however it is written (``20,000.0`` is ``20000``)."""
    digits = text.replace(",", "")
    try:
        value = Decimal(digits).normalize()
    except InvalidOperation:
        return "n:" + digits
    return "n:" + (f"{value:f}" if value == value.to_integral() else str(value))


def _link(text: str) -> str:
    lowered = text.lower()
    for prefix in ("https://", "http://", "www."):
        lowered = lowered.replace(prefix, "")
    return lowered.rstrip("/")
