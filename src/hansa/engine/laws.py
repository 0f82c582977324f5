"""The four assistant laws, in code (DESIGN.md). Applied at plan time and again before execution.

- allowed scope: the project allows the task type and the owning agent holds its capability;
- clarity: parameters validate; missing ones are named, never guessed;
- transparency: every verdict becomes an event or a message (callers record them);
- no return: an irreversible task needs a confirmation bound to its exact parameters.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ValidationError

from hansa import errors
from hansa.domain.agent import AgentDefinition
from hansa.domain.project import ProjectContext
from hansa.domain.service import Service
from hansa.engine import templates
from hansa.tasks.base import ANY_AGENT, Judging, TaskType
from hansa.tasks.registry import TaskRegistry


class Law(StrEnum):
    """The laws, by the names the user reads."""

    ALLOWED_SCOPE = "allowed_scope"
    CLARITY = "clarity"
    TRANSPARENCY = "transparency"
    NO_RETURN = "no_return"


LAW_NAMES = {
    Law.ALLOWED_SCOPE: "the law of allowed scope",
    Law.CLARITY: "the law of clarity",
    Law.TRANSPARENCY: "the law of transparency",
    Law.NO_RETURN: "the law of no return",
}


@dataclass(frozen=True)
class Verdict:
    """The laws' view of one task: may it run, and what does it need first."""

    task_type: str
    reversible: bool
    scope_refusal: str | None = None
    missing: tuple[str, ...] = ()
    invalid: tuple[str, ...] = ()
    params: BaseModel | None = None
    checks: list[dict[str, Any]] = field(default_factory=list)

    def raise_for_refusal(self) -> None:
        """Raise the API error that names the law (scope 403-style, clarity 422)."""
        if self.scope_refusal is not None:
            raise ScopeDenied(self.scope_refusal)
        if self.missing:
            raise MissingParameters(self.task_type, self.missing)
        if self.invalid:
            raise errors.InvalidInput(
                f"{LAW_NAMES[Law.CLARITY]} stops this task: {'; '.join(self.invalid)}",
                details={"law": Law.CLARITY.value, "invalid": list(self.invalid)},
            )


class MissingParameters(errors.InvalidInput):
    """The law of clarity: required parameters are missing (never guessed)."""

    code = "missing_parameters"

    def __init__(self, task_type: str, missing: tuple[str, ...]) -> None:
        super().__init__(
            f"{LAW_NAMES[Law.CLARITY]} stops {task_type!r}: missing {', '.join(missing)}",
            details={"law": Law.CLARITY.value, "missing": list(missing), "taskType": task_type},
        )


class ScopeDenied(errors.UserError):
    """The law of allowed scope refuses the task."""

    code = "scope_denied"
    status = 403

    def __init__(self, message: str) -> None:
        super().__init__(message, details={"law": Law.ALLOWED_SCOPE.value})


def holds(agent: AgentDefinition, task_type: TaskType[Any]) -> bool:
    """Whether ``agent`` has the capability ``task_type`` needs (``ANY_AGENT``: everyone)."""
    return task_type.capability in (ANY_AGENT, *agent.capabilities)


def scope_refusal(
    task_type: TaskType[Any], agent: AgentDefinition, project: ProjectContext
) -> str | None:
    """Why the law of allowed scope refuses, or None."""
    allowed = project.allowed_task_types
    if allowed is not None and task_type.name not in allowed:
        where = project.project_name or project.project_id or "this project"
        return (
            f"{LAW_NAMES[Law.ALLOWED_SCOPE]}: {where} does not allow the task type "
            f"{task_type.name!r}"
        )
    if not holds(agent, task_type):
        return (
            f"{LAW_NAMES[Law.ALLOWED_SCOPE]}: {agent.display_name} does not have the "
            f"{task_type.capability!r} capability that {task_type.name!r} needs"
        )
    return None


def placeholders(parameters: dict[str, Any]) -> dict[str, Any]:
    """Parameters with step references replaced by a stand-in, for plan-time validation."""
    return templates.mask(parameters, "ref")


def judge(
    registry: TaskRegistry,
    task_type_name: str,
    parameters: dict[str, Any],
    agent: AgentDefinition,
    project: ProjectContext,
    *,
    resolved: bool = True,
    trusted: frozenset[tuple[str, int]] = frozenset(),
    service: Callable[[str], Service | None] | None = None,
) -> Verdict:
    """Scope, clarity and reversibility of one task; ``resolved`` False allows step refs.

    ``trusted`` names the outbound targets the operator vetted (``HANSA_OUTBOUND_ALLOW``):
    a step that may send to any other is irreversible. ``service`` finds the tenant's
    named services: a call to one is unattended where the service allows its method.
    """
    task_type = registry.get(task_type_name)
    refusal = scope_refusal(task_type, agent, project)
    candidate = parameters if resolved else placeholders(parameters)
    missing: list[str] = []
    invalid: list[str] = []
    params: BaseModel | None = None
    try:
        params = task_type.params.model_validate(candidate)
    except ValidationError as exc:
        for problem in exc.errors():
            where = ".".join(str(x) for x in problem["loc"]) or "parameters"
            if problem["type"] == "missing":
                missing.append(where)
            else:
                invalid.append(f"{where}: {problem['msg']}")
    judging = Judging(parameters, trusted, project.config)
    if service is not None:
        judging = dataclasses.replace(judging, service=service)
    if params is not None and task_type.problems is not None:
        invalid.extend(task_type.problems(params, judging))
    reversible = (
        task_type.reversible(params, judging)
        if params is not None
        else task_type.is_reversible_by_system
    )
    checks = [
        {"law": Law.ALLOWED_SCOPE.value, "ok": refusal is None, "reason": refusal or "allowed"},
        {
            "law": Law.CLARITY.value,
            "ok": not missing and not invalid,
            "reason": "parameters complete"
            if not (missing or invalid)
            else "; ".join([*(f"missing {m}" for m in missing), *invalid]),
        },
        {
            "law": Law.NO_RETURN.value,
            "ok": True,
            "reason": "reversible" if reversible else "irreversible: needs your confirmation",
        },
    ]
    return Verdict(
        task_type=task_type.name,
        reversible=reversible,
        scope_refusal=refusal,
        missing=tuple(missing),
        invalid=tuple(invalid),
        params=params,
        checks=checks,
    )


def resolve_refs(parameters: dict[str, Any], outputs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Fill ``{{ref.field}}`` (``{{copy.html}}``: the ``html`` field of the result of the
    step whose ref is ``copy``) from earlier results, through :mod:`hansa.engine.templates`;
    a missing one is a clarity failure (:class:`templates.MissingVariable`)."""
    return templates.render_value(parameters, templates.Scope(results=outputs))
