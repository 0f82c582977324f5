"""The quality gate (seed 003): checks an agent's answer before it is sent.

Deterministic checks, pure functions of the answer and of what the turn did:

- ``empty_answer``: the answer says nothing;
- ``unbacked_claim``: the answer states that the agent performed an action (``CLAIMS``:
  "I created", "has been deleted"…) and no tool call of that kind succeeded in the turn;
- ``broken_link``: the answer links to a workspace page or product (``LINK``) that does not
  exist (the caller looks the ids up and passes the missing ones);
- ``invented_claim``: the answer states a figure, a statistic, a link, a date or a promise
  that none of its inputs holds (the request, the project, the tools' results: the caller
  passes them as ``grounds``), by the one checker Hans's review of a run uses too
  (``domain/grounding.py``).

An optional evaluator model (``HANSA_QUALITY_EVALUATOR=model``) answers ``EVALUATOR_SCHEMA``
about the same answer; ``evaluation`` reads its verdict. A failed gate gets one retry
(``MAX_RETRIES``): the model reads ``retry_note`` and answers again.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from hansa.domain import grounding
from hansa.models.base import ChatMessage

MAX_RETRIES = 1
"""How many times a reply that failed the gate is asked for again; a second failure is sent
with a note, never asked for once more."""

Kind = Literal["create", "update", "delete", "send", "publish"]
"""What an action does, as a claim states it and as a tool's name says it."""

Code = Literal["empty_answer", "unbacked_claim", "broken_link", "invented_claim", "evaluator"]


@dataclass(frozen=True, slots=True)
class Claim:
    """A verb that states an action, and the kinds of tool call that back it."""

    verb: str
    """The past participle as written (``created``)."""
    backed_by: frozenset[Kind]


def _claim(verb: str, *kinds: Kind) -> Claim:
    return Claim(verb, frozenset(kinds))


CLAIMS: tuple[Claim, ...] = (
    _claim("created", "create"),
    _claim("set up", "create"),
    _claim("filed", "create"),
    _claim("added", "create", "update"),
    _claim("updated", "update"),
    _claim("changed", "update"),
    _claim("edited", "update"),
    _claim("modified", "update"),
    _claim("renamed", "update"),
    _claim("replaced", "update"),
    _claim("deleted", "delete"),
    _claim("removed", "delete", "update"),
    _claim("archived", "delete", "update"),
    _claim("sent", "send"),
    _claim("emailed", "send"),
    _claim("notified", "send"),
    _claim("triggered", "send"),
    _claim("published", "publish", "create", "update"),
)
"""The stated, explicit list of action verbs the gate looks for. A claim is the verb after a
first person ("I created", "I've just updated", "we have sent") or in the passive ("has been
deleted", "was published"), with the further verbs of its sentence ("… and sent the link");
a negation ("I have not created") is no claim."""

_VERBS = "|".join(re.escape(c.verb).replace(r"\ ", r"\s+") for c in CLAIMS)
_ADVERBS = r"(?:(?:just|now|also|already|successfully|then|finally)\s+)*"
_CLAIM_RE = re.compile(
    rf"\b(?:(?:I|we)(?:\s+have|\s+just|'ve|’ve)?|(?:has|have|had)\s+been|(?:was|were))\s+"
    rf"{_ADVERBS}(?P<verb>{_VERBS})\b",
    re.IGNORECASE,
)
_MORE_RE = re.compile(
    rf"(?:,|\band|\bthen)\s+(?:and\s+)?{_ADVERBS}(?P<verb>{_VERBS})\b", re.IGNORECASE
)
"""A further verb of the same sentence: "I created the page and sent the link"."""
_SENTENCE_END = re.compile(r"[.!?;\n]")

_TOOL_KINDS: dict[str, Kind] = {
    "create": "create",
    "link": "create",
    "update": "update",
    "delete": "delete",
    "call": "send",
    "send": "send",
    "publish": "publish",
}
"""Words of a task type's name (``create_page``, ``entity.update``, ``webhook.call``) and the
kind of action they name."""

_NOT_ACTIONS = ("agent_state.",)
"""Task types that change no one's data but the agent's own notes: they back no claim."""

LINK = re.compile(r"/api/workspace/(?P<what>pages|products)/(?P<id>[0-9A-Za-z]{26})\b")
"""A link to a page or product of the built-in CMS and shop (``runs/connectors.py``)."""

EVALUATOR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"ok": {"type": "boolean"}, "reason": {"type": "string"}},
    "required": ["ok", "reason"],
    "additionalProperties": False,
}
"""What the evaluator model answers: whether the answer may go out, and why not."""


