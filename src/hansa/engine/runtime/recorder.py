"""Writes what the user sees: messages and the events announcing them, in one transaction.

A ``Batch`` collects messages and events; ``Recorder.write`` commits it with any
other change of the same step (state, turn status, job completion), checks the
job's lease first, and rings the bus only after the commit.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection

from hansa.domain import event, message
from hansa.domain.base import new_id
from hansa.domain.event import Payload
from hansa.domain.job import Job, JobKind
from hansa.engine.runtime.services import Services
from hansa.store import events, messages, queue

Extra = Callable[[Connection], None]
"""More work for the same transaction (a state change, a job completion)."""


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
    adopted: list[Job] = field(default_factory=list)
    """Jobs created already claimed by this process's worker; it starts them after the
    commit."""
    handoffs: dict[int, Any] = field(default_factory=dict)
    """What adopted jobs start from (by job id), prepared in the same transaction."""

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
                phase=str(meta.get("phase", "")),
                group=meta.get("group"),
            )
        else:
            payload = event.MessageData(
                message_id=msg_id, kind=kind.value, author=author.value, content=content
            )
        msg = _PendingMessage(msg_id, kind, author, agent_id, content, metadata or {})
        self.items.append((self._new(payload, agent_id), msg))
        return msg_id

    def thinking(
        self, summary: str, *, agent_id: str, phase: str, group: str | None = None
    ) -> None:
        """Add a safe, short thinking entry written from a template."""
        meta: dict[str, Any] = {"phase": phase}
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

    async def write(
        self, batch: Batch, extra: Extra | None = None, *, prepare: Extra | None = None
    ) -> list[event.Event]:
        """Commit ``batch`` and ``extra`` in one transaction, then ring the bus.

        Shielded: once handed to the database the write completes and is announced,
        even if the caller is cancelled meanwhile.
        """
        return await asyncio.shield(self._write_and_announce(batch, extra, prepare))

    async def _write_and_announce(
        self, batch: Batch, extra: Extra | None, prepare: Extra | None
    ) -> list[event.Event]:
        try:
            stored = await self.services.db.write(
                lambda conn: self.write_in(conn, batch, extra, prepare=prepare)
            )
        except BaseException:  # rolled back: the run jobs it would have handed over are not
            self.services.release_run_slots(sum(j.kind is JobKind.RUN for j in batch.adopted))
            batch.adopted, batch.handoffs = [], {}
            raise
        if stored:
            self.services.bus.publish(self.conversation_id, stored[-1].seq, stored)
        if batch.adopted:
            self.services.handoffs.update(batch.handoffs)  # committed: safe to hand over
            self.services.adopt(batch.adopted)
            batch.adopted, batch.handoffs = [], {}
        return stored

    def write_in(
        self,
        conn: Connection,
        batch: Batch,
        extra: Extra | None = None,
        *,
        prepare: Extra | None = None,
    ) -> list[event.Event]:
        """Write ``batch`` in the caller's transaction; the caller rings the bus after commit.

        ``prepare`` runs first and may add to the batch from what it reads; ``extra`` runs last.
        """
        if self.job is not None:
            queue.guard(conn, self.job)
        if prepare is not None:
            prepare(conn)
        now = self.services.clock()
        stored = events.append(
            conn, self.tenant_id, self.conversation_id, [e for e, _ in batch.items], now
        )
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
        if extra is not None:
            extra(conn)
        return stored
