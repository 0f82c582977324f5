"""Playbooks: declarative plan templates per intent, loaded from TOML (data, not code)."""

from __future__ import annotations

import re
import time
import tomllib
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import regex
from pydantic import BaseModel, Field, ValidationError

from hansa import errors
from hansa.domain.plan import Fork, Plan, PlanStage, PlanStep, Requirement
from hansa.engine.planning import restate
from hansa.engine.text import MATCH_TIMEOUT_SECONDS, map_strings

_VAR = re.compile(r"\$\{(\w+)\}")


SEARCH_BUDGET_SECONDS = 0.02
"""What one message's playbook searches may take in all (the triggers of every playbook,
or one playbook's extractors), in CPU time of the thread that searches: they run on the
event loop, and a hostile message made each trigger use its whole time box in turn
(security review 2026-11-27, H1). CPU time, not wall time: a busy machine that preempts
the loop between two searches must not make an ordinary message find nothing."""
SEARCH_GRACE_SECONDS = 0.02
"""How far the last search may run past the budget (its wall-clock time box): a search
of ordinary text takes microseconds, so this is only ever spent by a preempted one."""


@lru_cache(maxsize=512)
def pattern(source: str, flags: int = 0) -> regex.Pattern[str]:
    """A playbook's trigger or extractor, compiled once (``regex``'s own cache is shared
    with every rule's patterns, and a search through it costs more than the match)."""
    return regex.compile(source, flags)


class Searches:
    """Pattern searches sharing one time budget: a search that would pass it finds
    nothing. Compiling a pattern (once per process) is not counted; the searches are, so
    one message's searches hold the loop for at most the budget plus the grace."""

    def __init__(self, seconds: float = SEARCH_BUDGET_SECONDS) -> None:
        self.deadline = time.thread_time() + seconds

    def search(self, source: str, text: str, flags: int = 0) -> regex.Match[str] | None:
        """The first match of ``source`` in ``text``, if found within the budget."""
        compiled = pattern(source, flags)
        left = self.deadline - time.thread_time()
        if left <= 0:
            return None
        try:
            return compiled.search(
                text, timeout=min(left + SEARCH_GRACE_SECONDS, MATCH_TIMEOUT_SECONDS)
            )
        except TimeoutError:
            return None


class RequirementSpec(BaseModel):
    """How a playbook gets one input: its question, labels, extractors, derivation."""

    name: str
    label: str
    question: str
    aliases: list[str] = Field(default_factory=list)
    extract: list[str] = Field(default_factory=list)
    derive: str | None = None
    """``slug:<other>`` derives a URL slug from another requirement."""
    fork: bool = False
    """The value is the id of one of the playbook's forks."""
    default: str | None = None
    """What Hans goes on with when asked twice without a usable answer (``${name}``: another
    requirement's value, ``${project}``). A fork's default is its first option; a
    requirement without one (a page to delete, a price) has no sensible default."""


class StepSpec(BaseModel):
    """A step template."""

    ref: str
    owner: str
    task_type: str
    summary: str
    parameters: dict[str, Any]


class StageSpec(BaseModel):
    """A step group template."""

    group: str
    title: str
    steps: list[StepSpec]


class Playbook(BaseModel):
    """A plan template for one intent."""

    id: str
    title: str
    intent: str
    triggers: list[str]
    changes: bool = True
    """Whether the plan changes the project's systems (an audit only reads)."""
    offer: str | None = None
    """How Hans names this kind of plan when he asks which kind a request is (``kinds``)."""
    requirements: list[RequirementSpec] = Field(default_factory=list)
    forks: list[Fork] = Field(default_factory=list)
    stages: list[StageSpec]

    def matches(self, text: str, searches: Searches | None = None) -> bool:
        """True when a trigger pattern matches ``text`` (within the budget of
        ``searches``)."""
        searches = searches or Searches()
        return any(searches.search(t, text, regex.IGNORECASE) for t in self.triggers)

    def steps(self) -> list[StepSpec]:
        """Every step template, in stage order."""
        return [step for stage in self.stages for step in stage.steps]

    def spec(self, name: str) -> RequirementSpec:
        """The requirement spec called ``name``."""
        return next(r for r in self.requirements if r.name == name)

    def default(self, name: str, plan: Plan, project_name: str) -> str | None:
        """The value Hans may go on with for requirement ``name``, or None if there is none
        (or it needs a value still missing)."""
        spec = self.spec(name)
        if spec.default is None:
            return self.forks[0].id if spec.fork and self.forks else None
        values = {r.name: r.value for r in plan.requirements if r.value}
        values["project"] = project_name
        unknown = [m.group(1) for m in _VAR.finditer(spec.default) if m.group(1) not in values]
        if unknown:
            return None
        return _VAR.sub(lambda m: str(values[m.group(1)]), spec.default)

    def new_plan(self) -> Plan:
        """A plan with every requirement still missing."""
        return Plan(
            intent="",
            playbook=self.id,
            requirements=[
                Requirement(name=r.name, label=r.label, question=r.question)
                for r in self.requirements
            ],
            forks=self.forks,
        )

    def render(self, plan: Plan, project_name: str, project_id: str | None) -> Plan:
        """Fill the templates with the requirement values: the plan's intent, title, stages."""
        values = {r.name: r.value or "" for r in plan.requirements}
        values["project"] = project_name
        layout = values.get("layout", "")
        fork = next((f for f in self.forks if f.id == layout), None)
        # a layout in the user's own words (no option fitted it) stands for itself
        values["layout_title"] = fork.title if fork else layout
        values["layout_description"] = (
            fork.description if fork else ("As the user described it." if layout else "")
        )

        def fill(value: Any) -> Any:
            return map_strings(
                value, lambda s: _VAR.sub(lambda m: values.get(m.group(1), m.group(0)), s)
            )

        def said(text: str) -> str:
            # a value not given yet is left out with its words: "…about ${topic}, on
            # ${channels}." reads "…about water filters." while the channels are unknown
            return restate.said(text, values)

        stages = [
            PlanStage(
                group=s.group,
                title=said(s.title),
                steps=[
                    PlanStep(
                        ref=st.ref,
                        owner=st.owner,
                        task_type=st.task_type,
                        summary=said(st.summary),
                        parameters=fill(st.parameters),
                        project_id=project_id,
                    )
                    for st in s.steps
                ],
            )
            for s in self.stages
        ]
        return plan.model_copy(
            update={"intent": said(self.intent), "title": said(self.title), "stages": stages}
        )


def load(path: Path) -> list[Playbook]:
    """Playbooks from a TOML file (``[[playbook]]`` tables)."""
    try:
        data = tomllib.loads(path.read_text())
        return [Playbook.model_validate(p) for p in data.get("playbook", [])]
    except (OSError, tomllib.TOMLDecodeError, ValidationError) as exc:
        raise errors.ConfigError(f"cannot read playbooks from {path}: {exc}") from exc


@cache
def builtin() -> tuple[Playbook, ...]:
    """The playbooks shipped with Hansa."""
    return tuple(load(Path(__file__).with_name("playbooks.toml")))


def find(text: str, playbooks: tuple[Playbook, ...] | None = None) -> Playbook | None:
    """The first playbook whose trigger matches (all of them searched within one budget)."""
    searches = Searches()
    return next((p for p in (playbooks or builtin()) if p.matches(text, searches)), None)
