"""Plans (seed 000 §16, seed 002 §10): intent, requirements, questions, forks, staged steps."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from hansa.domain.base import Wire


class Requirement(Wire):
    """One input the plan needs; ``value`` None means it is missing."""

    name: str
    label: str
    question: str
    """How Hans asks for it, motivated by the goal."""
    value: str | None = None
    source: str | None = None
    """Where the value came from: request, project, user, default."""

    @property
    def missing(self) -> bool:
        """True while nobody has supplied a value."""
        return self.value is None


class Fork(Wire):
    """An alternative approach the user may pick."""

    id: str
    title: str
    description: str


class PlanStep(Wire):
    """One step: an owner agent, a task type and its parameters."""

    ref: str = Field(pattern=r"^[A-Za-z][A-Za-z0-9_]{0,31}$")
    """A name later steps use to refer to this step's output, e.g. ``copy``."""
    owner: str
    task_type: str
    parameters: dict[str, Any]
    summary: str
    project_id: str | None = None


class PlanStage(Wire):
    """A step group: steps that run in parallel; stages run in order."""

    group: str = Field(pattern=r"^[A-Z]{1,3}$")
    title: str
    steps: list[PlanStep] = Field(min_length=1, max_length=20)


class Plan(Wire):
    """What Hans proposes before anything runs."""

    intent: str
    """The goal restated in one or two sentences."""
    playbook: str | None = None
    requirements: list[Requirement] = Field(default_factory=list)
    forks: list[Fork] = Field(default_factory=list)
    chosen_fork: str | None = None
    stages: list[PlanStage] = Field(default_factory=list, max_length=10)
    title: str = ""

    @property
    def missing(self) -> list[Requirement]:
        """Requirements still without a value."""
        return [r for r in self.requirements if r.missing]

    def value(self, name: str) -> str | None:
        """A requirement's value."""
        return next((r.value for r in self.requirements if r.name == name), None)


class PlanningState(Wire):
    """A plan in progress, kept in the conversation's metadata (``planning``) between turns."""

    playbook: str | None = None
    """The playbook's id; None for a plan the model drafted."""
    plan: Plan
    intent: str = ""
    run_id: str | None = None
    """The run awaiting approval, once the plan was shown."""
    planning_run_id: str | None = None
    """The run opened in ``planning`` when Hans first asked; the plan, once shown, fills it."""
    project_id: str | None = None
    """The project the user chose for the plan, in a conversation with no project in focus."""
    site: str | None = None
    """``workspace`` once the user chose to draft in Hansa's workspace because the
    project's site is not connected."""
    pending: str | None = None
    """The context question waiting for an answer (``project`` or ``site``), asked before
    the plan's own requirements."""
    asked: dict[str, int] = Field(default_factory=dict)
    """How many times Hans asked for each requirement, by name: never a third time."""
