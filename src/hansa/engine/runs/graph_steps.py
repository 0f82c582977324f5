"""What a graph's task needs as it starts and as it ends: its templates' scope, a ``wait``
held, a pure node settled, the conversation changed as its executor asked.

A graph's task (one with a ``node_id``) fills its templates from the run's inputs
(``message``, ``user``, ``context``: ``POST /api/graphs/{id}/runs``'s ``inputs``), the
results of the nodes before it (by node id) and ``llmResponse``, the text of the last
``llm.invoke`` (a type that ``answers``) that completed before it. A plan's step keeps its
refs (results only).

A held task (``TaskType.hold``: a ``wait`` node) does not sleep in an executor: the first
time it would start, it goes back to ``open`` with a due time (``scheduled_at``), like a
retry's backoff, which the store keeps; once due it completes. The run job, with nothing
else to do, hands a long wait to the queue (a run job due then), so a waiting run holds no
worker. Nothing here asks a task's type by its name: what a type does is said on it.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any, assert_never

from pydantic import BaseModel

from hansa.domain import message, run
from hansa.engine import templates
from hansa.engine.runs import forks
from hansa.engine.runs.scheduler import Book
from hansa.engine.runtime import agent_state_events
from hansa.store import conversations, runs
from hansa.tasks.base import (
    Change,
    MergeContext,
    MoveConversation,
    OpenHandoff,
    Result,
    TaskFailed,
)

HOLD_IN_PLACE = timedelta(seconds=5)
"""A run job with nothing but waits due sooner than this sleeps; a later one is queued."""


def scope(
    book: Book, r: run.Run, task: run.Task, outputs: dict[str, dict[str, Any]]
) -> templates.Scope:
    """The names a graph's task may reference (``outputs``: the book's, as read once)."""
    inputs: dict[str, Any] = r.metadata.get("inputs") or {}
    answered = sorted(
        (t for t in book.tasks.values() if t.result and (k := book.kind(t)) and k.answers),
        key=lambda t: t.updated_at,
    )
    done = [t for t in answered if t.status is run.TaskStatus.COMPLETED and t.id != task.id]
    return templates.Scope(
        message=_mapping(inputs.get("message")),
        user=_mapping(inputs.get("user")),
        context=_mapping(inputs.get("context")),
        project=_mapping(inputs.get("project")),
        results={**outputs, **forks.results(book.forks_now())},
        llm_response=(done[-1].result or {}).get("text") if done else None,
        loop=task.metadata.get("loop") or {},
    )


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def hold(book: Book, task: run.Task, wait: timedelta) -> None:
    """Hold a task for ``wait`` the first time it would start; once due, it runs."""
    due = book.change.now + wait
    book.move(task.id, run.TaskStatus.IN_PROGRESS, attempt=True, announce=True)
    book.move(task.id, run.TaskStatus.OPEN, not_before=due, announce=True)
    book.change.batch.thinking(
        f"Waiting {wait.total_seconds():g} s before going on",
        agent_id=task.created_by,
        phase=message.Phase.EXECUTION,
        group=task.step_group,
    )


def change_conversation(book: Book, changes: list[Change]) -> str | None:
    """Make the changes a step asked for in the transaction that records its result; why
    not, when one cannot be made (a move the state table refuses, no handoff opener in
    this process): the step then fails, and its one change is not made."""
    cid = runs.get(book.change.conn, book.change.tenant_id, book.change.run_id).conversation_id
    for asked in changes:  # one node asks for one change
        refused = _make(book, cid, asked)
        if refused is not None:
            return refused
    return None


def _make(book: Book, cid: str, asked: Change) -> str | None:
    change = book.change
    conn, tenant, now = change.conn, change.tenant_id, change.now
    match asked:
        case OpenHandoff(reason=reason, priority=priority):
            opener = change.services.open_handoff
            if opener is None:
                return "this process cannot hand a conversation to a person"
            opener(change.services, tenant, cid, reason, priority, change.batch)(conn)
        case MoveConversation(to=target):
            if not conversations.move(conn, tenant, cid, target, now, strict=False):
                return f"the conversation cannot move to {target.value} from where it is"
            agent_state_events.announce_cleared(conn, change.batch, tenant, cid, target)
        case MergeContext(values=values):
            current = conversations.get(conn, tenant, cid)
            merged = {**current.context, **values}
            limit = change.services.settings.max_conversation_context_bytes
            refused = templates.context_too_large(merged, limit)
            if refused is not None:
                return refused
            conversations.set_context(conn, tenant, cid, merged, now)
        case _:
            assert_never(asked)
    return None


def settle(
    book: Book, task: run.Task, decide: Callable[[Any], Result | None], params: BaseModel
) -> bool:
    """Complete a pure task (``TaskType.settle``: ``condition``, ``parallel``) as it
    starts, in the transaction that starts it: it reads nothing outside and changes
    nothing, so it needs no execution of its own, and a chain of them is decided in one
    step. Its failure (a condition comparing a number to a word) fails it the same way.
    False when ``decide`` declines (None: a condition's pattern tests, which run off the
    event loop): the task is then executed like any other."""
    try:
        result = decide(params)
    except TaskFailed as exc:
        error = {"error": {"code": exc.code, "message": exc.message}}
        book.move(task.id, run.TaskStatus.FAILED, error=exc.message, result=error, announce=True)
        return True
    if result is None:
        return False
    book.move(task.id, run.TaskStatus.COMPLETED, result=result, announce=True)
    return True
