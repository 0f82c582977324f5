"""End the turns in flight in a conversation: a newer message interrupts them, or a person
takes the conversation over."""

from __future__ import annotations

import dataclasses
from datetime import datetime

from sqlalchemy import Connection

from hansa.domain import conversation, event, turn
from hansa.engine.runtime.recorder import Batch
from hansa.engine.runtime.services import Services
from hansa.store import conversations, queue, turns


def end_turns(
    conn: Connection,
    services: Services,
    tenant_id: str,
    conversation_id: str,
    busy: list[turn.Turn],
    now: datetime,
    why: str,
) -> Batch:
    """Cancel ``busy`` turns (each ends with ``done`` ``cancelled``; its worker's later
    writes are refused: its job is ended) and free the conversation; returns the events
    saying so, for the caller to put before its own."""
    stop = Batch(conversation_id, None)
    for t in busy:
        # the job's row first, as its worker's guarded writes lock it (then the turn's)
        queue.cancel_key_job(conn, conversation_id, {"turnId": t.id}, now)
        turns.set_status(conn, tenant_id, t.id, turn.TurnStatus.CANCELLED, now, error=why)
        ended = dataclasses.replace(stop, turn_id=t.id)  # the same events, tagged by turn
        ended.event(event.DoneData(status="cancelled"), agent_id=services.supervisor.id)
    conversations.move(
        conn,
        tenant_id,
        conversation_id,
        conversation.State.IDLE,
        now,
        strict=False,
        only_from=(conversation.State.AI_ACTIVE,),
    )
    return stop
