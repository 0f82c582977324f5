"""A request that names several deliverables for several agents (seed 000 §16.1: "the work
spans several agents"): "for the spring launch we need visuals, SEO copy and a landing
page timeline" becomes a plan with a step per deliverable, each on the agent whose domain
it is.

The request's parts are read from its structure — items of a list (commas, "and", "plus",
"&", bullets or numbered lines) and its sentences — and each part is placed with an agent:
first by the routing rules' keywords (seed 000 §5.2's ``determineAgent``, in its order),
then by the words of the agents' domains (``domains.toml``, data). A request is planned
this way only when at least two parts land with two different agents; each step is the
agent's own kind of work: a draft when it may draft content, a ticket when it files them.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from pydantic import BaseModel, ValidationError

from hansa import errors
from hansa.domain.agent import AgentDefinition
from hansa.domain.plan import Plan, PlanStage, PlanStep
from hansa.domain.routing import RoutingRule
from hansa.engine import laws
from hansa.tasks.registry import TaskRegistry

READ_CHARS = 1000
"""How much of a request is split into parts."""
MAX_PARTS = 8
"""The most deliverables one plan takes (more parts are left to the model planner)."""
_SEGMENT = re.compile(r"[\n;]++|(?<=[.!?])\s++")
_HEADING = re.compile(r"^[^:]{0,120}:(?=\s*+\S)")
""""Spring launch: visuals, copy…": what comes before the colon names the whole, not a part."""
_ITEM = re.compile(
    r"\s*+,\s*+(?:and\s++|plus\s++|&\s*+)?|\s++(?:and|plus|&|as well as|along with)\s++", re.I
)
_BULLET = re.compile(r"^\s*+(?:[-*•]|\d{1,2}[.)])\s*+")
_FILLER = re.compile(
    r"^(?:(?:please|pls|hans|ok|so|also|then|hi|hey)\W++)*+"
    r"(?:[^,]{0,80}?\b(?:we|i)\s++(?:(?:will|would|'d|also|really)\s++)?"
    r"(?:need|want|like|require)\s++(?:you\s++)?(?:to\s++)?"
    r"|(?:can|could|would) you\s++(?:please\s++)?)?",
    re.I,
)
"""Words around a part that do not name it: "please", "for the launch we need"."""
_BRIEF = re.compile(r"\b(seo brief|keywords?|meta descriptions?)\b", re.I)
DRAFT, TICKET = "draft_content", "create_ticket"


@dataclass(frozen=True)
class Deliverable:
    """One part of a request and the agent whose domain it is."""

    what: str
    """The part in the user's words ("SEO copy", "a landing page timeline")."""
    agent_id: str
    word: str
    """The word that placed it ("seo", "timeline")."""


class _Domain(BaseModel):
    agent: str
    words: list[str]


@cache
def domains() -> tuple[tuple[str, re.Pattern[str], tuple[str, ...]], ...]:
    """The agents' domain words (``domains.toml``): agent, one pattern for all, the words."""
    path = Path(__file__).with_name("domains.toml")
    try:
        data = tomllib.loads(path.read_text())
        listed = [_Domain.model_validate(d) for d in data.get("domain", [])]
    except (OSError, tomllib.TOMLDecodeError, ValidationError) as exc:
        raise errors.ConfigError(f"cannot read the agents' domains from {path}: {exc}") from exc
    return tuple((d.agent, _words(d.words), tuple(d.words)) for d in listed)


def _words(words: Sequence[str]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in words)
    return re.compile(rf"\b({alternatives})(?:s|es|ing|ed)?\b", re.I)


def find(text: str, rules: Sequence[RoutingRule]) -> tuple[Deliverable, ...]:
    """The deliverables ``text`` names, when they are for two agents or more; else ()."""
    found = []
    for part in parts(text)[:MAX_PARTS]:
        placed = place(part, rules)
        if placed is not None:
            found.append(placed)
    return tuple(found) if len({d.agent_id for d in found}) > 1 else ()


def parts(text: str) -> list[str]:
    """The request's parts: its sentences and lines, split at list separators."""
    found = []
    for segment in _SEGMENT.split(text[:READ_CHARS]):
        for item in _ITEM.split(_HEADING.sub("", _BULLET.sub("", segment))):
            item = _FILLER.sub("", item.strip()).strip(" .!?,")
            if item:
                found.append(item)
    return found


def place(part: str, rules: Sequence[RoutingRule]) -> Deliverable | None:
    """The agent whose domain ``part`` is: the routing rules first, then the domains."""
    for rule in rules:
        for word in rule.keywords:
            if re.search(rf"\b{re.escape(word)}(?:s|es|ing|ed)?\b", part, re.I):
                return Deliverable(part, rule.target, word.lower())
    for agent_id, pattern, _ in domains():
        m = pattern.search(part)
        if m is not None:
            return Deliverable(part, agent_id, m.group(1).lower())
    return None


def plan(
    found: Sequence[Deliverable],
    request: str,
    agents: Mapping[str, AgentDefinition],
    registry: TaskRegistry,
    project_name: str,
    project_id: str | None,
) -> Plan | None:
    """A plan with a step per deliverable, all in one group (they do not wait for each
    other); None when fewer than two agents can take theirs."""
    steps = []
    for i, d in enumerate(found, start=1):
        agent = agents.get(d.agent_id)
        step = _step(agent, d, f"part{i}", request, registry, project_name) if agent else None
        if step is not None:
            steps.append(step.model_copy(update={"project_id": project_id}))
    if len({s.owner for s in steps}) < 2:
        return None
    names = "; ".join(f"{s.parameters['title']} ({agents[s.owner].display_name})" for s in steps)
    return Plan(
        intent=f"{len(steps)} deliverables for {project_name}, each by the agent whose work it "
        f"is: {names}.",
        title=("Deliverables: " + ", ".join(str(s.parameters["title"]) for s in steps))[:200],
        stages=[PlanStage(group="A", title="Each deliverable by its agent", steps=steps)],
    )


def _step(
    agent: AgentDefinition,
    d: Deliverable,
    ref: str,
    request: str,
    registry: TaskRegistry,
    project_name: str,
) -> PlanStep | None:
    """The agent's own kind of work for ``d``: a draft, or a ticket; None if neither."""
    what = d.what[:1].upper() + d.what[1:200]
    asked = request[:1500]
    if DRAFT in registry and laws.holds(agent, registry.get(DRAFT)):
        kind = "seo_brief" if _BRIEF.search(d.what) else "page_copy"
        brief = f"{what}, for {project_name}. The whole request: {asked}"
        return PlanStep(
            ref=ref,
            owner=agent.id,
            task_type=DRAFT,
            parameters={"kind": kind, "title": what, "brief": brief},
            summary=f"Draft: {what}"[:300],
        )
    if TICKET in registry and laws.holds(agent, registry.get(TICKET)):
        description = f"Asked in the conversation for {project_name}: {asked}"
        return PlanStep(
            ref=ref,
            owner=agent.id,
            task_type=TICKET,
            parameters={"title": what, "description": description, "priority": "normal"},
            summary=f"Ticket: {what}"[:300],
        )
    return None
