"""A graph's ``parallel`` nodes (``Flow.FORK``): ``any`` races, ``settle`` outcomes, timeouts.

A ``parallel`` node is a fork: it completes at once, and its children (the tasks that
depend on it) run side by side. What its strategy asks is enforced here, by the scheduler,
on the run's book:

- ``any``: once one child completed, the others lose: an open or waiting one is
  skipped, a running one is cancelled (the run job cuts its execution);
- ``settle``: a child's failure fails neither the run nor what comes after it;
- ``timeout`` (ms): at the fork's time plus the timeout, the children not yet final are
  stopped: failed under ``all`` and ``any`` (the run fails), cancelled under ``settle``.

The fork's result as later templates read it (``{{race.result…}}``) is what its children
came to: ``any`` the winner's result and ``winner`` (its node id); ``settle``
``{successes: [{node, result}], errors: [{node, error}]}``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from hansa.domain import run

_LOSES = {
    run.TaskStatus.OPEN: run.TaskStatus.SKIPPED,
    run.TaskStatus.AWAITING_CONFIRMATION: run.TaskStatus.CANCELLED,
    run.TaskStatus.IN_PROGRESS: run.TaskStatus.CANCELLED,
}


@dataclass(frozen=True)
class Fork:
    """A completed ``parallel`` task and the children its strategy governs."""

    task: run.Task
    strategy: str
    children: list[run.Task]
    deadline: datetime | None

    @property
    def node(self) -> str:
        return self.task.node_id or self.task.id


def forks(tasks: dict[str, run.Task], children: dict[str, list[str]]) -> list[Fork]:
    """The completed ``parallel`` tasks among ``children``'s keys (a parallel task's id →
    its children's ids), with their children as they stand."""
    found = []
    for fork_id, kids in children.items():
        t = tasks[fork_id]
        if t.status is not run.TaskStatus.COMPLETED:
            continue
        timeout = t.parameters.get("timeout")
        deadline = t.updated_at + timedelta(milliseconds=timeout) if timeout else None
        strategy = str(t.parameters.get("strategy", "all"))
        found.append(Fork(t, strategy, [tasks[c] for c in kids], deadline))
    return found


def settled(found: list[Fork]) -> set[str]:
    """The tasks whose failure a ``settle`` fork absorbs."""
    return {c.id for f in found if f.strategy == "settle" for c in f.children}


def deadlines(found: list[Fork]) -> dict[str, datetime]:
    """When each fork with a timeout and children still going must be decided."""
    return {
        f.task.id: f.deadline
        for f in found
        if f.deadline is not None and any(c.status not in run.TASK_FINAL for c in f.children)
    }


def losers(found: list[Fork], now: datetime) -> list[tuple[run.Task, run.TaskStatus, str]]:
    """The children to stop now, with the status each goes to and why."""
    stop: list[tuple[run.Task, run.TaskStatus, str]] = []
    for f in found:
        going = [c for c in f.children if c.status in _LOSES]
        if not going:
            continue
        if f.strategy == "any" and any(c.status is run.TaskStatus.COMPLETED for c in f.children):
            why = f"another branch of {f.node} finished first"
            stop += [(c, _LOSES[c.status], why) for c in going]
        elif f.deadline is not None and now >= f.deadline:
            ms = f.task.parameters.get("timeout")
            why = f"{f.node} timed out after {ms} ms"
            for c in going:  # consent asked for cannot fail: it is withdrawn
                cancel = f.strategy == "settle" or c.status is run.TaskStatus.AWAITING_CONFIRMATION
                stop.append((c, run.TaskStatus.CANCELLED if cancel else run.TaskStatus.FAILED, why))
    return stop


def results(found: list[Fork]) -> dict[str, Any]:
    """The forks' results as templates read them, by node id and task id."""
    out: dict[str, Any] = {}
    for f in found:
        if f.strategy == "any":
            won = [c for c in f.children if c.status is run.TaskStatus.COMPLETED]
            value: dict[str, Any] = {"strategy": "any", "winner": None}
            if won:
                first = min(won, key=lambda c: c.updated_at)
                value = {**(first.result or {}), "winner": first.node_id or first.id}
        elif f.strategy == "settle":
            value = {
                "successes": [
                    {"node": c.node_id or c.id, "result": c.result}
                    for c in f.children
                    if c.status is run.TaskStatus.COMPLETED
                ],
                "errors": [
                    {"node": c.node_id or c.id, "error": c.error}
                    for c in f.children
                    if c.status in (run.TaskStatus.FAILED, run.TaskStatus.CANCELLED)
                ],
            }
        else:
            continue
        out[f.task.id] = out[f.node] = value
    return out
