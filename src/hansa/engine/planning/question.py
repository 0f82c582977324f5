"""A question Hans asks, its options, and how the user's words name one.

``answers.read`` places a message against ``Question``s; this module holds what they are
(the question, its ``Option``s, the ``Answer`` kept, the ``Reading`` of a message) and
how a few words give a question its value: an option by its id, title, number or words
(``option``), or the words themselves when the question takes the user's own
(``value_of``). Every pattern here is linear in its text, and the texts are short
(``SHORT_ANSWER_CHARS``).
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field

SHORT_ANSWER_CHARS = 200
"""Longer messages are never read as a bare "yes, proceed" or "cancel", nor as an option."""

_BARE_NUMBER = re.compile(r"\s*+(?:option\s++|number\s++|project\s++)?(\d{1,2})\s*+[.)]?\s*+", re.I)

NAMING = (
    "let's call it",
    "lets call it",
    "it should be called",
    "it's called",
    "it is called",
    "call it",
    "name it",
    "title it",
    "called",
    "named",
    "titled",
)
"""How a name is given without a label: "Call it Water Filtration Services"."""

ASSIGN = r"\s*+(?::|=|\bis\b|\bshould be\b|\bwill be\b|-)\s*+"
"""What joins a label to its value: "language: English", "the audience is homeowners"."""

_FILLER = re.compile(
    r"\b(?:the|option|please|one|i|we|would|like|prefer|want|choose|pick|go|with|let'?s|do|"
    r"use|it|is|that|take|for|now|thanks|thank|you)\b"
)

_NOT_WORD = re.compile(r"[^\w]+")
_FOR = re.compile(r"^(?:it'?s |it is |(?:it'?s )?(?:meant |aimed )?)?(?:for|at)\s++(?=\S)", re.I)
"""The words that lead into an audience ("it's for homeowners", "aimed at families")."""

_AROUND = 24
"""How many characters around an option's title an answer may have and still name it
("the one with lead capture please"); a longer text only mentions it."""


class How(enum.StrEnum):
    """How an answer was read: said back to the user when it was not labelled."""

    LABELLED = "labelled"
    NUMBERED = "numbered"
    NAMED = "named"
    """An option named by its id, title, number or words."""
    IN_ORDER = "in order"
    """An unlabelled value, placed by the order of the questions."""
    WHOLE = "whole"
    """The whole message, the one question open."""
    MODEL = "model"
    """Read by the model (``model_answers``) and checked against the message."""
    FOUND = "found"
    """Found in the request itself by a playbook's extractor."""


@dataclass(frozen=True)
class Option:
    """One answer a question offers: its id (the value kept), title and the words that
    name it."""

    id: str
    title: str = ""
    names: tuple[str, ...] = ()
    """Whole answers that name it ("high", "Aquaverter")."""
    keywords: tuple[str, ...] = ()
    """Words that name it anywhere in an answer ("workspace", "draft")."""
    pattern: re.Pattern[str] | None = None
    """A whole answer that names it (consent: "yes, go ahead")."""


@dataclass(frozen=True)
class Question:
    """A question Hans asks: its name, label, how it is labelled, its options."""

    name: str
    label: str
    aliases: tuple[str, ...] = ()
    """Labels the user may give the answer ("language", "seo angle")."""
    options: tuple[Option, ...] = ()
    own_words: bool = True
    """Whether an answer in the user's own words stands (no option fits: "a video header")."""
    naming: bool = False
    """A name: "Call it …" answers it."""
    asked: bool = True
    """In Hans's numbered list (a question known but not asked is only answered by label)."""
    by_number: bool = True
    """Whether its options are chosen by their number ("2": the second) too."""


@dataclass(frozen=True)
class Answer:
    """What the user answered to one question: the value kept and the words it came from."""

    value: str
    words: str
    how: How