@dataclass(frozen=True, slots=True)
class Finding:
    """One reason the answer may not go out as it is."""

    code: Code
    reason: str
    """Written by code (the evaluator's: its reason), said to the model on the retry."""


def kinds_of(tool: str) -> frozenset[Kind]:
    """The kinds of action a task type's name says it performs (none for a read)."""
    if tool.startswith(_NOT_ACTIONS):
        return frozenset()
    words = re.split(r"[._\-]", tool.lower())
    return frozenset(_TOOL_KINDS[w] for w in words if w in _TOOL_KINDS)


def claims(answer: str) -> list[Claim]:
    """The actions ``answer`` says were performed, each verb once, in order."""
    by_verb = {c.verb: c for c in CLAIMS}
    found: list[Claim] = []
    for match in _CLAIM_RE.finditer(answer):
        end = _SENTENCE_END.search(answer, match.end())
        rest = answer[match.end() : end.start() if end else len(answer)]
        for verb in (match.group("verb"), *(m.group("verb") for m in _MORE_RE.finditer(rest))):
            claim = by_verb[" ".join(verb.lower().split())]
            if claim not in found:
                found.append(claim)
    return found


def links(answer: str) -> list[tuple[str, str]]:
    """``(kind, id)`` of each workspace page (``page``) or product (``product``) linked."""
    seen: list[tuple[str, str]] = []
    for match in LINK.finditer(answer):
        found = (match.group("what")[:-1], match.group("id"))
        if found not in seen:
            seen.append(found)
    return seen


def check(
    answer: str,
    performed: Iterable[str],
    missing: Iterable[tuple[str, str]] = (),
    grounds: Iterable[str] | None = None,
) -> list[Finding]:
    """What is wrong with ``answer``; empty when it may go out.

    Args:
        answer: The agent's answer, as the model wrote it.
        performed: The task types of the turn's tool calls that succeeded (a step held for
            the user's confirmation did not).
        missing: The ``links`` of the answer that name nothing (the caller looked them up).
        grounds: What the agent was given and found: the request and the conversation, the
            project, the tools' results. None: the answer's claims are not checked.
    """
    if not answer.strip():
        return [Finding("empty_answer", "The answer is empty.")]
    done: set[Kind] = set()
    for tool in performed:
        done |= kinds_of(tool)
    findings: list[Finding] = []
    unbacked = [c.verb for c in claims(answer) if not c.backed_by & done]
    if unbacked:
        said = ", ".join(f"'{verb}'" for verb in unbacked)
        findings.append(
            Finding(
                "unbacked_claim",
                f"The answer says something was {said}, but no tool call in this turn did "
                "that. Say only what the tools did; to do it, call the tool.",
            )
        )
    gone = list(missing)
    if gone:
        which = ", ".join(f"{kind} {id_}" for kind, id_ in gone)
        findings.append(
            Finding(
                "broken_link",
                f"The answer links to a {which} that does not exist. Link only to what exists.",
            )
        )
    made_up = grounding.invented(answer, grounds) if grounds is not None else []
    if made_up:
        findings.append(
            Finding(
                "invented_claim",
                f"The answer states {grounding.describe(made_up)}, which nothing in the "
                "request, the project or the tools' results holds. Leave out figures, links, "
                "dates and promises you were not given or did not get from a tool.",
            )
        )
    return findings


def retry_note(findings: Iterable[Finding]) -> str:
    """What the model reads before answering again."""
    reasons = " ".join(f.reason for f in findings)
    return (
        f"Your previous answer was not sent: an automatic check found a problem. {reasons} "
        "Answer the request again."
    )


def evaluator_prompt(request: str, answer: str, performed: Iterable[str]) -> list[ChatMessage]:
    """The evaluator model's prompt: the request, the tools that ran, the answer."""
    tools = ", ".join(performed) or "none"
    return [
        ChatMessage(
            "system",
            "You check an assistant's answer before it is sent. Reply with JSON "
            '{"ok": true|false, "reason": "..."}: ok is false only when the answer claims '
            "something the tools did not do, does not address the request, or is empty.",
        ),
        ChatMessage(
            "user",
            f"Request:\n{request}\n\nTools that succeeded: {tools}\n\nAnswer:\n{answer}",
        ),
    ]


def evaluation(text: str) -> Finding | None:
    """The evaluator's verdict as a finding (None: the answer may go out, or the verdict
    could not be read, which must not hold an answer back)."""
    try:
        verdict = json.loads(text)
    except ValueError:
        return None
    if not isinstance(verdict, dict) or verdict.get("ok") is not False:
        return None
    reason = str(verdict.get("reason") or "").strip() or "The evaluator rejected the answer."
    return Finding("evaluator", reason[:500])
