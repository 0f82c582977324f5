"""Escalation (seed 000 §6.3): risky or sensitive plan steps go to the right lead.

Rules are data (``escalations.toml``): a step whose task type or words match a rule is
owned by the rule's lead (``reassign``, when the law of allowed scope lets the lead own
its task type) or reviewed by the lead in a ``review`` step right after its group
(``review``, and ``reassign``'s fallback). ``escalate`` is pure: the plan in, the
escalated plan and what happened to each matched step out; the protocol writes the
status chips and thinking entries from ``chip`` and ``thought``.
"""

from __future__ import annotations

import enum
import re
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from hansa import errors
from hansa.domain.agent import AgentDefinition
from hansa.domain.plan import Plan, PlanStage, PlanStep
from hansa.domain.project import ProjectContext
from hansa.engine import laws
from hansa.tasks.registry import TaskRegistry

REVIEW = "review"
"""The task type of a lead's review step (``tasks/builtin/review.py``)."""
MATCH_CHARS = 2_000
"""How much of each parameter's text the intents search."""
MAX_STAGES = 10
MAX_STEPS = 20
"""A plan's limits (``domain/plan.py``): reviews never push a plan past them."""


class Mode(enum.StrEnum):
    """What a rule does with a matching step."""

    REASSIGN = "reassign"
    """The lead owns the step (or, if the lead may not own its task type, reviews it)."""
    REVIEW = "review"
    """The lead reviews the step in a step of its own, right after the step's group."""


class EscalationRule(BaseModel):
    """One rule: which steps (task types, intent words) go to which lead, and how."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    lead: str
    """The lead's agent id (``technicalLead``, ``growthLead``, ``clientSuccess``)."""
    mode: Mode
    concern: str = Field(min_length=1, max_length=80)
    """What the lead is there for, ending the chip: "the DNS change"."""
    task_types: tuple[str, ...] = ()
    intents: tuple[str, ...] = ()
    """Plain words and phrases, matched as whole words in any case; never patterns."""

    @model_validator(mode="after")
    def _matches_something(self) -> EscalationRule:
        if not self.task_types and not self.intents:
            raise ValueError(f"escalation rule {self.id!r} names no task types and no intents")
        return self

    @cached_property
    def _pattern(self) -> re.Pattern[str] | None:
        if not self.intents:
            return None
        # literal words only, so matching is linear in the text; a hyphen joins words
        words = (r"\s+".join(re.escape(w) for w in intent.split()) for intent in self.intents)
        return re.compile(rf"(?<![\w-])(?:{'|'.join(words)})(?:s|es|ing|ed)?(?![\w-])", re.I)

    def matches(self, step: PlanStep) -> bool:
        """True when the step's task type is listed or an intent appears in its text."""
        if step.task_type in self.task_types:
            return True
        pattern = self._pattern
        return pattern is not None and any(pattern.search(t) for t in _texts(step))


def _texts(step: PlanStep) -> Iterator[str]:
    yield step.summary

    def walk(value: Any) -> Iterator[str]:
        if isinstance(value, str):
            yield value[:MATCH_CHARS]
        elif isinstance(value, Mapping):
            for item in value.values():
                yield from walk(item)
        elif isinstance(value, list | tuple):
            for item in value:
                yield from walk(item)

    yield from walk(step.parameters)


@dataclass(frozen=True)
class Escalation:
    """A step that went to a lead."""

    rule: EscalationRule
    step: PlanStep
    """The step as planned (its first owner)."""
    lead: AgentDefinition
    mode: Mode
    """What was done: the lead owns it, or reviews it."""
    review_ref: str | None = None
    """The review step's ref (``review`` mode)."""
    because: str | None = None
    """Why it was not done the rule's way (the law of allowed scope's refusal)."""


@dataclass(frozen=True)
class NotEscalated:
    """A step a rule matched that could go to its lead neither way, and why."""

    rule: EscalationRule
    step: PlanStep
    lead: AgentDefinition
    because: str


Outcome = Escalation | NotEscalated


def escalate(
    plan: Plan,
    rules: tuple[EscalationRule, ...],
    *,
    registry: TaskRegistry,
    agents: Mapping[str, AgentDefinition],
    project: ProjectContext,
) -> tuple[Plan, list[Outcome]]:
    """``plan`` with its matching steps escalated, and an outcome per matched step.

    The first rule that matches a step wins; a lead's own steps, review steps and rules
    naming an agent not in ``agents`` are left alone. Review steps form a stage after
    each reviewed group (the groups are lettered again), or, when that would pass the
    plan's limits, join the next group.
    """
    refs = {s.ref for stage in plan.stages for s in stage.steps}
    outcomes: list[Outcome] = []
    stages: list[list[PlanStep]] = []
    reviews: list[list[PlanStep]] = []
    for stage in plan.stages:
        steps: list[PlanStep] = []
        added: list[PlanStep] = []
        for step in stage.steps:
            rule = _rule_for(step, rules, agents)
            if rule is None:
                steps.append(step)
                continue
            lead = agents[rule.lead]
            owning = _refusal(registry, step.task_type, lead, project)
            reviewing = _refusal(registry, REVIEW, lead, project)
            if owning is None and (rule.mode is Mode.REASSIGN or reviewing is not None):
                steps.append(step.model_copy(update={"owner": lead.id}))
                because = None if rule.mode is Mode.REASSIGN else reviewing
                outcomes.append(Escalation(rule, step, lead, Mode.REASSIGN, because=because))
                continue
            steps.append(step)
            if reviewing is not None:
                refused = reviewing if owning is None else f"{owning}; {reviewing}"
                outcomes.append(NotEscalated(rule, step, lead, refused))
                continue
            review = _review_step(step, rule, lead, refs)
            added.append(review)
            because = owning if rule.mode is Mode.REASSIGN else None
            outcomes.append(Escalation(rule, step, lead, Mode.REVIEW, review.ref, because))
        stages.append(steps)
        reviews.append(added)
    layout = _layout(plan.stages, stages, reviews)
    if layout is None:  # no room for the reviews: those steps stay as planned
        layout = _layout(plan.stages, stages, [[] for _ in reviews])
        assert layout is not None
        outcomes = [_unplaced(o) for o in outcomes]
    return plan.model_copy(update={"stages": layout}), outcomes


