"""What a graph's task needs as it starts: its templates' scope, and a ``wait`` held.

A graph's task (one with a ``node_id``) fills its templates from the run's inputs
(``message``, ``user``, ``context``: ``POST /api/graphs/{id}/runs``'s ``inputs``), the
results of the nodes before it (by node id) and ``llmResponse``, the text of the last
``llm.invoke`` that completed before it. A plan's step keeps its refs (results only).

A ``wait`` node does not sleep in an executor: the first time it would start, it goes back
to ``open`` with a due time (``scheduled_at``), like a retry's backoff, which the store
keeps; once due it completes. The run job, with nothing else to do, hands a long wait to
the queue (a run job due then), so a waiting run holds no worker.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from pydantic import BaseModel

from hansa.domain import conversation, message, run
from hansa.engine import templates
from hansa.engine.runs import forks
from hansa.engine.runs.scheduler import Book
from hansa.store import conversations, runs
from hansa.tasks.base import TaskFailed
from hansa.tasks.builtin.graph_nodes import PURE, WAIT

HOLD_IN_PLACE = timedelta(seconds=5)
"""A run job with nothing but waits due sooner than this sleeps; a later one is queued."""


def scope(
    book: Book, r: run.Run, task: run.Task, outputs: dict[str, dict[str, Any]]
) -> templates.Scope:
    """The names a graph's task may reference (``outputs``: the book's, as read once)."""
    inputs: dict[str, Any] = r.metadata.get("inputs") or {}
    answered = sorted(
        (t for t in book.tasks.values() if t.task_type == "llm.invoke" and t.result),
        key=lambda t: t.updated_at,
    )
    done = [t for t in answered if t.status is run.TaskStatus.COMPLETED and t.id != task.id]
    return templates.Scope(
        message=_mapping(inputs.get("message")),
        user=_mapping(inputs.get("user")),
        context=_mapping(inputs.get("context")),
        results={**outputs, **forks.results(book.forks_now())},
        llm_response=(done[-1].result or {}).get("text") if done else None,
        loop=task.metadata.get("loop") or {},
    )


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def holds(book: Book, task: run.Task, seconds: float) -> bool:
    """Hold a ``wait`` the first time it would start (True); once due, it runs (False)."""
    if task.task_type != WAIT or task.attempts:
        return False
    due = book.change.now + timedelta(seconds=seconds)
    book.move(task.id, run.TaskStatus.IN_PROGRESS, attempt=True, announce=True)
    book.move(task.id, run.TaskStatus.OPEN, not_before=due, announce=True)
    book.change.batch.thinking(
        f"Waiting {seconds:g} s before going on",
        agent_id=task.created_by,
        phase=message.Phase.EXECUTION,
        group=task.step_group,
    )
    return True


def change_conversation(book: Book, changes: list[dict[str, Any]]) -> str | None:
    """Make the changes a step asked for (``context.update``, ``state.transition``,
    ``handoff.create``) in the transaction that records its result; why not, when the
    conversation's state may not move so (then nothing is changed)."""
    if not changes:
        return None
    change = book.change
    conn, tenant, now = change.conn, change.tenant_id, change.now
    cid = runs.get(conn, tenant, change.run_id).conversation_id
    for asked in changes:  # one node asks for one change
        if "handoff" in asked:
            opener = change.services.open_handoff
            if opener is None:
                return "this process cannot hand a conversation to a person"
            wanted = asked["handoff"]
            reason, priority = str(wanted["reason"]), str(wanted["priority"])
            opener(change.services, tenant, cid, reason, priority, change.batch)(conn)
            book.paused = True  # the handoff paused the conversation's runs, this one too
        if "state" in asked:
            target = conversation.State(asked["state"])
            if not conversations.move(conn, tenant, cid, target, now, strict=False):
                return f"the conversation cannot move to {target.value} from where it is"
        if "context" in asked:
            current = conversations.get(conn, tenant, cid)
            merged = {**current.context, **asked["context"]}
            conversations.set_context(conn, tenant, cid, merged, now)
    return None


def settle_pure(book: Book, task: run.Task, params: BaseModel) -> bool:
    """Complete a pure node (``condition``, ``parallel``) as it starts, in the transaction
    that starts it (True): it reads nothing outside and changes nothing, so it needs no
    execution of its own, and a chain of them is decided in one step. Its failure (a
    condition comparing a number to a word) fails it the same way."""
    decide = PURE.get(task.task_type)
    if decide is None:
        return False
    try:
        result = decide(params)
    except TaskFailed as exc:
        error = {"error": {"code": exc.code, "message": exc.message}}
        book.move(task.id, run.TaskStatus.FAILED, error=exc.message, result=error, announce=True)
        return True
    book.move(task.id, run.TaskStatus.COMPLETED, result=result, announce=True)
    return True
