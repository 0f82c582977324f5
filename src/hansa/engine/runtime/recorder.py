"""Writes what the user sees: messages and the events announcing them, in one transaction.

A ``Batch`` is one transaction's unit of work: its *steps* (state changes, checked
and applied in order), then the messages and events they and the caller added.
``Recorder.write`` commits it after checking the job's lease, rings the bus, and
only then runs the batch's after-commit hooks (or, if it rolled back, its
rollback hooks). What a step returns comes back as a ``Later``: readable once the
batch has committed, never before (a value from a transaction that may still roll back
is no value).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar, cast

from sqlalchemy import Connection

from hansa.domain import event, message
from hansa.domain.base import new_id
from hansa.domain.event import Payload
from hansa.domain.job import Job
from hansa.domain.message import Phase
from hansa.engine.runtime.faults import stop_point
from hansa.engine.runtime.services import Services
from hansa.store import events, messages, queue, webhooks

T = TypeVar("T")

Step = Callable[[Connection], object]
"""Work for the batch's transaction, run before its events are appended: it may read,
change state, and add messages and events to the batch."""

_UNSET: Any = object()


class NotCommitted(RuntimeError):
    """A ``Later`` was read before its batch committed."""


class Later(Generic[T]):
    """What a batch's step returned, for the code that added the step: readable once the
    batch has committed (``value`` raises ``NotCommitted`` before, and after a rollback)."""

    __slots__ = ("_committed", "_got")

    def __init__(self) -> None:
        self._got: Any = _UNSET
        self._committed = False

    @property
    def value(self) -> T:
        """The step's result; only after the commit."""
        if not self._committed or self._got is _UNSET:
            raise NotCommitted("the step's batch has not committed")
        return cast("T", self._got)


Hook = Callable[[], None]
"""Work for after the transaction: a hand-over that must not happen unless it commits."""


@dataclass(frozen=True, slots=True)
class _PendingMessage:
    id: str
    kind: message.Kind
    author: message.Author
    agent_id: str | None
    content: str
    metadata: dict[str, Any]


@dataclass
class Batch:
    """Messages and events to commit together, in order."""

    conversation_id: str
    turn_id: str | None
    run_id: str | None = None
    items: list[tuple[events.NewEvent, _PendingMessage | None]] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    committed: list[Hook] = field(default_factory=list)
    rolled_back: list[Hook] = field(default_factory=list)
    laters: list[Later[Any]] = field(default_factory=list)
    """What the steps will have returned, made readable by the commit."""
    closing: list[Step] = field(default_factory=list)
    """Steps run once the events and messages are written (see ``last``)."""

    def then(self, step: Callable[[Connection], T]) -> Later[T]:
        """Run ``step`` in this batch's transaction, after the steps added before it; what it
        returns is the ``Later``'s value once the batch has committed."""
        return self._later(step, self.steps)

    def last(self, step: Callable[[Connection], T]) -> Later[T]:
        """Run ``step`` at the end of this batch's transaction, after its events and messages
        are written: a read of what it commits (a run's card) without a transaction of its
        own (on PostgreSQL, a commit and its round trips fewer; decision 0028)."""
        return self._later(step, self.closing)

    def _later(self, step: Callable[[Connection], T], into: list[Step]) -> Later[T]:
        later: Later[T] = Later()

        def run(conn: Connection) -> None:
            later._got = step(conn)

        into.append(run)
        self.laters.append(later)
        return later

    def after_commit(self, hook: Hook, *, or_else: Hook | None = None) -> None:
        """Run ``hook`` once the transaction committed (``or_else`` if it rolled back)."""
        self.committed.append(hook)
        if or_else is not None:
            self.rolled_back.append(or_else)

    def for_run(self, run_id: str) -> Batch:
        """The same batch, its further events tagged with ``run_id``."""
        return dataclasses.replace(self, run_id=run_id)

    def put_first(self, other: Batch) -> None:
        """Move ``other``'s events ahead of this batch's own (they happened before)."""
        self.items[:0] = other.items

    def extend(self, other: Batch) -> None:
        """Add ``other``'s events after this batch's own (they happened since)."""
        self.items.extend(other.items)

    def event(
        self, payload: event.Payload, *, agent_id: str | None = None, task_id: str | None = None
    ) -> None:
        """Add an event that announces no message."""
        self.items.append((self._new(payload, agent_id, task_id), None))

    def message(
        self,
        kind: message.Kind,
        author: message.Author,
        content: str,
        *,
        agent_id: str | None,
        metadata: dict[str, Any] | None = None,
        message_id: str | None = None,
    ) -> str:
        """Add a message and the event that announces it; returns the message id."""
        msg_id = message_id or new_id()
        payload: event.Payload
        if kind is message.Kind.STATUS:
            payload = event.StatusData(message_id=msg_id, text=content)
        elif kind is message.Kind.THINKING:
            meta = metadata or {}
            payload = event.ThinkingData(
                message_id=msg_id,
                summary=content,
                phase=message.Phase(meta["phase"]),
                group=meta.get("group"),
            )
        else:
            payload = event.MessageData(
                message_id=msg_id, kind=kind, author=author, content=content
            )
        msg = _PendingMessage(msg_id, kind, author, agent_id, content, metadata or {})
        self.items.append((self._new(payload, agent_id), msg))
        return msg_id

    def thinking(
        self, summary: str, *, agent_id: str, phase: Phase, group: str | None = None
    ) -> None:
        """Add a safe, short thinking entry written from a template."""
        meta: dict[str, Any] = {"phase": phase.value}
        if group is not None:
            meta["group"] = group
        self.message(
            message.Kind.THINKING,
            message.Author.ASSISTANT,
            summary,
            agent_id=agent_id,
            metadata=meta,
        )

    def status(self, text: str, *, agent_id: str) -> None:
        """Add a status chip."""
        self.message(message.Kind.STATUS, message.Author.SYSTEM, text, agent_id=agent_id)

    def _new(
        self, payload: Payload, agent_id: str | None, task_id: str | None = None
    ) -> events.NewEvent:
        return events.NewEvent(
            payload=payload,
            turn_id=self.turn_id,
            run_id=self.run_id,
            task_id=task_id,
            agent_id=agent_id,
        )


