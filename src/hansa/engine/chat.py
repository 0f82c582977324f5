"""What callers do with conversations: create one, post a message, wait for its turn."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from hansa import errors
from hansa.domain import conversation, event, job, message, turn
from hansa.domain.base import new_id
from hansa.engine.recorder import Batch, Recorder
from hansa.engine.services import Services
from hansa.store import conversations, events, projects, queue, turns


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
    async with services.db.transaction() as conn:
        if project_id is not None:
            await projects.get(conn, tenant_id, project_id)
        await conversations.create(conn, convo)
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
    async with services.db.transaction() as conn:
        convo = await conversations.get(conn, tenant_id, conversation_id)
        if convo.state is conversation.State.ARCHIVED:
            raise errors.Conflict("this conversation is archived")
        stored = await recorder.write_in(conn, batch)
        await turns.create(
            conn,
            tenant_id,
            turn.Turn(
                id=turn_id, conversation_id=conversation_id, message_id=message_id,
                status=turn.TurnStatus.QUEUED, agent_id=None, created_at=now,
                finished_at=None, error=None,
            ),
        )  # fmt: skip
        payload = {
            "turnId": turn_id,
            "conversationId": conversation_id,
            "messageId": message_id,
            "activeAgentId": active_agent_id,
            "projectContext": project_context,
        }
        await queue.enqueue(conn, tenant_id, job.JobKind.TURN, payload, now, key=conversation_id)
    services.bus.publish(conversation_id, stored[-1].seq)
    services.wake_worker()
    return Posted(message_id=message_id, turn_id=turn_id, seq=stored[-1].seq)


async def wait_for_done(
    services: Services, tenant_id: str, conversation_id: str, turn_id: str, after: int
) -> list[event.Event]:
    """Wait until ``turn_id`` emits ``done``; return the turn's events after ``after``."""
    collected: list[event.Event] = []
    cursor = after
    timeout = services.settings.chat_timeout_seconds
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    with services.bus.subscribe(conversation_id) as sub:
        while True:
            async with services.db.read() as conn:
                batch = await events.read_after(conn, tenant_id, conversation_id, cursor)
            for ev in batch:
                cursor = ev.seq
                if ev.turn_id == turn_id:
                    collected.append(ev)
                    if ev.type == "done":
                        return collected
            if batch:
                continue
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise errors.HansaError(f"turn {turn_id} did not finish within {timeout:.0f} s")
            await sub.wait(min(remaining, services.settings.poll_seconds * 4))


def _known_agent(services: Services, agent_id: str | None) -> str | None:
    if agent_id is not None and not services.has_agent(agent_id):
        raise errors.InvalidInput(f"unknown agent {agent_id!r}", details={"field": "activeAgentId"})
    return agent_id
