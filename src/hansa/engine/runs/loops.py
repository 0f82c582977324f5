"""A graph's ``loop`` nodes (``Flow.LOOP``): their body once per item, in order.

A ``loop`` task completes with the collection it was given (``{items, count}``, at most
its ``maxIterations`` and ``MAX_LOOP_ITERATIONS``). The scheduler then materialises its
body, the tasks that depend on it, once per item: a copy of each (``parent_task_id`` the
body task, node id ``<body>[<i>]``) bound to the names its type ``binds`` (the loop's
``itemKey`` and ``indexKey``: ``metadata.loop``), each copy after the one before, so the
items go in order. The body task itself then depends on its copies and, once they are
done, completes without running, with ``{results: [...]}`` in order: the nodes after it
see the loop as done. The copies count towards the run's task cap; a loop that would pass
it fails.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hansa.domain import event, run
from hansa.domain.base import new_id
from hansa.store import runs
from hansa.tasks.base import Flow

if TYPE_CHECKING:
    from hansa.engine.runs.scheduler import Book

UNROLLED = "unrolled"
"""The metadata key that marks a loop whose body was materialised."""
BODY = "loopBody"
"""The metadata key that marks a body task: it completes from its copies, never runs."""


def materialise(book: Book, after: dict[str, list[str]], cap: int) -> None:
    """Add the copies of every completed loop's body not yet materialised."""
    for loop in [t for t in book.tasks.values() if _unrolled(book, t)]:
        _mark(book, loop)
        body = [t for t in book.tasks.values() if loop.id in after[t.id] and not _copy(t)]
        items: list[Any] = list((loop.result or {}).get("items") or [])
        if len(book.tasks) + len(items) * len(body) > cap:
            _too_many(book, loop, body, cap)
            continue
        keys = _binds(book, loop)
        for task in body:
            copies = _copies(book, loop, task, items, keys)
            runs.add_tasks(book.change.conn, book.change.tenant_id, copies)
            for c in copies:
                book.tasks[c.id] = c
                created = event.TaskCreatedData(
                    task_type=c.task_type, step_group=c.step_group, summary=c.summary
                )
                book.change.batch.event(created, agent_id=c.created_by, task_id=c.id)
            waits = [*(task.depends_on or []), *(c.id for c in copies)]
            meta = {**task.metadata, BODY: [c.id for c in copies]}
            runs.update_task(
                book.change.conn, task.id, book.change.now, depends_on=waits, metadata=meta
            )
            book.tasks[task.id] = task.model_copy(update={"depends_on": waits, "metadata": meta})


def _unrolled(book: Book, t: run.Task) -> bool:
    """A completed loop whose body has not been materialised yet."""
    return (
        t.status is run.TaskStatus.COMPLETED
        and not t.metadata.get(UNROLLED)
        and (kind := book.kind(t)) is not None
        and kind.flow is Flow.LOOP
    )


def _binds(book: Book, loop: run.Task) -> tuple[str, ...]:
    """The names the loop's type binds for each copy: its item's, then its index's."""
    kind = book.kind(loop)
    if kind is None or kind.binds is None:
        return ()
    return tuple(kind.binds(kind.params.model_validate(loop.parameters)))


def _mark(book: Book, loop: run.Task) -> None:
    meta = {**loop.metadata, UNROLLED: True}
    runs.update_task(book.change.conn, loop.id, book.change.now, metadata=meta)
    book.tasks[loop.id] = loop.model_copy(update={"metadata": meta})


def _copy(t: run.Task) -> bool:
    return t.metadata.get("loopOf") is not None


def _copies(
    book: Book, loop: run.Task, task: run.Task, items: list[Any], keys: tuple[str, ...]
) -> list[run.Task]:
    now, made = book.change.now, []
    previous: str | None = None
    for i, item in enumerate(items):
        bound = dict(zip(keys, (item, i), strict=False))  # the item's name, the index's
        node = f"{task.node_id}[{i}]"
        copy = task.model_copy(
            update={
                "id": new_id(),
                "parent_task_id": task.id,
                "node_id": node,
                "depends_on": [loop.id] + ([previous] if previous else []),
                "summary": f"{node} ({task.task_type})",
                "metadata": {**task.metadata, "ref": node, "loopOf": loop.id, "loop": bound},
                "created_at": now,
                "updated_at": now,
            }
        )
        previous = copy.id
        made.append(copy)
    return made


def _too_many(book: Book, loop: run.Task, body: list[run.Task], cap: int) -> None:
    why = f"the loop's body would pass the run's cap of {cap} tasks"
    for task in body:
        if task.status is run.TaskStatus.OPEN:
            book.move(task.id, run.TaskStatus.FAILED, error=why, announce=True)


def body_result(book: Book, task: run.Task) -> dict[str, Any] | None:
    """A body task's result from its copies, once it is ready; None for any other task."""
    copies = task.metadata.get(BODY)
    if copies is None:
        return None
    return {"results": [book.tasks[c].result for c in copies]}