def _rule_for(
    step: PlanStep, rules: tuple[EscalationRule, ...], agents: Mapping[str, AgentDefinition]
) -> EscalationRule | None:
    if step.task_type == REVIEW:
        return None
    rule = next((r for r in rules if r.matches(step)), None)
    if rule is None or rule.lead == step.owner or rule.lead not in agents:
        return None
    return rule


def _refusal(
    registry: TaskRegistry, task_type: str, agent: AgentDefinition, project: ProjectContext
) -> str | None:
    if task_type not in registry:
        return f"there is no task type {task_type!r}"
    return laws.scope_refusal(registry.get(task_type), agent, project)


def _review_step(
    step: PlanStep, rule: EscalationRule, lead: AgentDefinition, refs: set[str]
) -> PlanStep:
    base = f"{step.ref[:24]}_review"
    ref, n = base, 2
    while ref in refs:
        ref, n = f"{base}{n}", n + 1
    refs.add(ref)
    return PlanStep(
        ref=ref,
        owner=lead.id,
        task_type=REVIEW,
        parameters={"step": step.ref, "subject": step.summary[:300], "concern": rule.concern},
        summary=f"Review “{step.summary[:200]}” ({rule.concern})",
        project_id=step.project_id,
    )


def _layout(
    planned: list[PlanStage], stages: list[list[PlanStep]], reviews: list[list[PlanStep]]
) -> list[PlanStage] | None:
    """The stages with a review stage after each reviewed one, or the reviews joining the
    next stage when there is no room for stages of their own; None if neither fits."""
    separate = len(planned) + sum(1 for r in reviews if r) <= MAX_STAGES
    out: list[tuple[str, list[PlanStep]]] = []
    carried: list[PlanStep] = []
    for stage, steps, added in zip(planned, stages, reviews, strict=True):
        out.append((stage.title, [*carried, *steps]))
        carried = []
        if added and separate:
            out.append((_review_title(added), added))
        elif added:
            carried = added
    if carried:
        if len(out) >= MAX_STAGES:
            return None
        out.append((_review_title(carried), carried))
    if any(len(steps) > MAX_STEPS for _, steps in out):
        return None
    return [
        PlanStage(group=chr(ord("A") + i), title=title, steps=steps)
        for i, (title, steps) in enumerate(out)
    ]


def _review_title(steps: list[PlanStep]) -> str:
    return "Lead review" if len({s.owner for s in steps}) == 1 else "Lead reviews"


def _unplaced(outcome: Outcome) -> Outcome:
    if isinstance(outcome, Escalation) and outcome.mode is Mode.REVIEW:
        return NotEscalated(
            outcome.rule, outcome.step, outcome.lead, "the plan has no room for a review step"
        )
    return outcome


def chip(outcome: Escalation, owner_name: str) -> str:
    """The status chip: "Web Engineer Nico's step “…” is escalated to Technical Lead Theo
    for the DNS change" (a review adds ": Theo reviews it right after")."""
    said = (
        f"{owner_name}'s step “{outcome.step.summary[:120]}” is escalated to "
        f"{outcome.lead.display_name} for {outcome.rule.concern}"
    )
    if outcome.mode is Mode.REASSIGN:
        return said
    return f"{said}: {outcome.lead.display_name.split()[-1]} reviews it right after"


def thought(outcome: Outcome, hans: str, owner_name: str) -> str:
    """The thinking entry, from a template: the rule, what was done and why."""
    step, lead, rule = outcome.step, outcome.lead.display_name, outcome.rule
    if isinstance(outcome, NotEscalated):
        return (
            f"{hans} could not escalate step {step.ref} to {lead} for {rule.concern} "
            f"(rule {rule.id}): {outcome.because}; {owner_name} keeps it"
        )
    if outcome.mode is Mode.REASSIGN:
        said = f"{hans} is giving step {step.ref} to {lead} for {rule.concern} (rule {rule.id})"
        if outcome.because:
            said += f"; no review step: {outcome.because}"
        return said
    said = (
        f"{hans} is adding a review by {lead} after step {step.ref} for {rule.concern} "
        f"(rule {rule.id})"
    )
    if outcome.because:
        said += f"; {owner_name} keeps the step: {outcome.because}"
    return said


def load(path: Path) -> tuple[EscalationRule, ...]:
    """Escalation rules from a TOML file (``[[escalation]]`` tables)."""
    try:
        data = tomllib.loads(path.read_text())
        return tuple(EscalationRule.model_validate(r) for r in data.get("escalation", []))
    except (OSError, tomllib.TOMLDecodeError, ValidationError) as exc:
        raise errors.ConfigError(f"cannot read escalation rules from {path}: {exc}") from exc


@cache
def builtin() -> tuple[EscalationRule, ...]:
    """The escalation rules shipped with Hansa."""
    return load(Path(__file__).with_name("escalations.toml"))
