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
_WORKSPACE = re.compile(
    r"\b(documents?|docs?|tasks?|goals?|plans?|milestones?|risks?|requirements?)\b", re.I
)
_WORKSPACE_CHANGE = re.compile(
    r"\b(create|add|make|write|draft|update|change|edit|rename|link|connect|attach|note|"
    r"record|list|find|search|look up|show)\b",
    re.I,
)
_KIND_OF = {"doc": "document", "docs": "document"}
_ONGOING = re.compile(
    r"\b(keep an eye on|keep (?:watch|watching) (?:on|over)|keep track of|monitor)\b"
    r"|\breport (?:back )?(?:every|hourly|daily|weekly|monthly)\b",
    re.I,
)
_CADENCES = (
    (re.compile(r"\b(hourly|every hour)\b", re.I), "every hour", 3600.0),
    (re.compile(r"\b(daily|every day|each day)\b", re.I), "every day", 86_400.0),
    (re.compile(r"\b(weekly|every week|each week)\b", re.I), "every week", 604_800.0),
    (re.compile(r"\b(monthly|every month|each month)\b", re.I), "every month", 2_592_000.0),
)
_QUESTION = re.compile(r"^\s*(how|what|why|when|where|which|who|is|are|does|do|should)\b", re.I)
DEFAULT_CADENCE = ("every day", 86_400.0)
"""How often ongoing work checks in when the request does not say."""


@dataclass(frozen=True)
class Cadence:
    """How often a session for ongoing work takes a step."""

    words: str
    seconds: float


@dataclass(frozen=True)
class Triage:
    """The decision and the criteria that made it."""

    plan: bool
    reason: str
    playbook: Playbook | None = None
    workspace: tuple[str, ...] = ()
    """The workspace kinds a request that the agent answers with its workspace tools
    names (``document``, ``goal``…); empty for any other request."""
    ongoing: Cadence | None = None
    """For a request for ongoing work ("keep an eye on our SEO and report weekly"): how
    often the agent session that takes it on checks in (seed 004)."""


def triage(text: str) -> Triage:
    """Plan when the request changes an outside system, spans agents or steps, or may be
    final; a request about workspace entities goes to the agent and its workspace tools."""
    cadence = ongoing(text)
    if cadence is not None:
        reason = f"agent session: ongoing work, a check {cadence.words}"
        return Triage(False, reason, ongoing=cadence)
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
    named = workspace_kinds(text)
    if named and _WORKSPACE_CHANGE.search(text):
        reason = f"workspace request: the agent uses its workspace tools ({', '.join(named)})"
        return Triage(False, reason, None, named)
    return Triage(False, "simple answer: no change to outside systems is asked for")


def workspace_kinds(text: str) -> tuple[str, ...]:
    """The workspace kinds ``text`` names, in the order it names them, each once."""
    found = (m.group(1).lower() for m in _WORKSPACE.finditer(text))
    kinds = (_KIND_OF.get(word, word.removesuffix("s")) for word in found)
    return tuple(dict.fromkeys(kinds))


def ongoing(text: str) -> Cadence | None:
    """How often to check in, when ``text`` asks for ongoing work; None otherwise."""
    if _ONGOING.search(text) is None or _QUESTION.match(text):
        return None  # "how do I monitor my site?" asks for an answer, not for work
    for pattern, words, seconds in _CADENCES:
        if pattern.search(text):
            return Cadence(words, seconds)
    return Cadence(*DEFAULT_CADENCE)
