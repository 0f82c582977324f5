"""The one reader of the user's answers to every question Hans asks (issue 30).

Hans asks for a plan's requirements, which project, whether to connect the site or draft in
the workspace, which kind of change a request is, and for consent. Each is a ``Question``
(an answer in the user's own words, or one of its ``Option``s); ``read`` reads a message
against the questions open, in the order Hans asked them, and returns what it placed and
what it could not:

- labelled (``language: English``, ``layout B``, ``high priority``, and for a name
  ``Call it …`` / ``name it …`` / ``title: …``), in any order;
- numbered (``1. English 2. homeowners``) by the numbers of Hans's list;
- an option named by its id, its title, its number or one of its words (``B``,
  ``by category``, ``draft it in the workspace``, ``2`` to a question with options);
- unlabelled values in the order asked, separated by commas, semicolons or lines
  (``Water Filtration Services, English, homeowners, water filtration, B``): the parts
  that name an option are placed first, the rest go to the other questions in order;
- the whole message, when one question is open.

Parts that no question fits are ``unplaced``; questions whose values could not be told
apart are ``unsure`` (more values than questions): Hans asks about them by name, quoting
what he understood, and never guesses. Several messages add up: each is read against the
questions still open.

Every pattern here runs in time linear in the message (a possessive ``\\s*+`` or a
single-character lookahead settles each run of spaces once), because they run on the
event loop and a message is up to 20,000 characters. The playbooks' own extractors (data)
run under the regex time box, on the first ``EXTRACT_CHARS`` characters only.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from hansa.engine.planning.question import (
    ASSIGN,
    NAMING,
    SHORT_ANSWER_CHARS,
    Answer,
    How,
    Option,
    Question,
    Reading,
    named_option,
    plain,
    unlabel,
    value_of,
    written,
)

__all__ = [
    "CONSENT",
    "EXTRACT_CHARS",
    "READ_CHARS",
    "SHORT_ANSWER_CHARS",
    "Answer",
    "How",
    "Option",
    "Question",
    "Reading",
    "consent",
    "is_approval",
    "is_cancel",
    "plain",
    "read",
    "spans",
    "value_of",
    "written",
]

EXTRACT_CHARS = 2_000
"""How much of a message the playbooks' extractors (data, time-boxed) search."""
READ_CHARS = 4_000
"""How much of a message the reader splits into answers."""
MAX_PARTS = 40
"""The most parts a message is read as (a question's list is short)."""

_APPROVE = re.compile(
    r"\s*+(?:yes|yep|yeah|ok(?:ay)?|sure|go(?: ahead)?|approved?|do it|let'?s go|proceed"
    r"|looks good)\b[\s,.!]*+(?:please\s*+)?(?:proceed|go ahead|go|do it|start)?\W*+",
    re.I,
)
_CANCEL = re.compile(r"\s*+(?:no|cancel|stop|never ?mind|forget it|abort)\b.*+", re.I | re.S)
_STRONG = re.compile(r"\n|;|(?<=\w)[.!?]\s++")
"""Where one answer surely ends: a line break, a semicolon, the end of a sentence."""
_COMMA = re.compile(r",\s*+")
_NUMBER = re.compile(r"(?<!\S)(\d)[.)]")
"""A question's number: a digit at the start or after a space, then ``.`` or ``)``."""
_NUMBERED_END = re.compile(r"[\n;]|\s(?=\d[.)]\s)")
"""Where a numbered answer ends: a line break, ``;``, or the space before the next number."""
_LEAD = re.compile(
    r"[\w ]{1,30}?(?::|=)\s*+|(?:let'?s call it|call it|name it|it'?s called|called|named|"
    r"titled|it'?s for|for)\s++",
    re.I,
)
"""What leads into a value: a short label and its colon, or the words that name it."""
_NO_ANSWER = re.compile(
    r"\W*+(?:hmm*+|um*+|uh*+|well|ok(?:ay)?|thanks?(?: you)?|please|not sure\b.*+|"
    r"(?:i )?don'?t know\b.*+|no idea\b.*+|dunno\b.*+|whatever\b.*+|later\b.*+|"
    r"still thinking\b.*+|i'?ll (?:tell|let) you\b.*+|skip\b.*+)\W*+",
    re.I | re.S,
)
"""A part that answers nothing ("hmm", "not sure about the rest")."""


@dataclass
class _Part:
    text: str
    strong: bool
    """Separated from the part before by a line, a semicolon or a sentence's end."""
    question: Question | None = None
    value: str = ""
    how: How = How.IN_ORDER
    extends: bool = False
    """A labelled value that takes the unlabelled parts after it (``audience: a, b``)."""


