"""Simple answer or planning run? Seed 000 §16.1's criteria, explicit and recorded."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from hansa.domain.routing import RoutingRule
from hansa.engine.planning import deliverables
from hansa.engine.planning.deliverables import Deliverable
from hansa.engine.planning.playbooks import Playbook, builtin, find
from hansa.engine.planning.targets import Kind, Target, only_changed, target
from hansa.engine.routing import DEFAULT_RULES

_CHANGE = re.compile(
    r"\b(create|add|build|make|publish|launch|update|change|edit|delete|remove|set up|install|"
    r"deploy|migrate|send|notify|renew|configure|redesign|schedule|fix|replace|point|move|"
    r"rewrite)\b",
    re.I,
)
_OUTSIDE = re.compile(
    r"\b(pages?|homepage|landing page|products?|site|website|posts?|blog|tickets?|dns|"
    r"certificates?|ssl|tls|cms|wordpress|shop|store|newsletters?|campaigns?|emails?|menu|"
    r"navigation|forms?|redirects?|domains?|banners?|ads)\b",
    re.I,
)
"""What lives in a system outside Hansa's own records (seed 000 §16.1: "external changes")."""
_IRREVERSIBLE = re.compile(r"\b(delete|remove|drop|erase|wipe|unpublish)\b", re.I)
_WORKSPACE = re.compile(
    r"\b(documents?|docs?|tasks?|goals?|plans?|milestones?|risks?|requirements?)\b", re.I
)
_WORKSPACE_CHANGE = re.compile(
    r"\b(create|add|make|write|draft|update|change|edit|rename|link|connect|attach|note|"
    r"record|list|find|search|look up|show|delete|remove|archive)\b",
    re.I,
)
_WORKSPACE_OBJECT = re.compile(
    r"\b(?:create|add|make|write|draft|note|record|rename|update|edit|link|delete|remove|archive)"
    r"\s++(?:(?:a|an|the|new|another|my|our)\s++){0,2}"
    r"(?:documents?|docs?|tasks?|goals?|milestones?|risks?|requirements?)\b",
    re.I,
)
"""A workspace entity as the object of the request ("create a task to renew the SSL
certificate", "delete the document Brand guide"): the agent's workspace tools, whatever the
entity is about (a workspace entity's delete can be undone)."""
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
_UNDO = re.compile(
    r"\W*+(?:(?:hey|hi|ok(?:ay)?|hans|so|now)\b[\s,.!]*+){0,3}"
    r"(?:(?:can|could|would|will) you\s++(?:please\s++)?"
    r"|(?:i\s++(?:want|would like|'d like|need)\s++(?:you\s++)?to\s++)"
    r"|let'?s\s++|please\s++)?"
    r"(?:undo|roll\s?back|revert|reverse)\b",
    re.I,
)
"""A request to undo a run: the verb first, after a greeting or a polite opening ("undo
that", "please revert what you just did", "can you roll back the Services page run?")."""
UNDO_CHARS = 300
"""Longer messages are never read as a request to undo a run."""
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
    undo: bool = False
    """A request to undo a run ("undo that", "roll back the last run"): Hans answers it
    himself with the run's undo, asked first as on the run card."""
    target: Target | None = None
    """The existing page, product, menu or form the request changes (``targets``): the
    plan is an update of it, once it is found by name in the project (``updates``)."""
    deliverables: tuple[Deliverable, ...] = ()
    """The deliverables a request names for several agents (``deliverables``): the plan
    has a step per deliverable on its agent."""
    given: Mapping[str, str | None] = field(default_factory=dict)
    """Requirement values known before the request's words are read (the page the
    look-up found, under its own name); None keeps a requirement open (a page not found)."""
    notes: tuple[str, ...] = ()
    """What Hans says first when he plans it (a name he could not find, or took loosely)."""


