"""End a job that keeps failing outside its handler's care (a poison job).

A handler that raises past its own error handling (a payload that no longer parses, a bug)
would otherwise hold its conversation's key until its lease ends, then be claimed again,
for ever, and every later message of that conversation would wait behind it. The worker
gives such a job back to the queue at once; after ``max_attempts`` it calls
:func:`give_up`: the job fails with its error recorded and, when it belongs to a
conversation, an ``error`` tells it so; a turn's job also ends its turn (``done``
``failed``) and frees the conversation, so its next job runs; a session step's job fails
its session (reason ``job_failed``, with a ``session_status``), which would otherwise stay
``running`` (or ``stopping``) with no step to come.
"""

from __future__ import annotations

import logging
from datetime import datetime

from sqlalchemy import Connection

from hansa import errors
from hansa.domain import conversation, event, turn
from hansa.domain.job import Job, JobKind
from hansa.domain.session import SessionStatus
from hansa.engine.runtime.recorder import Batch, Recorder
from hansa.engine.runtime.services import Services
from hansa.store import conversations, queue, sessions, turns

log = logging.getLogger(__name__)

GAVE_UP = "job_failed"
"""The ``error`` code a conversation sees when a job of its was given up."""


async def give_up(services: Services, job: Job, error: str) -> None:
    """Fail ``job`` for good (its epoch still held) and tell its conversation."""
    conversation_id = job.payload.get("conversationId")
    if job.kind is JobKind.SESSION_STEP:  # its payload names the session, not the conversation
        conversation_id = await _session_conversation(services, job)
    if isinstance(conversation_id, str):
        try:
            await _tell(services, job, conversation_id, error)
            return
        except Exception:  # the conversation is gone or the payload is nonsense: just end it
            log.exception("job %s: could not tell conversation %s", job.id, conversation_id)
    now = services.clock()
    await services.db.write(lambda conn: queue.finish(conn, job, now, error=error))


async def _tell(services: Services, job: Job, conversation_id: str, error: str) -> None:
    turn_id = job.payload.get("turnId") if job.kind is JobKind.TURN else None
    turn_id = turn_id if isinstance(turn_id, str) else None
    hans = services.supervisor
    batch = Batch(conversation_id, turn_id)
    text = (
        f"{hans.display_name} could not finish this: the work failed {job.attempts} times "
        "and was stopped. Please try again."
    )
    batch.event(event.ErrorData(code=GAVE_UP, message=text), agent_id=hans.id)
    ends_a_turn = job.kind is JobKind.TURN  # other work (a summary, a trigger) ends no turn
    if ends_a_turn:
        batch.event(event.DoneData(status="failed"), agent_id=hans.id)

    def close(conn: Connection) -> None:
        now = services.clock()
        if ends_a_turn:
            if turn_id is not None and turns.exists(conn, job.tenant_id, turn_id):
                failed = turn.TurnStatus.FAILED
                turns.set_status(conn, job.tenant_id, turn_id, failed, now, error=error)
            conversations.move(
                conn,
                job.tenant_id,
                conversation_id,
                conversation.State.IDLE,
                now,
                strict=False,
                only_from=(conversation.State.AI_ACTIVE,),
            )
        if job.kind is JobKind.SESSION_STEP:
            _fail_session(conn, batch, job, now)
        queue.finish(conn, job, now, error=error)

    batch.then(close)
    await Recorder(services, job.tenant_id, conversation_id, job).write(batch)


async def _session_conversation(services: Services, job: Job) -> str | None:
    session_id = job.payload.get("sessionId")
    if not isinstance(session_id, str):
        return None
    try:
        found = await services.db.read(lambda conn: sessions.get(conn, job.tenant_id, session_id))
    except errors.NotFound:
        return None
    return found.conversation_id


def _fail_session(conn: Connection, batch: Batch, job: Job, now: datetime) -> None:
    session = sessions.get(conn, job.tenant_id, job.payload["sessionId"], lock=True)
    if session.status.final:
        return
    update = {"status": SessionStatus.FAILED, "reason": GAVE_UP, "updated_at": now}
    failed = session.model_copy(update=update)
    sessions.save(conn, failed)
    batch.event(event.SessionStatusData.of(failed), agent_id=failed.agent_id)