CONSENT = Question(
    "consent",
    "Consent",
    options=(
        Option("yes", "yes, proceed", pattern=_APPROVE),
        Option("no", "cancel", pattern=_CANCEL),
    ),
    own_words=False,
    by_number=False,
)
"""Hans's question before he starts a plan: "Say “yes, proceed” to start"."""


def consent(text: str) -> str | None:
    """``yes`` or ``no`` when ``text`` is a bare consent or refusal, else None."""
    if len(text) > SHORT_ANSWER_CHARS:
        return None
    reading = read([CONSENT], text)
    answer = reading.answers.get(CONSENT.name)
    # "yes, but make it blue" is no consent: a part of it asks for something else
    return answer.value if answer is not None and not reading.unplaced else None


def is_approval(text: str) -> bool:
    """ "yes, proceed" and friends."""
    return consent(text) == "yes"


def is_cancel(text: str) -> bool:
    """ "cancel", "stop", "never mind"."""
    return consent(text) == "no"


def read(questions: Sequence[Question], text: str, *, strict_labels: bool = False) -> Reading:
    """What ``text`` answers of ``questions`` (the ones still open, in the order asked).

    ``strict_labels``: a label needs ``:``, ``=`` or ``is`` (a request's own words, where
    "Title insurance page" is no label), not only a space.
    """
    text = text[:READ_CHARS]
    if not text.strip() or not questions:
        return Reading()
    whole = _wholeoption(questions, text)
    if whole is not None:
        return whole
    numbered = _numbered(text)
    asked = [q for q in questions if q.asked]
    if numbered:
        answers: dict[str, Answer] = {}
        for number, words in numbered:
            if 0 < number <= len(asked) and asked[number - 1].name not in answers:
                q = asked[number - 1]
                value = value_of(q, unlabel(q, words), numbers=True)
                if value is not None:
                    answers[q.name] = Answer(value, words, How.NUMBERED)
        return Reading(answers)
    parts = _label(questions, _split(text), strict_labels)
    return _place(questions, parts, text)


def _wholeoption(questions: Sequence[Question], text: str) -> Reading | None:
    """The whole message names one option of one question ("yes, proceed", "high
    priority", "2"), or answers the one question open."""
    if len(text) > SHORT_ANSWER_CHARS:
        return None
    named = []
    for q in questions:
        one = len(questions) == 1
        option = named_option(q, unlabel(q, text), numbers=one, loose=one)
        if option is not None:
            named.append((q, option))
    if len(named) == 1:
        q, option = named[0]
        return Reading({q.name: Answer(option.id, text.strip(), How.NAMED)})
    return None


def _split(text: str) -> list[_Part]:
    parts: list[_Part] = []
    for s, strong_piece in enumerate(_STRONG.split(text)):
        for c, piece in enumerate(_COMMA.split(strong_piece)):
            words = piece.strip().rstrip(".!?").strip().strip("\"'“”").strip()
            if words:
                parts.append(_Part(words, strong=c == 0 and s > 0))
    if len(parts) > MAX_PARTS:  # a list that long answers no questions: the rest is one part
        rest = ", ".join(p.text for p in parts[MAX_PARTS - 1 :])
        parts = [*parts[: MAX_PARTS - 1], _Part(rest, strong=True)]
    return parts


def _label(questions: Sequence[Question], parts: list[_Part], strict: bool) -> list[_Part]:
    """Each part's label, if it has one: the question it answers and its value."""
    by_alias = {a.lower(): q for q in reversed(questions) for a in q.aliases}
    pattern = _label_pattern(tuple(by_alias), strict)
    naming = next((q for q in questions if q.naming), None)
    for part in parts:
        lowered = part.text.lower()
        said = next((n for n in NAMING if lowered.startswith(n + " ")), None)
        if naming is not None and said is not None:
            part.question, part.how = naming, How.LABELLED
            part.value = part.text[len(said) :].strip().strip("\"'“”").rstrip(".")
            continue
        m = pattern.match(part.text)
        if m is not None:
            q = by_alias[m.group(1).lower()]
            value = value_of(q, m.group(2).strip().strip("\"'“”").rstrip("."), numbers=True)
            if value is not None:
                part.question, part.value, part.how = q, value, How.LABELLED
                part.extends = q.own_words and not q.options
    return parts


LABEL_PATTERNS_KEPT = 256
"""Compiled ``alias: value`` patterns kept, the most recently used: a plan's questions (a model
may write them) give each plan its own aliases, so over months there is no end to them."""


