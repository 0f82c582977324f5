"""Follow a conversation's log: replay from a cursor, then new events as they commit."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from functools import partial

from hansa.domain import event
from hansa.engine.runtime.services import Services
from hansa.store import events


async def follow(
    services: Services,
    tenant_id: str,
    conversation_id: str,
    after: int,
    *,
    idle_seconds: float,
) -> AsyncIterator[event.Event | None]:
    """Yield events after ``after`` in order, forever; ``None`` after ``idle_seconds`` of quiet."""
    batches = follow_batches(services, tenant_id, conversation_id, after, idle_seconds=idle_seconds)
    async with aclosing(batches) as stream:
        async for batch in stream:
            if not batch:
                yield None
            for ev in batch:
                yield ev


async def follow_batches(
    services: Services,
    tenant_id: str,
    conversation_id: str,
    after: int,
    *,
    idle_seconds: float,
) -> AsyncGenerator[list[event.Event]]:
    """``follow``, a commit's worth of events at a time; an empty list after a quiet spell.

    Subscribes before the first read, so nothing committed in between is missed.
    Uses the bus's copy of new events when it continues the cursor; reads the log
    otherwise (replay, a gap, a bus that sends no copies, a subscriber far behind),
    and every ``follow_poll_seconds`` that nothing rang: a notice lost between
    processes delays an event, it never hides it.
    """
    cursor = after
    poll = services.settings.follow_poll_seconds
    quiet = 0.0
    with services.bus.subscribe(conversation_id) as sub:
        from_log = True
        while True:
            batch = None if from_log else sub.take(cursor)
            if batch is None:
                batch = await services.db.read(
                    partial(
                        events.read_after,
                        tenant_id=tenant_id,
                        conversation_id=conversation_id,
                        after=cursor,
                    )
                )
                from_log = len(batch) >= events.PAGE  # a full page: more wait in the log
            if batch:
                quiet = 0.0
                cursor = batch[-1].seq
                yield batch
            if from_log:
                continue
            step = min(poll, idle_seconds - quiet)
            if await sub.wait(step):
                continue
            quiet += step
            from_log = True  # nothing rang: look in the log anyway
            if quiet >= idle_seconds:
                quiet = 0.0
                yield []
