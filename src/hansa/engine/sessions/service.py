"""Agent sessions: create one, and control it (pause, resume, interrupt, stop, delete).

Every change locks the session's row, so control and a step in flight take turns: a
step that commits after a pause records itself and queues nothing; one that commits
after a stop records itself and ends the session (``stopping`` -> ``stopped``); guidance
set by an interrupt is taken by exactly the step that commits next. A running session has
exactly one live step job (keyed ``session:<id>``); a paused or stopping one has only the
step in flight, if any; an ended one has none.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from pydantic import Field
from sqlalchemy import Connection

from hansa import errors
from hansa.domain import event, job
from hansa.domain.base import Wire, new_id
from hansa.domain.session import (
    DEFAULT_MAX_STEPS,
    MAX_DELAY_SECONDS,
    MAX_GUIDANCE_CHARS,
    MAX_RUNTIME_SECONDS,
    MAX_STEPS,
    AgentSession,
    SessionStatus,
    state_too_large,
)
from hansa.engine.runtime.opening import NewConversation, opening_conversation
from hansa.engine.runtime.recorder import Batch, Recorder
from hansa.engine.runtime.services import Services
from hansa.store import conversations, queue
from hansa.store import sessions as rows


class NewSession(Wire):
    """What a session is created with (``POST /api/agent-sessions``)."""

    agent_id: str = Field(min_length=1, max_length=64)
    goal: str = Field(min_length=1, max_length=4000)
    conversation_id: str | None = None
    max_steps: int = Field(default=DEFAULT_MAX_STEPS, ge=1, le=MAX_STEPS)
    max_runtime_seconds: float | None = Field(default=None, gt=0, le=MAX_RUNTIME_SECONDS)
    state: dict[str, Any] = Field(default_factory=dict)
    step: str = Field(default="1", min_length=1, max_length=200)
    every_seconds: float | None = Field(default=None, ge=1, le=MAX_DELAY_SECONDS)
    """Ongoing work's cadence: the least wait between two steps (the first runs at once);
    without one, ``HANSA_SESSION_DEFAULT_EVERY_SECONDS``."""


def key_of(session_id: str) -> str:
    """The serialization key of a session's step jobs."""
    return f"session:{session_id}"


def queue_step(conn: Connection, session: AgentSession, now: datetime, delay: float = 0) -> None:
    """Queue the session's next step (its ``iteration + 1``), ``delay`` seconds from now."""
    work = job.payload(job.SessionStepJob(session_id=session.id, iteration=session.iteration + 1))
    queue.enqueue(
        conn,
        session.tenant_id,
        job.JobKind.SESSION_STEP,
        work,
        now,
        key=key_of(session.id),
        run_at=now + timedelta(seconds=delay) if delay else None,
    )


def announce(batch: Batch, session: AgentSession, agent_id: str) -> None:
    """A ``session_status`` event for the session as it is now."""
    batch.event(event.SessionStatusData.of(session), agent_id=agent_id)


async def create(services: Services, tenant_id: str, new: NewSession) -> AgentSession:
    """Store a running session and queue its first step; a new conversation is made for it
    unless it joins one (whose events then carry the session's). Past the tenant's
    ``HANSA_MAX_SESSIONS_PER_TENANT`` running or paused sessions: 429, nothing stored."""
    conversation_id = new.conversation_id or new_id()
    batch = Batch(conversation_id, None)
    session = opening(services, tenant_id, new, batch, conversation_id)
    await Recorder(services, tenant_id, conversation_id).write(batch)
    return session


def opening(
    services: Services, tenant_id: str, new: NewSession, batch: Batch, conversation_id: str
) -> AgentSession:
    """The session, stored (with its first step queued and ``session_status``) by
    ``batch``'s transaction; a new conversation ``conversation_id`` is made unless ``new``
    names one. Raises InvalidInput for a state too large, and at commit for an unknown agent."""
    if state_too_large(new.state):
        raise errors.InvalidInput("state is too large", details={"field": "state"})
    now = services.clock()
    session = AgentSession(
        id=new_id(),
        tenant_id=tenant_id,
        agent_id=new.agent_id,
        conversation_id=conversation_id,
        goal=new.goal,
        status=SessionStatus.RUNNING,
        iteration=0,
        step=new.step,
        state=new.state,
        guidance=None,
        max_steps=new.max_steps,
        max_runtime_seconds=new.max_runtime_seconds,
        next_run_at=None,
        every_seconds=new.every_seconds,
        reason=None,
        created_at=now,
        updated_at=now,
    )

    new_conversation = NewConversation(
        conversation_id, title=new.goal[:80], agent_id=new.agent_id, agent_field="agentId"
    )

    limit = services.settings.max_sessions_per_tenant

    def store(conn: Connection) -> None:
        if rows.live_count(conn, tenant_id) >= limit:
            raise errors.RateLimited(
                f"a tenant may have at most {limit} running or paused agent sessions "
                "(HANSA_MAX_SESSIONS_PER_TENANT); stop one first",
                retry_after=60,
                details={"limit": limit},
            )
        if new.conversation_id is None:
            opening_conversation(services, tenant_id, new_conversation)(conn)  # and its agent
        else:
            services.agents.addressable(conn, tenant_id, new.agent_id, field="agentId")
            conversations.get(conn, tenant_id, conversation_id)  # 404 for another tenant's
        rows.create(conn, session)
        queue_step(conn, session, now)

    batch.then(store)
    announce(batch, session, session.agent_id)
    return session


Change = Callable[[Connection, AgentSession, datetime], AgentSession]


