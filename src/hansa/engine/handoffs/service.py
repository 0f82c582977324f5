"""Handing a conversation to a person and back, each step one transaction.

Requesting a handoff stores it with a snapshot, moves the conversation to
``handoff_pending``, ends the turn in flight (``done`` ``cancelled``: no assistant text
follows the ``handoff`` event), pauses the conversation's running runs and fires
``handoff.requested``. Then a person accepts it (``agent_active``), writes as ``human``,
and resolves it (``resolved``) or returns it to the assistants (``idle``; the runs the
handoff paused resume).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import Field
from sqlalchemy import Connection

from hansa import errors
from hansa.domain import conversation, event, handoff, message, run, secrets
from hansa.domain.base import Wire, new_id
from hansa.engine import runs
from hansa.engine.rules.enqueue import enqueue_if_ruled
from hansa.engine.runtime import agent_state_events, interrupt
from hansa.engine.runtime.recorder import Batch, Recorder
from hansa.engine.runtime.services import Services
from hansa.store import conversations, handoffs, messages, turns
from hansa.store import runs as run_rows

SNAPSHOT_MESSAGES = 20
"""How many recent messages the person sees in the snapshot."""
_SPOKEN = (message.Kind.USER, message.Kind.ASSISTANT)


def _snapshot(conn: Connection, tenant_id: str, convo: conversation.Conversation) -> dict[str, Any]:
    recent = messages.list_for(conn, tenant_id, convo.id, kinds=_SPOKEN, last=SNAPSHOT_MESSAGES)
    open_runs = run_rows.open_of_conversation(conn, tenant_id, convo.id)
    plan = convo.planning
    return {
        "messages": [
            {"author": m.author.value, "agentId": m.agent_id, "content": m.content} for m in recent
        ],
        "context": secrets.mask(convo.context),  # for a person to read: stored masked
        "currentAgent": convo.current_agent,
        "plan": secrets.mask(plan.model_dump(mode="json", by_alias=True)) if plan else None,
        "runs": [
            {
                "id": r.id,
                "title": r.title,
                "status": r.status.value,
                "tasks": [
                    {"id": t.id, "summary": t.summary, "status": t.status.value}
                    for t in run_rows.tasks_of(conn, r.id)
                ],
            }
            for r in open_runs
        ],
    }


class Ask(Wire):
    """What a handoff is asked with."""

    reason: str = Field(min_length=1, max_length=500)
    priority: handoff.Priority = "normal"
    metadata: dict[str, Any] = Field(default_factory=dict)
    requested_by: handoff.RequestedBy = handoff.RequestedBy(kind="api")


def opening_from_graph(
    services: Services,
    tenant_id: str,
    conversation_id: str,
    reason: str,
    priority: str,
    batch: Batch,
) -> Callable[[Connection], handoff.Handoff]:
    """A graph's ``handoff.create`` (``Services.open_handoff``): the handoff as a step of the
    run step's transaction; the graph's run pauses with the others, and goes on when the
    person gives the conversation back."""
    by = handoff.RequestedBy(kind="graph", id=batch.run_id)
    ask = Ask.model_validate({"reason": reason, "priority": priority, "requested_by": by})
    return opening(services, tenant_id, conversation_id, ask, batch)


def opening(
    services: Services, tenant_id: str, conversation_id: str, ask: Ask, batch: Batch
) -> Callable[[Connection], handoff.Handoff]:
    """The handoff as a step of ``batch``'s transaction: returns the open handoff (the
    conversation's existing one when a person has it already). The turns in flight end,
    except the one writing ``batch`` (it ends itself: a rule's handoff)."""

    def go(conn: Connection) -> handoff.Handoff:
        existing = handoffs.open_of(conn, tenant_id, conversation_id)
        if existing is not None:
            return existing
        now = services.clock()
        convo = conversations.get(conn, tenant_id, conversation_id)
        busy = [
            t for t in turns.unfinished(conn, tenant_id, conversation_id) if t.id != batch.turn_id
        ]
        why = "a person took the conversation over"
        batch.put_first(interrupt.end_turns(conn, services, tenant_id, convo.id, busy, now, why))
        paused = [
            r.id
            for r in run_rows.open_of_conversation(conn, tenant_id, convo.id)
            if r.status is run.RunStatus.RUNNING
        ]
        for run_id in paused:
            runs.pausing(services, tenant_id, run_id, batch)(conn)
        opened = handoff.Handoff(
            id=new_id(),
            tenant_id=tenant_id,
            conversation_id=convo.id,
            status=handoff.Status.PENDING,
            reason=ask.reason,
            priority=ask.priority,
            metadata=ask.metadata,
            snapshot=_snapshot(conn, tenant_id, convo),
            requested_by=ask.requested_by,
            paused_runs=paused,
            created_at=now,
        )
        handoffs.create(conn, opened)
        conversations.move(conn, tenant_id, convo.id, conversation.State.HANDOFF_PENDING, now)
        hans = services.supervisor
        announced = event.HandoffData(
            reason=ask.reason, handoff_id=opened.id, priority=ask.priority, status="pending"
        )
        batch.event(announced, agent_id=hans.id)
        batch.status(
            f"{hans.display_name} handed this conversation to a human colleague",
            agent_id=hans.id,
        )
        facts = {"handoff": {"id": opened.id, "reason": ask.reason, "priority": ask.priority}}
        enqueue_if_ruled(
            conn, tenant_id, "handoff.requested", convo.id, convo.project_id, now, facts=facts
        )
        return opened

    return go


async def request(
    services: Services, tenant_id: str, conversation_id: str, ask: Ask
) -> tuple[handoff.Handoff, bool]:
    """Hand the conversation to a person; returns the handoff and whether it is new."""
    batch = Batch(conversation_id, None)
    step = opening(services, tenant_id, conversation_id, ask, batch)

    def go(conn: Connection) -> tuple[handoff.Handoff, bool]:
        new = handoffs.open_of(conn, tenant_id, conversation_id) is None
        return step(conn), new

    return await Recorder(services, tenant_id, conversation_id).write_then(batch, go)


async def _move(
    services: Services,
    tenant_id: str,
    handoff_id: str,
    target: handoff.Status,
    then: Callable[[Connection, Batch, handoff.Handoff], None],
    **changes: Any,
) -> handoff.Handoff:
    """Move a handoff, say so (``handoff_status``), and do ``then`` in the same transaction."""
    current = await services.db.read(handoffs.get, tenant_id, handoff_id)
    batch = Batch(current.conversation_id, None)

    def go(conn: Connection) -> handoff.Handoff:
        fresh = handoffs.get(conn, tenant_id, handoff_id)
        after = handoffs.move(conn, fresh, target, services.clock(), **changes)
        batch.event(
            event.HandoffStatusData(
                handoff_id=after.id,
                status=after.status.value,
                previous=fresh.status.value,
                assignee=after.assignee,
            ),
            agent_id=services.supervisor.id,
        )
        then(conn, batch, after)
        return after

    recorder = Recorder(services, tenant_id, current.conversation_id)
    return await recorder.write_then(batch, go)


def _state(services: Services, target: conversation.State) -> Callable[..., None]:
    def then(conn: Connection, batch: Batch, h: handoff.Handoff) -> None:
        conversations.move(conn, h.tenant_id, h.conversation_id, target, services.clock())
        agent_state_events.announce_cleared(conn, batch, h.tenant_id, h.conversation_id, target)

    return then


async def accept(
    services: Services, tenant_id: str, handoff_id: str, assignee: str
) -> handoff.Handoff:
    """A person takes the conversation (``agent_active``)."""
    return await _move(
        services,
        tenant_id,
        handoff_id,
        handoff.Status.ACTIVE,
        _state(services, conversation.State.AGENT_ACTIVE),
        assignee=assignee,
        assigned_at=services.clock(),
    )


async def resolve(services: Services, tenant_id: str, handoff_id: str) -> handoff.Handoff:
    """The person closed the matter (``resolved``); paused runs stay paused."""
    return await _move(
        services,
        tenant_id,
        handoff_id,
        handoff.Status.RESOLVED,
        _state(services, conversation.State.RESOLVED),
        resolved_at=services.clock(),
    )


async def give_back(services: Services, tenant_id: str, handoff_id: str) -> handoff.Handoff:
    """The person returns the conversation to the assistants (``idle``); the runs the
    handoff paused resume."""

    def then(conn: Connection, batch: Batch, h: handoff.Handoff) -> None:
        _state(services, conversation.State.IDLE)(conn, batch, h)
        for run_id in h.paused_runs:
            if run_rows.get(conn, tenant_id, run_id).status is run.RunStatus.PAUSED:
                runs.resuming(services, tenant_id, run_id, batch)(conn)

    return await _move(
        services,
        tenant_id,
        handoff_id,
        handoff.Status.RETURNED,
        then,
        resolved_at=services.clock(),
    )


async def say(services: Services, tenant_id: str, handoff_id: str, content: str) -> message.Message:
    """A message from the person who holds the conversation (author ``human``)."""
    text = content.strip()
    if not text:
        raise errors.InvalidInput("content must not be empty", details={"field": "content"})
    current = await services.db.read(handoffs.get, tenant_id, handoff_id)
    batch = Batch(current.conversation_id, None)

    def go(conn: Connection) -> None:
        fresh = handoffs.get(conn, tenant_id, handoff_id)
        if fresh.status is not handoff.Status.ACTIVE:
            raise errors.Conflict(
                f"handoff {handoff_id} is {fresh.status.value}; accept it before writing",
                details={"status": fresh.status.value},
            )
        batch.message(
            message.Kind.ASSISTANT,
            message.Author.HUMAN,
            text,
            agent_id=None,
            metadata={"handoffId": handoff_id, "assignee": fresh.assignee},
        )

    batch.then(go)
    await Recorder(services, tenant_id, current.conversation_id).write(batch)
    found = await services.db.read(
        messages.list_for,
        tenant_id,
        current.conversation_id,
        kinds=(message.Kind.ASSISTANT,),
        last=1,
    )
    return found[-1]