def triage(text: str, rules: Sequence[RoutingRule] = DEFAULT_RULES) -> Triage:
    """Plan when the request changes an outside system, spans agents or deliverables, or
    may be final (seed 000 §16.1, each criterion on its own; ``rules``: the routing rules
    whose targets count the agents it names); a request about workspace entities goes to
    the agent and its workspace tools; a question is answered."""
    if asks_undo(text):
        return Triage(True, "undo: the user asks to undo a run, which Hans does himself", undo=True)
    cadence = ongoing(text)
    if cadence is not None:
        reason = f"agent session: ongoing work, a check {cadence.words}"
        return Triage(False, reason, ongoing=cadence)
    if _QUESTION.match(text) and text.rstrip().endswith("?"):
        return Triage(False, "simple answer: a question, no change is asked for")
    if _WORKSPACE_OBJECT.search(text):
        return _workspace(text)
    changed = target(text)
    if changed is not None:
        return _update(changed)
    playbook = find(text)
    if playbook is not None and playbook.id in MAKES and only_changed(text, MAKES[playbook.id]):
        playbook = None  # the pages it names are where things go, not pages to make
    parts = deliverables.find(text, rules)
    if parts and not _covers(playbook, parts):
        agents = len({d.agent_id for d in parts})
        reason = f"planning run: it asks for {len(parts)} deliverables, {agents} agents take part"
        return Triage(True, reason, deliverables=parts)
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
    criteria = _criteria(text, rules)
    if criteria:
        return Triage(True, "planning run: " + ", ".join(criteria))
    return _workspace(text)


MAKES: dict[str, Kind] = {"new_page": "page", "new_product": "product"}
"""The playbooks that make a thing of a kind."""
UPDATES = {"page": "update_content"}
"""The playbook that changes an existing thing of each kind: a page's content; a page
something is added to: ``add_to_page``; a product, menu or form, which Hansa has no step
to edit: ``change_on_site``, a ticket for the team."""


def _update(changed: Target) -> Triage:
    """A change of an existing thing: the playbook that updates it."""
    name = (
        "add_to_page"
        if changed.kind == "page" and changed.adds
        else UPDATES.get(changed.kind, "change_on_site")
    )
    playbook = next(p for p in builtin() if p.id == name)
    criteria = [f"it changes the existing {changed.kind} “{changed.name}”"]
    owners = {step.owner for step in playbook.steps()}
    if len(owners) > 1:
        criteria.append(f"{len(owners)} agents take part")
    return Triage(True, "planning run: " + ", ".join(criteria), playbook, target=changed)


def _covers(playbook: Playbook | None, parts: Sequence[Deliverable]) -> bool:
    """Whether ``playbook``'s steps are on every agent the deliverables name (then the
    playbook plans the request: "a new Services page with SEO copy and visuals")."""
    if playbook is None:
        return False
    return {d.agent_id for d in parts} <= {step.owner for step in playbook.steps()}


def asks_undo(text: str) -> bool:
    """Whether ``text`` asks to undo (roll back, revert) a run or what one did."""
    return len(text) <= UNDO_CHARS and _UNDO.match(text) is not None


def _workspace(text: str) -> Triage:
    named = workspace_kinds(text)
    if named and _WORKSPACE_CHANGE.search(text):
        reason = f"workspace request: the agent uses its workspace tools ({', '.join(named)})"
        return Triage(False, reason, None, named)
    return Triage(False, "simple answer: no change to outside systems is asked for")


def _criteria(text: str, rules: Sequence[RoutingRule]) -> list[str]:
    """The §16.1 criteria a request without a playbook meets."""
    criteria = []
    if _CHANGE.search(text):
        outside = {m.group(1).lower().rstrip("s") for m in _OUTSIDE.finditer(text)}
        if outside:
            criteria.append("it changes the project's systems")
        if len(outside) > 1:
            criteria.append(f"it asks for {len(outside)} deliverables")
        agents = agents_named(text, rules)
        if len(agents) > 1:
            criteria.append(f"{len(agents)} agents take part")
    if _IRREVERSIBLE.search(text):
        criteria.append("it may include a step that cannot be undone")
    return criteria


def agents_named(text: str, rules: Sequence[RoutingRule]) -> list[str]:
    """The agents whose routing rules' keywords ``text`` names, each once."""
    found = []
    for rule in rules:
        for word in rule.keywords:
            pattern = rf"\b{re.escape(word)}(?:s|es|ing|ed)?\b"
            if rule.target not in found and re.search(pattern, text, re.I):
                found.append(rule.target)
    return found


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