async def _control(
    services: Services, tenant_id: str, session_id: str, change: Change
) -> AgentSession:
    """Apply ``change`` to the locked session in one transaction with its events."""
    found = await services.db.read(lambda conn: rows.get(conn, tenant_id, session_id))
    batch = Batch(found.conversation_id, None)

    def go(conn: Connection) -> AgentSession:
        now = services.clock()
        session = rows.get(conn, tenant_id, session_id, lock=True)
        changed = change(conn, session, now)
        if changed != session:
            rows.save(conn, changed)
            if changed.status is not session.status:
                announce(batch, changed, changed.agent_id)
        return changed

    return await Recorder(services, tenant_id, found.conversation_id).write_then(batch, go)


def _cancel_unstarted(conn: Connection, s: AgentSession, now: datetime) -> bool:
    """Cancel the session's step job unless it started; whether one that started is left
    (running, or back in the queue after an attempt whose tools may have acted)."""
    return queue.cancel_key_job(conn, key_of(s.id), {"sessionId": s.id}, now, unstarted_only=True)


def _refuse_final(session: AgentSession, verb: str) -> None:
    if session.status is SessionStatus.STOPPING:
        raise errors.Conflict(
            f"agent session {session.id} is stopping; it cannot {verb}",
            details={"status": session.status.value},
        )
    if session.status.final:
        raise errors.Conflict(
            f"agent session {session.id} is {session.status.value}; it cannot {verb}",
            details={"status": session.status.value},
        )


async def pause(services: Services, tenant_id: str, session_id: str) -> AgentSession:
    """No step starts; a step in flight finishes and is recorded. Pausing twice is a no-op."""

    def change(conn: Connection, s: AgentSession, now: datetime) -> AgentSession:
        _refuse_final(s, "pause")
        if s.status is SessionStatus.PAUSED:
            return s
        # only a step not yet started: the one in flight finishes and is recorded
        _cancel_unstarted(conn, s, now)
        return s.model_copy(
            update={"status": SessionStatus.PAUSED, "reason": "paused", "updated_at": now}
        )

    return await _control(services, tenant_id, session_id, change)


async def resume(services: Services, tenant_id: str, session_id: str) -> AgentSession:
    """Run again from the step after the last recorded. Resuming a running one: a no-op."""

    def change(conn: Connection, s: AgentSession, now: datetime) -> AgentSession:
        _refuse_final(s, "resume")
        if s.status is SessionStatus.RUNNING:  # running: make sure a step is queued
            if not queue.live_statuses(conn, key_of(s.id)):
                queue_step(conn, s, now)
            return s
        resumed = s.model_copy(
            update={"status": SessionStatus.RUNNING, "reason": None, "updated_at": now}
        )
        queue_step(conn, resumed, now)
        return resumed

    return await _control(services, tenant_id, session_id, change)


async def interrupt(
    services: Services, tenant_id: str, session_id: str, guidance: str
) -> AgentSession:
    """Give ``guidance`` to exactly the next step (it replaces guidance not yet taken)."""
    text = guidance.strip()
    if not text or len(text) > MAX_GUIDANCE_CHARS:
        raise errors.InvalidInput(
            f"guidance must be 1 to {MAX_GUIDANCE_CHARS} characters", details={"field": "guidance"}
        )

    def change(conn: Connection, s: AgentSession, now: datetime) -> AgentSession:
        _refuse_final(s, "be interrupted")
        return s.model_copy(update={"guidance": text, "updated_at": now})

    return await _control(services, tenant_id, session_id, change)


def ended(s: AgentSession, now: datetime, reason: str) -> AgentSession:
    """The session stopped for ``reason`` (``stopped``, ``max_steps``, ``max_runtime``)."""
    return s.model_copy(
        update={"status": SessionStatus.STOPPED, "reason": reason, "updated_at": now}
    )


async def stop(services: Services, tenant_id: str, session_id: str) -> AgentSession:
    """End the session. A step not yet started is cancelled; a step in flight finishes and
    is recorded with what its tools did: the session is ``stopping`` until it commits, then
    ``stopped`` (decision 0037). Stopping an ended session is a no-op; stopping a stopping
    one again ends it at once if its step's job is gone."""

    def change(conn: Connection, s: AgentSession, now: datetime) -> AgentSession:
        if s.status.final:
            return s
        if _cancel_unstarted(conn, s, now):
            if s.status is SessionStatus.STOPPING:
                return s
            update = {"status": SessionStatus.STOPPING, "reason": "stopped", "updated_at": now}
            return s.model_copy(update=update)
        return ended(s, now, "stopped")

    return await _control(services, tenant_id, session_id, change)


async def delete(services: Services, tenant_id: str, session_id: str) -> None:
    """Stop the session and remove it with its steps (its conversation's events stay: a
    step in flight still records its tools' events there when it commits)."""
    await stop(services, tenant_id, session_id)
    await services.db.write(lambda conn: rows.delete(conn, tenant_id, session_id))


def guide_from_message(
    conn: Connection, tenant_id: str, conversation_id: str, text: str, now: datetime
) -> list[str]:
    """A user's message to a conversation with running sessions becomes their next step's
    guidance (seed 004 §6); the sessions guided, by id. Runs in the message's transaction."""
    guided = []
    for s in rows.running_in(conn, tenant_id, conversation_id):
        guided_now = {"guidance": text[:MAX_GUIDANCE_CHARS], "updated_at": now}
        rows.save(conn, s.model_copy(update=guided_now))
        guided.append(s.id)
    return guided
