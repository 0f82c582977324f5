"""What a run tells the user as it goes (seed 000 §4.3, §9.2): status chips and timeline
sentences, written from templates and the run's own data, never by a model.

Chips, at the moments the seed names:

- a run of several steps is stored: "Run created: <title>";
- its steps are queued (approval): "Task created and queued: <summary>", or one chip
  "<n> tasks created and queued" for a plan's many steps;
- an agent starts its first step of the run: "<Display name> is joining this run" (one chip
  for the agents a step group brings in together; Hans, who runs the run, never joins it);
- the run completes: "All tasks in this run are completed" (or how many were done when
  some were cancelled or skipped).

A one-step run (the execute route, a rule's action, a tool call held for consent) says only
that its task was created and queued: its task's own status tells the rest.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from hansa.domain import run
from hansa.engine.runs.change import RunChange
from hansa.store import runs
from hansa.tasks.registry import TaskRegistry

_STARTED = (run.TaskStatus.IN_PROGRESS, run.TaskStatus.AWAITING_CONFIRMATION)


def created(change: RunChange, r: run.Run, tasks: list[run.Task]) -> None:
    """The chip for a run just stored (a run of several steps)."""
    if len(tasks) > 1:
        change.batch.status(f"Run created: {r.title}", agent_id=r.created_by)


def queued(change: RunChange) -> None:
    """The chip for a run's steps queued on its approval."""
    tasks = runs.tasks_of(change.conn, change.run_id)
    waiting = [t for t in tasks if t.status is run.TaskStatus.OPEN]
    if not waiting:
        return
    hans = change.services.supervisor.id
    if len(tasks) == 1:
        change.batch.status(f"Task created and queued: {waiting[0].summary}", agent_id=hans)
    else:
        change.batch.status(f"{len(waiting)} tasks created and queued", agent_id=hans)


def _took_part(task: run.Task) -> bool:
    return (
        task.attempts > 0 or task.status in _STARTED or task.irreversible_confirmed_at is not None
    )


class Joining:
    """Who joins a run in one pass of the scheduler: taken before the pass starts tasks
    (:meth:`say` is told which it started), said where the pass began, so the chip comes
    before anything the newcomers' steps add."""

    def __init__(self, change: RunChange, tasks: Mapping[str, run.Task]) -> None:
        self.change = change
        self.mark = len(change.batch.items)
        self.before = {t.id: t.status for t in tasks.values()}
        self.known = {t.created_by for t in tasks.values() if _took_part(t)}
        self.known.add(change.services.supervisor.id)
        self.single = len(tasks) <= 1

    def say(self, tasks: Mapping[str, run.Task], started: list[run.Task]) -> None:
        """Name the agents whose first step of the run starts in this pass (``started``,
        and the steps the pass moved to wait for the user's confirmation)."""
        if self.single:
            return
        held = [
            t
            for t in tasks.values()
            if t.status is run.TaskStatus.AWAITING_CONFIRMATION
            and self.before.get(t.id) is run.TaskStatus.OPEN
        ]
        services = self.change.services
        newcomers = {t.created_by for t in [*started, *held]} - self.known
        if not newcomers:
            return
        conn, tenant = self.change.conn, self.change.tenant_id
        names = sorted(services.agents.display_name(conn, tenant, a) for a in newcomers)
        text = " and ".join(names) + (" are" if len(names) > 1 else " is") + " joining this run"
        batch = self.change.batch
        said = dataclasses.replace(batch, items=[], steps=[], committed=[], rolled_back=[])
        said.status(text, agent_id=services.supervisor.id)
        batch.items[self.mark : self.mark] = said.items


def finished(change: RunChange, final: run.RunStatus, tasks: list[run.Task]) -> None:
    """The chip for a run of several steps that completed."""
    if final is not run.RunStatus.COMPLETED or len(tasks) <= 1:
        return
    done = [t for t in tasks if t.status is run.TaskStatus.COMPLETED]
    hans = change.services.supervisor.id
    if len(done) == len(tasks):
        change.batch.status("All tasks in this run are completed", agent_id=hans)
        return
    left = len(tasks) - len(done)
    change.batch.status(
        f"The run is completed: {len(done)} of {len(tasks)} tasks done, "
        f"{left} cancelled or skipped",
        agent_id=hans,
    )


def task_outcome(
    registry: TaskRegistry,
    task_type: str,
    status: str,
    result: Mapping[str, Any] | None,
    summary: str | None = None,
    *,
    previous: str | None = None,
) -> str:
    """A task's status change as the timeline tells it: what happened, from the task's type
    and result ("Page created in WordPress at https://…", "create_page failed: …"); a
    completed task as its type describes it (``TaskType.describe``)."""
    r: Mapping[str, Any] = result or {}
    if status == "completed":
        describe = registry.get(task_type).describe if task_type in registry else None
        told = describe(r) if describe is not None else None
        return told or f"{task_type} completed" + (f": {summary}" if summary else "")
    if status == "failed":
        error = r.get("error")
        reason = error.get("message") if isinstance(error, Mapping) else None
        return f"{task_type} failed: {reason}" if reason else f"{task_type} failed"
    if status == "open" and previous == "awaiting_confirmation":
        return f"{task_type} was confirmed and will run"
    return {
        "in_progress": f"{task_type} started",
        "open": f"{task_type} will run again",
        "awaiting_confirmation": f"{task_type} waits for your confirmation",
        "cancelled": f"{task_type} was cancelled",
        "skipped": f"{task_type} was skipped (a branch not taken)",
        "ambiguous": f"{task_type} may or may not have happened: please check",
        "undone": f"{task_type} was undone",
    }.get(status, f"{task_type}: {status.replace('_', ' ')}")
