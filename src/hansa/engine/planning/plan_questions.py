"""A plan's requirements as the reader's questions, and what a message answers of them.

A requirement is a ``answers.Question``: its label and aliases from the playbook, its
options the playbook's forks (a layout) or the values its task parameter allows (a
ticket's priority: ``low``, ``normal``, ``high``, ``urgent``, read from the task type's
schema, so "high priority" is the option ``high``, never the text "high priority"). A
name ("title", "name") is answered by "Call it …" too.

Hans asks for the missing requirements in the playbook's order, but not for one derived
from another that is missing (the address comes from the title): those are the
questions the reader numbers and places values in order against (``asking``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hansa.domain.plan import Plan, Requirement
from hansa.engine.planning import answers
from hansa.engine.planning.playbooks import Playbook, Searches
from hansa.tasks.registry import TaskRegistry

_NAMES = {"title", "name"}
"""Aliases that make a requirement a name ("Call it …")."""


def asking(playbook: Playbook, plan: Plan) -> list[Requirement]:
    """The requirements Hans asks for, in his order: the missing ones, except those
    derived from another that is missing (they follow from its answer)."""
    missing = {r.name for r in plan.missing}
    out = []
    for r in plan.missing:
        derive = playbook.spec(r.name).derive
        if derive and derive.startswith("slug:") and derive[5:] in missing:
            continue
        out.append(r)
    return out


def questions(playbook: Playbook, plan: Plan, registry: TaskRegistry) -> list[answers.Question]:
    """Every requirement of ``plan`` as a question: the ones Hans asks first, in his order,
    then the others (answered only by label: "slug: our-services" after the plan is shown)."""
    asked = {r.name for r in asking(playbook, plan)}
    first = asking(playbook, plan)
    rest = [r for r in plan.requirements if r.name not in asked]
    return [_question(playbook, r, registry, r.name in asked) for r in [*first, *rest]]


def _question(
    playbook: Playbook, r: Requirement, registry: TaskRegistry, asked: bool
) -> answers.Question:
    spec = playbook.spec(r.name)
    aliases = tuple(dict.fromkeys([*spec.aliases, spec.label.lower()]))
    if spec.fork:
        options = tuple(answers.Option(f.id, f.title) for f in playbook.forks)
        own = True
    else:
        allowed = _allowed(playbook, r.name, registry)
        options = tuple(answers.Option(v, v, names=(v,), keywords=(v,)) for v in allowed)
        own = not allowed
    return answers.Question(
        r.name,
        spec.label,
        aliases,
        options,
        own_words=own,
        naming=bool(_NAMES & set(spec.aliases)),
        asked=asked,
    )


def _allowed(playbook: Playbook, name: str, registry: TaskRegistry) -> list[str]:
    """The values a requirement may take: the enum of the task parameter it fills alone
    (``priority = "${priority}"``), if every such parameter has one."""
    allowed: list[str] | None = None
    for step in playbook.steps():
        for param, template in step.parameters.items():
            if template != "${" + name + "}" or step.task_type not in registry:
                continue
            schema: dict[str, Any] = registry.get(step.task_type).schema()
            prop = schema.get("properties", {}).get(param, {})
            values = [str(v) for v in prop.get("enum", [])]
            if not values:
                return []
            allowed = values if allowed is None else [v for v in allowed if v in values]
    return allowed or []


def read(
    playbook: Playbook,
    plan: Plan,
    text: str,
    registry: TaskRegistry,
    *,
    first: bool,
) -> answers.Reading:
    """What ``text`` answers of ``plan``'s requirements: the reader's reading, and on the
    request itself (``first``) the playbook's extractors for what it left open."""
    asked = questions(playbook, plan, registry)
    if first:
        return _extracted(playbook, asked, text)
    open_ = [q for q in asked if _missing(plan, q.name) or not q.asked]
    return answers.read(open_, text)


def _missing(plan: Plan, name: str) -> bool:
    return any(r.name == name and r.missing for r in plan.requirements)


def _extracted(playbook: Playbook, asked: Sequence[answers.Question], text: str) -> answers.Reading:
    """The request: labelled values, then the playbook's extractors (data, time-boxed);
    a request is never read in order or whole (its words are not answers)."""
    by_name = {q.name: q for q in asked}
    found = {
        name: a
        for name, a in answers.read(asked, text, strict_labels=True).answers.items()
        if a.how is answers.How.LABELLED
        or (a.how is answers.How.NAMED and any(w in a.words.lower() for w in by_name[name].aliases))
    }
    head = text[: answers.EXTRACT_CHARS]
    searches = Searches()
    for spec in playbook.requirements:
        for extractor in spec.extract:
            if spec.name in found:
                break
            m = searches.search(extractor, head)
            words = m.group(1).strip() if m is not None else ""
            value = answers.value_of(by_name[spec.name], words, numbers=False) if words else None
            if value is not None:
                found[spec.name] = answers.Answer(value, words, answers.How.FOUND)
    return answers.Reading(found)
