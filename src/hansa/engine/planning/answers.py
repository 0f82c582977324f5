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

import enum
import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

SHORT_ANSWER_CHARS = 200
"""Longer messages are never read as a bare "yes, proceed" or "cancel"."""
EXTRACT_CHARS = 2_000
"""How much of a message the playbooks' extractors (data, time-boxed) search."""
READ_CHARS = 4_000
"""How much of a message the reader splits into answers."""

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
_BARE_NUMBER = re.compile(r"\s*+(?:option\s++|number\s++|project\s++)?(\d{1,2})\s*+[.)]?\s*+", re.I)
_NAMING = (
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
_ASSIGN = r"\s*+(?::|=|\bis\b|\bshould be\b|\bwill be\b|-)\s*+"
_FILLER = re.compile(
    r"\b(?:the|option|please|one|i|we|would|like|prefer|want|choose|pick|go|with|let'?s|do|"
    r"use|it|is|that|take|for|now|thanks|thank|you)\b"
)
_NOT_WORD = re.compile(r"[^\w]+")
_AROUND = 24
"""How many characters around an option's title an answer may have and still name it
("the one with lead capture please"); a longer text only mentions it."""
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


def plain(text: str) -> str:
    """``text`` compared as words: lower case, every run of other characters one space."""
    return _NOT_WORD.sub(" ", text.casefold()).strip()


def written(value: str, message: str) -> bool:
    """Whether ``value`` is words the message holds (so it is the user's, not made up)."""
    words = plain(value)
    return bool(words) and f" {words} " in f" {plain(message)} "


def read(questions: Sequence[Question], text: str, *, strict_labels: bool = False) -> Reading:
    """What ``text`` answers of ``questions`` (the ones still open, in the order asked).

    ``strict_labels``: a label needs ``:``, ``=`` or ``is`` (a request's own words, where
    "Title insurance page" is no label), not only a space.
    """
    text = text[:READ_CHARS]
    if not text.strip() or not questions:
        return Reading()
    whole = _whole_option(questions, text)
    if whole is not None:
        return whole
    numbered = _numbered(text)
    asked = [q for q in questions if q.asked]
    if numbered:
        answers: dict[str, Answer] = {}
        for number, words in numbered:
            if 0 < number <= len(asked) and asked[number - 1].name not in answers:
                q = asked[number - 1]
                value = value_of(q, _unlabel(q, words), numbers=True)
                if value is not None:
                    answers[q.name] = Answer(value, words, How.NUMBERED)
        return Reading(answers)
    parts = _label(questions, _split(text), strict_labels)
    return _place(questions, parts, text)


def _whole_option(questions: Sequence[Question], text: str) -> Reading | None:
    """The whole message names one option of one question ("yes, proceed", "high
    priority", "2"), or answers the one question open."""
    if len(text) > SHORT_ANSWER_CHARS:
        return None
    named = []
    for q in questions:
        one = len(questions) == 1
        option = _option(q, _unlabel(q, text), numbers=one, loose=one)
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
    return parts


def _label(questions: Sequence[Question], parts: list[_Part], strict: bool) -> list[_Part]:
    """Each part's label, if it has one: the question it answers and its value."""
    by_alias = {a.lower(): q for q in reversed(questions) for a in q.aliases}
    pattern = _label_pattern(tuple(by_alias), strict)
    naming = next((q for q in questions if q.naming), None)
    for part in parts:
        lowered = part.text.lower()
        said = next((n for n in _NAMING if lowered.startswith(n + " ")), None)
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


@functools.cache
def _label_pattern(aliases: tuple[str, ...], strict: bool) -> re.Pattern[str]:
    """``alias: value`` (or ``alias value``) for any of ``aliases``, the longest first
    (``page title`` before ``page``)."""
    choices = "|".join(re.escape(a) for a in sorted(aliases, key=len, reverse=True)) or "(?!)"
    assign = _ASSIGN if strict else rf"(?:{_ASSIGN}|\s++)"
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
    if len(free) == 1 and len(open_) == 1 and len(parts) == 1:
        q = open_[0]
        value = value_of(q, free[0].text, numbers=True, own=not q.options)
        if value is not None:
            answers[q.name] = Answer(value, free[0].text, How.WHOLE)
            free = []
    if free and len(free) <= len(open_) and (len(free) > 1 or len(open_) == 1):
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
            option = _option(q, _unlabel(q, words), numbers=False)
            if option is not None:
                found.append((q, option))
    return found[0] if len(found) == 1 else None


def _unlabel(q: Question, words: str) -> str:
    """``words`` without the question's own label ("layout B", "high priority")."""
    text = words.strip()
    if len(text) > SHORT_ANSWER_CHARS:
        return text
    for alias in sorted(q.aliases, key=len, reverse=True):
        m = re.match(rf"(?:the\s++)?{re.escape(alias)}(?:{_ASSIGN}|\s++)(\S.*)", text, re.I | re.S)
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
        option = _option(q, words, numbers=numbers)
        if option is not None:
            return option.id
    if not (q.own_words and own):
        return None
    if q.naming:
        lowered = words.lower()
        said = next((n for n in _NAMING if lowered.startswith(n + " ")), None)
        if said is not None:
            words = words[len(said) :].strip()
    return words.strip("\"'“”")


def _option(q: Question, words: str, *, numbers: bool, loose: bool = True) -> Option | None:
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
