"""What callers do with conversations: create one, post a message, wait for its turn.

``posting`` is the one way a user message enters a conversation (a client's, a bridge's,
a schedule's); ``runtime/opening`` is the one way a conversation is opened."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection

from hansa import errors
from hansa.domain import conversation, event, job, message, turn
from hansa.domain.base import new_id
from hansa.engine.runtime import interrupt
from hansa.engine.runtime.follow import follow
from hansa.engine.runtime.opening import NewConversation, opening_conversation
from hansa.engine.runtime.recorder import Batch, Recorder
from hansa.engine.runtime.services import Services
from hansa.engine.sessions import service as sessions
from hansa.engine.turns.conversation_update import checked_user
from hansa.store import conversations, queue, threads, turns


async def create_conversation(
    services: Services,
    tenant_id: str,
    *,
    project_id: str | None = None,
    title: str | None = None,
    active_agent_id: str | None = None,
    conversation_id: str | None = None,
    client_id: str | None = None,
    metadata: dict[str, Any] | None = None,
    user: dict[str, Any] | None = None,
) -> conversation.Conversation:
    """A new idle conversation, optionally in a project, with a chosen agent, id (one
    Hansa issued: ``new_id()`` by default), metadata, user (422 naming ``user.<key>`` for
    one ``domain/conversation_user`` refuses), or the id its client chose for it
    (``client_id``, an Agent Protocol thread's UUID: unique within the tenant, 409 when the
    tenant has it; another tenant's choice is no matter, see ``store/threads.py``)."""
    new = NewConversation(
        id=conversation_id or new_id(),
        project_id=project_id,
        title=title,
        agent_id=active_agent_id,
        metadata=metadata or {},
        user=None if user is None else checked_user(services, user),
    )
    opening = opening_conversation(services, tenant_id, new)

    def open_and_name(conn: Connection) -> conversation.Conversation:
        convo = opening(conn)
        if client_id is not None:
            threads.name(conn, tenant_id, convo.id, client_id)
        return convo

    return await services.db.write(open_and_name)


@dataclass(frozen=True, slots=True)
class Posted:
    """A stored user message and the turn that will answer it."""

    message_id: str
    turn_id: str
    seq: int


async def post_message(
    services: Services,
    tenant_id: str,
    conversation_id: str,
    content: str,
    *,
    active_agent_id: str | None = None,
    project_context: dict[str, Any] | None = None,
    strategy: str = "enqueue",
) -> Posted:
    """Store the user's message, its turn and the turn's job in one transaction (see
    :func:`posting`)."""
    batch = Batch(conversation_id, new_id())
    message_id = posting(
        services,
        tenant_id,
        batch,
        content,
        active_agent_id=active_agent_id,
        project_context=project_context,
        strategy=strategy,
    )
    stored = await Recorder(services, tenant_id, conversation_id).write(batch)
    assert batch.turn_id is not None
    return Posted(message_id=message_id, turn_id=batch.turn_id, seq=stored[-1].seq)


def posting(
    services: Services,
    tenant_id: str,
    batch: Batch,
    content: str,
    *,
    active_agent_id: str | None = None,
    project_context: dict[str, Any] | None = None,
    strategy: str = "enqueue",
    metadata: dict[str, Any] | None = None,
    message_id: str | None = None,
    addressed: bool = False,
) -> str:
    """Add to ``batch`` the user's message and the step that stores its turn (the batch's
    ``turn_id``) and the turn's job; the message's id. The one way a user message enters
    a conversation: a client's, a bridge's, a schedule's.

    ``strategy`` decides what happens while another turn of the conversation is queued
    or running: ``enqueue`` waits for it (429 once ``max_queued_turns`` wait already),
    ``reject`` refuses (409), ``interrupt`` cancels it (it ends with ``done``
    ``cancelled``; its worker's later writes are refused) and runs this one. Raises
    InvalidInput at once for a message or context the limits refuse. ``message_id``: the
    message's id (a new one by default); ``addressed``: ``active_agent_id`` answers it
    whatever the keywords say (a message addressed to that assistant).
    """
    conversation_id, turn_id = batch.conversation_id, batch.turn_id
    assert turn_id is not None, "a user message starts a turn: the batch names it"
    if strategy not in STRATEGIES:
        raise errors.InvalidInput(
            f"multitaskStrategy must be one of {', '.join(STRATEGIES)}",
            details={"field": "multitaskStrategy"},
        )
    text = content.strip()
    if not text:
        raise errors.InvalidInput("content must not be empty", details={"field": "content"})
    limit = services.settings.max_message_chars
    if len(text) > limit:
        raise errors.InvalidInput(
            f"content is longer than {limit} characters", details={"field": "content"}
        )
    _check_context(services, project_context)
    now = services.clock()
    message_id = batch.message(
        message.Kind.USER,
        message.Author.USER,
        text,
        agent_id=None,
        metadata=metadata,
        message_id=message_id,
    )
    work = job.TurnJob(
        turn_id=turn_id,
        conversation_id=conversation_id,
        message_id=message_id,
        active_agent_id=active_agent_id,
        addressed=addressed,
        project_context=project_context,
    )

    def store(conn: Connection) -> None:
        if active_agent_id is not None:
            services.agents.addressable(conn, tenant_id, active_agent_id, field="activeAgentId")
        convo = conversations.get(conn, tenant_id, conversation_id)
        if convo.state is conversation.State.ARCHIVED:
            raise errors.Conflict("this conversation is archived")
        if convo.title is None:  # name it after its first message, for pickers and lists
            conversations.set_title(conn, tenant_id, conversation_id, _title(text), now)
        busy = turns.unfinished(conn, tenant_id, conversation_id)
        if strategy == "enqueue" and len(busy) >= services.settings.max_queued_turns:
            raise errors.RateLimited(
                f"this conversation already has {len(busy)} messages waiting for an answer",
                retry_after=QUEUE_RETRY_SECONDS,
                details={"unfinishedTurns": len(busy)},
            )
        if busy and strategy == "reject":
            raise errors.Conflict(
                "another message of this conversation is still being answered",
                details={"turnId": busy[0].id, "multitaskStrategy": "reject"},
            )
        if busy and strategy == "interrupt":
            batch.put_first(
                interrupt.end_turns(
                    conn,
                    services,
                    tenant_id,
                    conversation_id,
                    busy,
                    now,
                    "interrupted by a newer message",
                )
            )
        turns.create(
            conn,
            tenant_id,
            turn.Turn(
                id=turn_id,
                conversation_id=conversation_id,
                message_id=message_id,
                status=turn.TurnStatus.QUEUED,
                agent_id=None,
                created_at=now,
                finished_at=None,
                error=None,
            ),
        )
        queue.enqueue(
            conn, tenant_id, job.JobKind.TURN, job.payload(work), now, key=conversation_id
        )
        # the conversation's running agent sessions take the message as their next guidance
        sessions.guide_from_message(conn, tenant_id, conversation_id, text, now)

    batch.then(store)
    return message_id


@dataclass(frozen=True, slots=True)
class Waited:
    """A turn's events so far, and whether it finished (emitted ``done``)."""

    events: list[event.Event]
    finished: bool


async def wait_for_done(
    services: Services, tenant_id: str, conversation_id: str, turn_id: str, after: int
) -> Waited:
    """Wait until ``turn_id`` emits ``done``, at most ``chat_timeout_seconds``; the
    turn's events after ``after`` (unfinished after the timeout: the turn goes on)."""
    timeout = services.settings.chat_timeout_seconds
    collected: list[event.Event] = []
    try:
        async with asyncio.timeout(timeout):
            async for ev in follow(
                services, tenant_id, conversation_id, after, idle_seconds=timeout
            ):
                if ev is not None and ev.turn_id == turn_id:
                    collected.append(ev)
                    if ev.type == "done":
                        return Waited(collected, finished=True)
    except TimeoutError:
        pass
    return Waited(collected, finished=False)


async def turn_events(
    services: Services, tenant_id: str, conversation_id: str, posted: Posted
) -> AsyncIterator[event.Event]:
    """The events of ``posted``'s turn as they are written, its ``done`` last; ends early,
    without a ``done``, after ``chat_timeout_seconds`` of quiet (the turn goes on)."""
    quiet = services.settings.chat_timeout_seconds
    async for ev in follow(services, tenant_id, conversation_id, posted.seq, idle_seconds=quiet):
        if ev is None:
            return
        if ev.turn_id != posted.turn_id:
            continue
        yield ev
        if isinstance(ev.payload, event.DoneData):
            return


STRATEGIES = ("enqueue", "reject", "interrupt")
QUEUE_RETRY_SECONDS = 5
"""The ``Retry-After`` of a message refused because its conversation's queue is full."""


def _check_context(services: Services, project_context: dict[str, Any] | None) -> None:
    if project_context is None:
        return
    limit = services.settings.max_project_context_bytes
    if len(json.dumps(project_context, separators=(",", ":"))) > limit:
        raise errors.InvalidInput(
            f"projectContext is larger than {limit} bytes as JSON",
            details={"field": "projectContext"},
        )


def _title(text: str, limit: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"
