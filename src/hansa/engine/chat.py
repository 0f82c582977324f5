"""What callers do with conversations: create one, post a message, wait for its turn."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection

from hansa import errors
from hansa.domain import conversation, event, job, message, turn
from hansa.domain.base import new_id
from hansa.engine.follow import follow
from hansa.engine.recorder import Batch, Recorder
from hansa.engine.services import Services
from hansa.store import conversations, projects, queue, turns


async def create_conversation(
    services: Services,
    tenant_id: str,
    *,
    project_id: str | None = None,
    title: str | None = None,
    active_agent_id: str | None = None,
) -> conversation.Conversation:
    """A new idle conversation, optionally in a project and with a chosen agent."""
    agent_id = _known_agent(services, active_agent_id) or services.roster[0].id
    now = services.clock()
    convo = conversation.Conversation(
        id=new_id(),
        tenant_id=tenant_id,
        project_id=project_id,
        title=title,
        state=conversation.State.IDLE,
        current_agent=agent_id,
        last_seq=0,
        created_at=now,
        updated_at=now,
        metadata={},
    )

    def create(conn: Connection) -> None:
        if project_id is not None:
            projects.get(conn, tenant_id, project_id)
        conversations.create(conn, convo)

    await services.db.write(create)
    return convo


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
) -> Posted:
    """Store the user's message, its turn and the turn's job in one transaction."""
    text = content.strip()
    if not text:
        raise errors.InvalidInput("content must not be empty", details={"field": "content"})
    limit = services.settings.max_message_chars
    if len(text) > limit:
        raise errors.InvalidInput(
            f"content is longer than {limit} characters", details={"field": "content"}
        )
    _known_agent(services, active_agent_id)
    now = services.clock()
    turn_id = new_id()
    batch = Batch(conversation_id, turn_id)
    message_id = batch.message(message.Kind.USER, message.Author.USER, text, agent_id=None)
    recorder = Recorder(services, tenant_id, conversation_id)
    payload = {
        "turnId": turn_id,
        "conversationId": conversation_id,
        "messageId": message_id,
        "activeAgentId": active_agent_id,
        "projectContext": project_context,
    }

    def store(conn: Connection) -> list[event.Event]:
        convo = conversations.get(conn, tenant_id, conversation_id)
        if convo.state is conversation.State.ARCHIVED:
            raise errors.Conflict("this conversation is archived")
        stored = recorder.write_in(conn, batch)
        turns.create(
            conn,
            tenant_id,
            turn.Turn(
                id=turn_id, conversation_id=conversation_id, message_id=message_id,
                status=turn.TurnStatus.QUEUED, agent_id=None, created_at=now,
                finished_at=None, error=None,
            ),
        )  # fmt: skip
        queue.enqueue(conn, tenant_id, job.JobKind.TURN, payload, now, key=conversation_id)
        return stored

    stored = await services.db.write(store)
    services.bus.publish(conversation_id, stored[-1].seq, stored)
    services.wake_worker()
    return Posted(message_id=message_id, turn_id=turn_id, seq=stored[-1].seq)


async def wait_for_done(
    services: Services, tenant_id: str, conversation_id: str, turn_id: str, after: int
) -> list[event.Event]:
    """Wait until ``turn_id`` emits ``done``; return the turn's events after ``after``."""
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
                        return collected
    except TimeoutError:
        pass
    raise errors.HansaError(f"turn {turn_id} did not finish within {timeout:.0f} s")


def _known_agent(services: Services, agent_id: str | None) -> str | None:
    if agent_id is not None and not services.has_agent(agent_id):
        raise errors.InvalidInput(f"unknown agent {agent_id!r}", details={"field": "activeAgentId"})
    return agent_id
