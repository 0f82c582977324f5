"""A task as a plan or an API caller proposes it (a draft), the laws' verdict on drafts, and
the task a judged draft becomes (its parameters' secrets sealed)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection

from hansa.domain import run, secrets
from hansa.domain.base import new_id
from hansa.domain.plan import Plan
from hansa.engine import laws
from hansa.engine.runs.judge import Judge
from hansa.engine.runtime.services import Services
from hansa.store.secrets import SecretBox


@dataclass(frozen=True)
class TaskDraft:
    """A task as a plan or an API caller proposes it."""

    step_group: str
    task_type: str
    parameters: dict[str, Any]
    created_by: str
    summary: str
    sequence_order: int = 0
    project_id: str | None = None
    ref: str | None = None
    node_id: str | None = None
    """The graph node it stands for (a graph's task); None for a plan's step."""
    after: tuple[str, ...] | None = None
    """The nodes it depends on, by node id; None: the step group before its own."""
    when: tuple[tuple[str, str], ...] = ()
    """``(node, branch)``: the branch each ``condition`` it depends on must take."""


def default_summary(task_type: str, parameters: dict[str, Any]) -> str:
    """A readable summary when the caller gave none: the type and what it acts on (masked:
    it titles the run, which every surface shows as written)."""
    for key in ("title", "name", "url", "pageId", "entityId", "seconds"):
        if key in parameters:
            return secrets.mask_text(f"{task_type.replace('_', ' ')}: {parameters[key]}")
    return task_type.replace("_", " ")


def drafts_from_plan(plan: Plan, project_id: str | None) -> list[TaskDraft]:
    """One draft per plan step, in stage order."""
    return [
        TaskDraft(
            step_group=stage.group,
            task_type=step.task_type,
            parameters=step.parameters,
            created_by=step.owner,
            summary=step.summary,
            sequence_order=i,
            project_id=step.project_id or project_id,
            ref=step.ref,
        )
        for stage in plan.stages
        for i, step in enumerate(stage.steps)
    ]


def judge_drafts(
    services: Services, conn: Connection, tenant_id: str, drafts: list[TaskDraft]
) -> list[laws.Verdict]:
    """The laws' verdict on each draft, at plan time (step references allowed)."""
    judge = Judge(services, conn, tenant_id)
    return [
        judge.task(d.task_type, d.parameters, d.created_by, d.project_id, resolved=False).verdict
        for d in drafts
    ]


def new_task(
    r: run.Run,
    draft: TaskDraft,
    verdict: laws.Verdict,
    now: datetime,
    box: SecretBox,
    ids: Mapping[str, str] | None = None,
) -> run.Task:
    """Run ``r``'s new open task from ``draft`` as the laws judged it (secrets sealed);
    ``ids`` gives a graph's tasks their ids by node, for the dependencies to name."""
    ids = ids or {}
    metadata: dict[str, Any] = {"ref": draft.ref, "lawChecks": verdict.checks}
    if draft.when:
        metadata["when"] = {ids[node]: branch for node, branch in draft.when}
    return run.Task(
        id=ids[draft.node_id] if draft.node_id is not None else new_id(),
        run_id=r.id,
        conversation_id=r.conversation_id,
        project_id=draft.project_id,
        parent_task_id=None,
        step_group=draft.step_group,
        sequence_order=draft.sequence_order,
        created_by=draft.created_by,
        status=run.TaskStatus.OPEN,
        task_type=draft.task_type,
        parameters=box.seal(draft.parameters),
        summary=secrets.mask_text(draft.summary),
        is_reversible_by_system=verdict.reversible,
        irreversible_confirmed_at=None,
        confirmed_hash=None,
        attempts=0,
        scheduled_at=None,
        result=None,
        error=None,
        created_at=now,
        updated_at=now,
        metadata=metadata,
        node_id=draft.node_id,
        depends_on=None if draft.after is None else [ids[node] for node in draft.after],
    )
