"""The rolling summary's rules (seed 002 §5), pure: when to summarize, what to fold in,
what code keeps whatever the model writes, and how the prompt shows it.

- **When**: the messages after the summary pass a budget: their count
  (``summary_after_messages``), their characters (``summary_after_chars``) or their
  estimated tokens (``summary_after_tokens``), or the prompt's history did not fit.
- **What**: every message after the summary but the newest ``history_messages``, which
  stay word for word (fewer when those alone pass ``summary_fold_share`` of the characters
  or tokens budget, or of the prompt's history budget; the newest two always stay). The
  fold goes well below the budget that triggered it (hysteresis, issue 34): folding just
  under it filled the window again with the next answer, so the summary ran after every
  turn, a call on the same embedded model that the next reply waited for. A pasted
  document (a user's message of ``summary_paste_chars`` or more) is the exception (seed
  002 §5.3): the newest one stays word for word wherever it is, its length counts against
  no budget, and the other history is folded around it; an older paste a newer one
  replaced is folded then.
- **Kept by code** (``SummaryFacts``): the ids the messages mention (ULIDs, UUIDs, and the
  ids in their metadata), the user's decisions and approvals, the questions still open;
  carried from one version to the next.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from hansa.domain import message
from hansa.domain.summary import ConversationSummary, SummaryFacts
from hansa.engine.context_budget import SummaryText
from hansa.engine.context_packs import MESSAGE_TOKENS, estimate_tokens
from hansa.settings import Settings

MAX_IDS = 60
"""Ids a summary keeps; past it, the oldest mentions go first."""
MAX_DECISIONS = 20
MAX_QUESTIONS = 10
LINE_CHARS = 240
"""The longest decision or question kept (longer: cut)."""
MIN_KEPT = 2
"""Messages that always stay word for word: the last exchange."""
MAX_PASTES = 1
"""Pasted documents kept word for word: the newest (the one the conversation is about)."""
SUMMARY_WORDS = 250
"""How long the summarizer is asked to be at most."""
EXTRACT_CHARS = 8_000
"""The longest extract written when the model failed (a summary's budget is at most 2,000
tokens, ~8,000 characters): its oldest lines go first. Each version is stored whole and read
at every turn; unbounded, the extract grew ~175 bytes a turn for good (issue 35)."""

_ID = re.compile(
    r"\b(?:[0-9A-HJKMNP-TV-Z]{26}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
    r"[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\b"
)
"""A ULID (Hansa's ids) or a UUID."""
_DECISION = re.compile(
    r"^\s*(?:yes|yep|ok(?:ay)?|sure|approved?|confirm(?:ed)?|go ahead|proceed)\b"
    r"|\b(?:decided|decision|let'?s go with|we(?:'ll| will) (?:go with|use)|go with|"
    r"approve[ds]?|agreed|settle on|we chose|i chose|i choose|we choose)\b",
    re.IGNORECASE,
)
"""What reads as a user's decision or approval."""
_SENTENCE = re.compile(r"[^.!?\n]*+[.!?\n]?")
"""A sentence with its end mark: matched once per sentence, so finding the questions of a
message is linear in its length (the text before each question mark, searched from every
position, was quadratic: seconds on the event loop for 20,000 characters without one)."""


@dataclass(frozen=True, slots=True)
class Thresholds:
    """When the messages after the summary are too many (0 turns a limit off)."""

    messages: int
    chars: int
    tokens: int
    keep: int
    """Messages that stay word for word (``history_messages``)."""
    paste: int = 0
    """The length from which a user's message is a pasted document (0: none is)."""
    fold_share: float = 1.0
    """The share of the characters, tokens and history budgets that the messages kept word
    for word may take after a fold (``summary_fold_share``)."""
    history_tokens: int = 0
    """The prompt's history budget in estimated tokens, when the turn that asked for the
    summary knew it (0: unknown); the fold keeps ``fold_share`` of it at most."""

    @classmethod
    def of(cls, settings: Settings, history_tokens: int = 0) -> Thresholds:
        """The limits the settings give (and the prompt's history budget, if known)."""
        return cls(
            messages=settings.summary_after_messages,
            chars=settings.summary_after_chars,
            tokens=settings.summary_after_tokens,
            keep=settings.history_messages,
            paste=settings.summary_paste_chars,
            fold_share=settings.summary_fold_share,
            history_tokens=history_tokens,
        )


def needs_summary(total: int, chars: int, limits: Thresholds, overflow: bool) -> bool:
    """Whether the ``total`` messages after the summary (``chars`` characters) pass a limit,
    or the prompt could not hold them all (``overflow``), with something old enough to
    fold in."""
    if total <= MIN_KEPT:
        return False
    return (
        overflow
        or (limits.messages > 0 and total > limits.messages)
        or (limits.chars > 0 and chars > limits.chars)
        or (limits.tokens > 0 and chars_to_tokens(chars) > limits.tokens)
    )


def nearly_full(used: int, budget: int, share: float) -> bool:
    """Whether a prompt's history of ``used`` estimated tokens passes ``share`` of its
    ``budget``: the summary is queued then, so it lands before the history overflows (an
    overflowing history moves its cut every turn, and the embedded model evaluates the
    whole prompt again each time)."""
    return budget > 0 and used > budget * share


def chars_to_tokens(chars: int) -> int:
    """The estimate of ``context_packs.estimate_tokens`` for a length."""
    return (chars + 3) // 4


@dataclass(frozen=True, slots=True)
class Fold:
    """What the next summary does with the messages after the last one."""

    folded: list[message.Message]
    """Folded into the summary's prose, oldest first (an evicted paste among them)."""
    kept: list[message.Message]
    """Pasted documents before the new cut that prompts keep sending word for word."""


def is_paste(m: message.Message, limits: Thresholds) -> bool:
    """Whether ``m`` is a pasted document: a user's message of ``limits.paste`` or more."""
    return limits.paste > 0 and m.kind is message.Kind.USER and len(m.content) >= limits.paste


def to_fold(
    history: Sequence[message.Message],
    limits: Thresholds,
    kept_before: Sequence[message.Message] = (),
) -> Fold:
    """The oldest messages of ``history`` that the next summary folds in: all but the
    newest ``keep`` (fewer kept while those pass ``fold_share`` of the characters, tokens
    or history budget), up to the last answer among them; the newest paste (of
    ``kept_before``, the messages the last summary kept, and ``history``) is never folded
    and counts against no budget."""
    pastes = [m for m in (*kept_before, *history) if is_paste(m, limits)]
    pinned = {m.id for m in pastes[-MAX_PASTES:]}
    rest = [m for m in history if m.id not in pinned]
    keep = min(max(limits.keep, MIN_KEPT), len(rest))
    while keep > MIN_KEPT and _too_long(rest[len(rest) - keep :], limits):
        keep -= 1
    folded = rest[: len(rest) - keep]
    while folded and folded[-1].kind is not message.Kind.ASSISTANT:
        folded.pop()  # a question not answered yet stays word for word with its answer
    if not folded:
        return Fold([], list(kept_before))
    cut = folded[-1].seq or 0
    kept = [m for m in pastes if m.id in pinned and (m.seq or 0) <= cut]
    evicted = [m for m in kept_before if m.id not in pinned]  # a newer paste replaced it
    return Fold(sorted([*evicted, *folded], key=lambda m: m.seq or 0), kept)


def _too_long(messages: Sequence[message.Message], limits: Thresholds) -> bool:
    """Whether ``messages`` pass ``fold_share`` of a budget: kept word for word, they would
    bring the next summary due again within a turn or two."""
    share = limits.fold_share
    chars = sum(len(m.content) for m in messages)
    prompt = sum(estimate_tokens(m.content) + MESSAGE_TOKENS for m in messages)
    return (
        (limits.chars > 0 and chars > limits.chars * share)
        or (limits.tokens > 0 and chars_to_tokens(chars) > limits.tokens * share)
        or (limits.history_tokens > 0 and prompt > limits.history_tokens * share)
    )


def extract_facts(
    folded: Sequence[message.Message],
    later: Sequence[message.Message],
    previous: SummaryFacts | None,
) -> SummaryFacts:
    """What code keeps of ``folded`` (and the earlier facts): ids, decisions, open questions.

    A user's question is open until an assistant answers after it; an assistant's
    question, until the user answers with a decision. ``later`` (the messages that stay
    word for word) may close questions of ``folded``.
    """
    ids = list(previous.ids) if previous else []
    decisions = list(previous.decisions) if previous else []
    questions = list(previous.open_questions) if previous else []
    # questions carried from the last version close as an assistant's do
    asked: list[tuple[message.Kind, str]] = [(message.Kind.ASSISTANT, q) for q in questions]
    for m in folded:
        ids += _ids_of(m)
        if m.kind is message.Kind.USER and _DECISION.search(m.content):
            decisions.append(_line(m.content))
    for i, m in enumerate((*folded, *later)):
        if m.kind is message.Kind.ASSISTANT:
            asked = [(k, q) for k, q in asked if k is not message.Kind.USER]
        elif _DECISION.search(m.content):
            asked = [(k, q) for k, q in asked if k is not message.Kind.ASSISTANT]
        if i < len(folded):
            asked += [(m.kind, _line(q)) for q in _questions(m.content) if q.strip()]
    return SummaryFacts(
        ids=list(dict.fromkeys(ids))[-MAX_IDS:],
        decisions=decisions[-MAX_DECISIONS:],
        open_questions=list(dict.fromkeys(q for _, q in asked))[-MAX_QUESTIONS:],
    )


def _questions(text: str) -> list[str]:
    """The sentences of ``text`` that end with a question mark."""
    return [s for s in _SENTENCE.findall(text) if s.endswith("?")]


def _ids_of(m: message.Message) -> list[str]:
    found = _ID.findall(m.content)
    for key, value in m.metadata.items():
        if key.endswith("Id") and isinstance(value, str) and _ID.fullmatch(value):
            found.append(value)
    if m.run_id:
        found.append(m.run_id)
    return found


def _line(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= LINE_CHARS else flat[: LINE_CHARS - 1] + "…"


def extract_text(previous: ConversationSummary | None, folded: Sequence[message.Message]) -> str:
    """The summary's prose when the model failed: the earlier prose and the new messages'
    openings, one line each, the oldest lines dropped past ``EXTRACT_CHARS``."""
    lines = previous.text.splitlines() if previous else []
    lines += [f"{speaker(m)}: {_line(m.content)}" for m in folded]
    total, start = len(lines) - 1, 0  # the newlines
    total += sum(len(line) for line in lines)
    while total > EXTRACT_CHARS and start < len(lines) - 1:
        total -= len(lines[start]) + 1
        start += 1
    return "\n".join(lines[start:])[-EXTRACT_CHARS:]


def speaker(m: message.Message) -> str:
    """Who wrote ``m``, as the summarizer reads it."""
    return "User" if m.kind is message.Kind.USER else f"Assistant ({m.agent_id or 'team'})"


def for_prompt(summary: ConversationSummary) -> SummaryText:
    """The summary as the prompt shows it: its kept facts first, then its prose."""
    facts = summary.facts
    lines = [
        f"## Earlier in this conversation (summary v{summary.version}, "
        f"{summary.covered_messages} messages)"
    ]
    if facts.ids:
        lines.append("Ids mentioned: " + ", ".join(facts.ids))
    if facts.decisions:
        lines.append("Decisions:")
        lines += [f"- {d}" for d in facts.decisions]
    if facts.open_questions:
        lines.append("Open questions:")
        lines += [f"- {q}" for q in facts.open_questions]
    return SummaryText(summary.version, "\n".join(lines), summary.text)