@functools.lru_cache(maxsize=LABEL_PATTERNS_KEPT)
def _label_pattern(aliases: tuple[str, ...], strict: bool) -> re.Pattern[str]:
    """``alias: value`` (or ``alias value``) for any of ``aliases``, the longest first
    (``page title`` before ``page``)."""
    choices = "|".join(re.escape(a) for a in sorted(aliases, key=len, reverse=True)) or "(?!)"
    assign = ASSIGN if strict else rf"(?:{ASSIGN}|\s++)"
    return re.compile(rf"\s*+(?:the\s++)?({choices}){assign}(\S.*)", re.I | re.S)


def _place(questions: Sequence[Question], parts: list[_Part], text: str) -> Reading:
    answers: dict[str, Answer] = {}
    conflicting: set[str] = set()
    free: list[_Part] = []
    last: _Part | None = None
    for part in parts:
        if part.question is not None:
            _keep(answers, conflicting, part.question, Answer(part.value, part.text, part.how))
            last = part if part.extends else None
            continue
        if _NO_ANSWER.fullmatch(part.text):
            continue
        named = _named_by(questions, part.text)
        if named is not None:
            q, option = named
            _keep(answers, conflicting, q, Answer(option.id, part.text, How.NAMED))
            last = None
        elif last is not None and not part.strong and last.question is not None:
            # "audience: homeowners, families": a labelled value goes on to the next label
            last.value = f"{last.value}, {part.text}"
            answers[last.question.name] = Answer(last.value, last.value, How.LABELLED)
        else:
            free.append(part)
    open_ = [q for q in questions if q.asked and q.own_words and q.name not in answers]
    unsure: list[str] = sorted(conflicting)
    unplaced: list[str] = []
    if free and len(open_) == 1 and len(free) == len(parts):
        # the one question open and nothing else said: the whole message answers it
        # ("homeowners in Ontario, mostly families")
        q, whole = open_[0], " ".join(text.split()).strip().rstrip(".!?").strip()
        value = value_of(q, whole, numbers=True, own=not q.options)
        if value is not None:
            answers[q.name] = Answer(value, whole, How.WHOLE)
            free = []
    # in order only when every open question gets one: "homeowners, water filtration" for
    # four questions could be any two of them (the model is asked; Hans never guesses)
    if free and len(free) == len(open_):
        for q, part in zip(open_, free, strict=False):
            # an option in the user's own words only when labelled: "whichever you like"
            # names no layout, and the model is asked what it describes
            value = value_of(q, part.text, numbers=False, own=not q.options)
            if value is None:
                unplaced.append(part.text)
            else:
                answers[q.name] = Answer(value, part.text, How.IN_ORDER)
    elif free:
        unplaced = [p.text for p in free]
        if len(free) > len(open_) and open_:
            unsure += [q.name for q in open_]
    for name in conflicting:
        answers.pop(name, None)
    return Reading(answers, tuple(unplaced), tuple(dict.fromkeys(unsure)))


def _keep(answers: dict[str, Answer], conflicting: set[str], q: Question, answer: Answer) -> None:
    """Keep ``answer``; two different answers to one question make it unsure."""
    before = answers.get(q.name)
    if before is not None and before.value != answer.value:
        conflicting.add(q.name)
    answers.setdefault(q.name, answer)


def _named_by(questions: Sequence[Question], words: str) -> tuple[Question, Option] | None:
    """The one question whose option ``words`` names (by its id, title or words)."""
    found = []
    for q in questions:
        if q.options:
            option = named_option(q, unlabel(q, words), numbers=False)
            if option is not None:
                found.append((q, option))
    return found[0] if len(found) == 1 else None


def spans(text: str, limit: int = 40, chars: int = 200) -> list[str]:
    """The message's own words a model may pick an answer from: each line or sentence,
    each comma-separated part, and each without its label ("Layout: …" -> "…"); at most
    ``limit``, each at most ``chars`` long, in the message's order."""
    found: dict[str, None] = {}
    for strong_piece in _STRONG.split(text[:READ_CHARS]):
        pieces = [strong_piece, *_COMMA.split(strong_piece)]
        for piece in pieces:
            words = piece.strip().strip("\"'“”").strip()
            label = _LEAD.match(words)
            for candidate in (words, words[label.end() :] if label else ""):
                candidate = candidate.strip().rstrip(".").strip()[:chars].strip()
                if candidate and len(found) < limit:
                    found.setdefault(candidate)
    return list(found)


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