class Recorder:
    """Commits batches for one conversation, on behalf of one job (or a request)."""

    def __init__(
        self, services: Services, tenant_id: str, conversation_id: str, job: Job | None = None
    ) -> None:
        self.services = services
        self.tenant_id = tenant_id
        self.conversation_id = conversation_id
        self.job = job

    async def write_then(self, batch: Batch, step: Callable[[Connection], T]) -> T:
        """``step`` added to ``batch`` (``Batch.then``), the batch committed (``write``):
        what ``step`` returned."""
        later = batch.then(step)
        await self.write(batch)
        return later.value

    async def write(self, batch: Batch) -> list[event.Event]:
        """Commit ``batch`` in one transaction, ring the bus, then run its after-commit hooks.

        Shielded: once handed to the database the write completes and is announced,
        even if the caller is cancelled meanwhile.
        """
        return await asyncio.shield(self._write_and_announce(batch))

    async def _write_and_announce(self, batch: Batch) -> list[event.Event]:
        try:
            stored = await self.services.db.write(lambda conn: self._write_in(conn, batch))
        except BaseException:
            for hook in batch.rolled_back:
                hook()
            raise
        finally:
            batch.steps, batch.rolled_back, batch.closing = [], [], []
            laters, batch.laters = batch.laters, []
        for later in laters:
            later._committed = True
        if stored:
            self.services.bus.publish(self.conversation_id, stored[-1].seq, stored)
            self.services.metrics.saw(stored)
        hooks, batch.committed = batch.committed, []
        for hook in hooks:
            hook()
        return stored

    def _write_in(self, conn: Connection, batch: Batch) -> list[event.Event]:
        if self.job is not None:
            queue.guard(conn, self.job)
        i = 0
        while i < len(batch.steps):  # a step may add steps
            batch.steps[i](conn)
            i += 1
        now = self.services.clock()
        stored = events.append(
            conn, self.tenant_id, self.conversation_id, [e for e, _ in batch.items], now
        )
        webhooks.queue_completions(conn, self.tenant_id, stored, now)  # ends: signed deliveries
        new_messages = [
            (
                message.Message(
                    id=pending.id,
                    conversation_id=self.conversation_id,
                    turn_id=ev.turn_id,
                    run_id=ev.run_id,
                    kind=pending.kind,
                    author=pending.author,
                    agent_id=pending.agent_id,
                    content=pending.content,
                    created_at=now,
                    metadata=pending.metadata,
                ),
                ev.seq,
            )
            for (_, pending), ev in zip(batch.items, stored, strict=True)
            if pending is not None
        ]
        messages.insert(conn, self.tenant_id, new_messages)
        for step in batch.closing:
            step(conn)
        if self.job is not None:
            stop_point(self.services.settings, "write.before_commit")
        return stored