@dataclass(frozen=True)
class Reading:
    """What a message answered, and what it left unplaced or unclear."""

    answers: dict[str, Answer] = field(default_factory=dict)
    unplaced: tuple[str, ...] = ()
    """Parts of the message no question fits, in the user's words."""
    unsure: tuple[str, ...] = ()
    """Questions (by name) whose values could not be told apart."""

    def values(self) -> dict[str, str]:
        """The values by question name."""
        return {name: a.value for name, a in self.answers.items()}


def plain(text: str) -> str:
    """``text`` compared as words: lower case, every run of other characters one space."""
    return _NOT_WORD.sub(" ", text.casefold()).strip()


def written(value: str, message: str) -> bool:
    """Whether ``value`` is words the message holds (so it is the user's, not made up)."""
    words = plain(value)
    return bool(words) and f" {words} " in f" {plain(message)} "


def unlabel(q: Question, words: str) -> str:
    """``words`` without the question's own label ("layout B", "high priority")."""
    text = words.strip()
    if len(text) > SHORT_ANSWER_CHARS:
        return text
    for alias in sorted(q.aliases, key=len, reverse=True):
        m = re.match(rf"(?:the\s++)?{re.escape(alias)}(?:{ASSIGN}|\s++)(\S.*)", text, re.I | re.S)
        if m is not None:
            return m.group(1).strip()
        m = re.fullmatch(rf"(.*?\S)\s++{re.escape(alias)}\W*+", text, re.I | re.S)
        if m is not None and len(m.group(1)) <= 40:
            return m.group(1).strip()
    return text


def value_of(q: Question, words: str, *, numbers: bool, own: bool = True) -> str | None:
    """The value ``words`` gives ``q``: an option's id, or the words themselves when the
    question takes the user's own (and ``own``); None when it fits neither."""
    words = words.strip().rstrip(".").strip()
    if not words:
        return None
    if q.options:
        option = named_option(q, words, numbers=numbers)
        if option is not None:
            return option.id
    if not (q.own_words and own):
        return None
    if q.naming:
        lowered = words.lower()
        said = next((n for n in NAMING if lowered.startswith(n + " ")), None)
        if said is not None:
            words = words[len(said) :].strip()
    elif "audience" in q.aliases:  # "for homeowners": Hans's templates say "for ${audience}"
        words = _FOR.sub("", words, count=1) or words
    return words.strip("\"'“”")


def named_option(q: Question, words: str, *, numbers: bool, loose: bool = True) -> Option | None:
    """The option of ``q`` that ``words`` names, if exactly one does (``loose``: by a word
    of it anywhere, or its title within a few more words, too)."""
    stripped = words.strip()
    if not stripped or len(stripped) > SHORT_ANSWER_CHARS:
        return None
    for option in q.options:
        if option.pattern is not None and option.pattern.fullmatch(stripped):
            return option
    said = plain(stripped)
    bare = " ".join(_FILLER.sub(" ", said).split())
    number = _BARE_NUMBER.fullmatch(stripped) if numbers and q.by_number else None
    for i, option in enumerate(q.options, start=1):
        if number is not None and int(number.group(1)) == i:
            return option
        exact = {plain(option.id), plain(option.title), *(plain(n) for n in option.names)}
        exact.discard("")
        if said in exact or bare in exact:
            return option
    if not loose:
        return None
    hits = [
        (option, plain(k))
        for option in q.options
        for k in option.keywords
        if plain(k) and f" {plain(k)} " in f" {said} "
    ]
    # the longest of the words found wins ("Aquaverter WP" over "Aquaverter")
    longest = [
        h for h in hits if not any(h[1] != o[1] and f" {h[1]} " in f" {o[1]} " for o in hits)
    ]
    chosen = {option.id: option for option, _ in longest}
    if len(chosen) == 1:
        return next(iter(chosen.values()))
    if chosen:
        return None
    titled = [
        option
        for option in q.options
        if len(plain(option.title)) >= 6
        and (
            (plain(option.title) in said and len(said) <= len(option.title) + _AROUND)
            or (len(said) >= 6 and said in plain(option.title))
        )
    ]
    return titled[0] if len(titled) == 1 else None
