"""One step of an agent session, as one job.

The frame ``{step, state, guidance?}`` goes to the agent's model (structured output, purpose
``session_step``), which may call the agent's tools first (``step_tools``); its answer is
the next frame. The step's record, the session's new cursor and state, its tools' events,
its own (``session_step``, a message when the step says something, ``session_status``
when it ends) and the next step's job commit in one transaction with
the job's guard: after a crash the step is either recorded once or run again from the same
frame, never twice and never skipped. A pause or a stop lets the step in flight finish and
record itself with its tools' events (a stopping session is then stopped), also when its
worker died and the step runs again (decision 0037). A job whose session moved on (a stale
job, left by a pause and a resume) or whose step never started before a pause or a stop
ends without a step; one past its tenant's steps per minute
(``engine/sessions/pace.py``) is put off, and a session without a cadence of its own waits
``HANSA_SESSION_DEFAULT_EVERY_SECONDS`` between steps.
"""

from __future__ import annotations

import asyncio
import json
from datetime import datetime, timedelta

from sqlalchemy import Connection

from hansa import errors
from hansa.domain import event, message, secrets
from hansa.domain.job import Job, SessionStepJob
from hansa.domain.project import ProjectContext
from hansa.domain.session import (
    AgentSession,
    FrameOut,
    SessionStatus,
    SessionStep,
    parse_frame,
    state_too_large,
)
from hansa.engine import llm, prompts
from hansa.engine.project_context import build_project_context
from hansa.engine.runtime.recorder import Batch, Recorder
from hansa.engine.runtime.services import Services
from hansa.engine.sessions.pace import pace_of
from hansa.engine.sessions.service import announce, ended, queue_step
from hansa.engine.sessions.step_tools import StepAnswer, StepCall
from hansa.models.base import ChatMessage
from hansa.store import conversations, llm_calls, queue
from hansa.store import sessions as rows


async def run_session_step_job(services: Services, claimed: Job) -> None:
    """Run the step the job stands for, or end the job if its session moved on."""
    work = SessionStepJob.model_validate(claimed.payload)
    tenant_id = claimed.tenant_id
    session = await services.db.read(lambda conn: rows.get(conn, tenant_id, work.session_id))
    recorder = Recorder(services, tenant_id, session.conversation_id, claimed)
    ended = _limit_reached(session, services.clock())
    if _stale(session, work, claimed) or ended is not None:
        await recorder.write(_ending(services, claimed, work, session, ended))
        return
    per_minute = services.settings.session_steps_per_minute_per_tenant
    # only a running session's steps are paced: the step a pause or a stop lets finish runs now
    running = session.status is SessionStatus.RUNNING
    wait = pace_of(services).wait_for(tenant_id, per_minute) if running else 0
    if wait:  # the tenant's steps this minute are spent: this one is put off, durably
        await recorder.write(_put_off(services, claimed, work, session, wait))
        return
    agent = await services.agents.find(tenant_id, session.agent_id)
    project = await services.db.read(
        lambda conn: build_project_context(
            conn, tenant_id, conversations.get(conn, tenant_id, session.conversation_id).project_id
        )
    )
    started = services.clock()
    answer = StepAnswer(Batch(session.conversation_id, None))
    try:
        try:
            if agent is None:  # a registered agent removed while its session ran
                raise errors.NotFound(f"agent {session.agent_id} no longer exists")
            call = StepCall(services, session, agent, project)
            await call.answer(await _prompt(services, call, project), answer)
            frame = parse_frame(answer.text, session.step, session.state)
            error = "the step's state is too large" if state_too_large(frame.state) else None
        except errors.HansaError as exc:  # a model call failed (after its attempts) or a limit
            error = secrets.mask_text(str(exc))  # a provider's answer may quote a credential
            frame = _failed(session, exc.code, error)
        batch = answer.batch
        batch.then(
            lambda conn: _record(
                services, claimed, work, answer, session, frame, error, started, conn
            )
        )
        await recorder.write(batch)
    except (errors.StaleLease, asyncio.CancelledError):  # cut: its model calls are kept
        await llm.keep(services.db, answer.calls)
        raise


_LETS_FINISH = (SessionStatus.PAUSED, SessionStatus.STOPPING)


def _stale(session: AgentSession, work: SessionStepJob, claimed: Job) -> bool:
    """Whether the job's step is no longer to run: its session moved on, or is not running
    and the step never started before. A step that did (its worker died, or it failed and
    was given back) when a pause or a stop landed runs again to its record: its tools may
    have acted already (decision 0037)."""
    if work.iteration != session.iteration + 1:
        return True
    if session.status is SessionStatus.RUNNING:
        return False
    return not (session.status in _LETS_FINISH and claimed.attempts > 1)


def _limit_reached(session: AgentSession, now: datetime) -> str | None:
    if session.status is not SessionStatus.RUNNING:
        return None
    if session.iteration >= session.max_steps:
        return "max_steps"
    runtime = session.max_runtime_seconds
    if runtime is not None and (now - session.created_at).total_seconds() >= runtime:
        return "max_runtime"
    return None


def _ending(
    services: Services, claimed: Job, work: SessionStepJob, seen: AgentSession, limit: str | None
) -> Batch:
    """End the job; when a limit is reached, end the session with it as the reason; a
    stopping session whose step never started is stopped."""
    batch = Batch(seen.conversation_id, None)

    def go(conn: Connection) -> None:
        now = services.clock()
        session = rows.get(conn, claimed.tenant_id, work.session_id, lock=True)
        reason = limit if limit is not None and not _stale(session, work, claimed) else None
        if session.status is SessionStatus.STOPPING:
            reason = "stopped"
        if reason is not None:
            stopped = ended(session, now, reason)
            rows.save(conn, stopped)
            announce(batch, stopped, stopped.agent_id)
        queue.finish(conn, claimed, now)

    batch.then(go)
    return batch


def _put_off(
    services: Services, claimed: Job, work: SessionStepJob, seen: AgentSession, wait: float
) -> Batch:
    """End the job and queue the same step ``wait`` seconds later (unless the session moved
    on meanwhile: then as :func:`_ending`)."""
    batch = Batch(seen.conversation_id, None)

    def go(conn: Connection) -> None:
        now = services.clock()
        session = rows.get(conn, claimed.tenant_id, work.session_id, lock=True)
        queue.finish(conn, claimed, now)
        if not _stale(session, work, claimed):
            later = session.model_copy(update={"next_run_at": now + timedelta(seconds=wait)})
            rows.save(conn, later)
            queue_step(conn, later, now, wait)

    batch.then(go)
    return batch


def _failed(session: AgentSession, code: str, error: str) -> FrameOut:
    """The frame of a step that failed: the cursor stays, the state is kept, and its
    ``data.error`` says why (``{code, message}``)."""
    failure = {"code": code, "message": error}
    return FrameOut(next_step=session.step, state=session.state, data={"error": failure})


async def _prompt(services: Services, call: StepCall, project: ProjectContext) -> list[ChatMessage]:
    """The step's prompt: the rules and packs of the conversation's project scope (as a
    turn's begins, decision 0039), then who the agent is (with the tool rules when it is
    offered tools) and the session's instructions, then the frame."""
    agent, session = call.agent, call.session
    frame: dict[str, object] = {"step": session.step, "state": session.state}
    if session.guidance:
        frame["guidance"] = session.guidance
    tools = call.model.agent_tools and call.toolbox.tokens() > 0
    system = (
        f"{prompts.persona(agent, tools=tools)}\n\nYou are working through a long-running "
        "session, one "
        f"step at a time, towards this goal: {session.goal}\n"
        "You are given the current step, your state, and sometimes guidance from a person "
        "(follow it). Answer with one JSON object: nextStep (the step to do next), state "
        "(everything you need to remember), text (what to tell the conversation, if "
        "anything), data, done (true when the goal is reached), notes, delaySeconds (to "
        "wait before the next step)."
    )
    return await services.scoped_prompt(
        session.tenant_id,
        project,
        call.model,
        call.model_settings.max_tokens,
        system,
        json.dumps(frame),
    )


def _record(
    services: Services,
    claimed: Job,
    work: SessionStepJob,
    answer: StepAnswer,
    before: AgentSession,
    frame: FrameOut,
    error: str | None,
    started: datetime,
    conn: Connection,
) -> None:
    """The step, the session's change, its tools' events, the step's events and the next
    job, in one transaction. A step with an ``error`` is recorded too (its frame from
    :func:`_failed` when it has none of its own); the session then fails with the error.
    A stopping session is stopped by it (unless it completes or fails); its tools' events
    are recorded in the conversation even when the session was deleted or moved on."""
    now = services.clock()
    batch = answer.batch
    for call in answer.calls:
        llm_calls.record(conn, call)
    try:
        session = rows.get(conn, claimed.tenant_id, work.session_id, lock=True)
    except errors.NotFound:  # deleted while the step ran: what its tools did is still told
        queue.finish(conn, claimed, now)
        return
    if work.iteration != session.iteration + 1 or session.status.final:
        queue.finish(conn, claimed, now)  # ended or moved on while the step ran
        return
    agent_id = session.agent_id
    iteration = session.iteration + 1
    step = SessionStep(
        session_id=session.id,
        iteration=iteration,
        step=session.step,
        next_step=frame.next_step,
        text=frame.text,
        data=frame.data,
        done=frame.done,
        notes=frame.notes,
        guidance=before.guidance,
        state=frame.state,
        tools=answer.tools or None,
        started_at=started,
        finished_at=now,
    )
    rows.append_step(conn, claimed.tenant_id, step)
    # guidance given while the step ran stays for the next one
    guidance = None if session.guidance == before.guidance else session.guidance
    status, reason = session.status, session.reason
    if error is not None:
        status, reason = SessionStatus.FAILED, error
    elif frame.done:
        status, reason = SessionStatus.COMPLETED, "done"
    elif status is SessionStatus.STOPPING:  # the stop let this step finish: now it ends
        status = SessionStatus.STOPPED
    moved = session.model_copy(
        update={
            "iteration": iteration,
            "step": frame.next_step,
            "state": frame.state if error is None else session.state,
            "guidance": guidance,
            "status": status,
            "reason": reason,
            "next_run_at": None,
            "updated_at": now,
        }
    )
    batch.event(
        event.SessionStepData(
            session_id=session.id,
            iteration=iteration,
            step=step.step,
            next_step=step.next_step,
            text=step.text,
            done=step.done,
            guidance=step.guidance,
            tools=step.tools,
        ),
        agent_id=agent_id,
    )
    if frame.text:
        batch.message(
            message.Kind.ASSISTANT,
            message.Author.ASSISTANT,
            frame.text,
            agent_id=agent_id,
            metadata={"sessionId": session.id, "iteration": iteration},
        )
    if moved.status is SessionStatus.RUNNING and iteration >= session.max_steps:
        moved = ended(moved, now, "max_steps")  # the last step it was given
    if moved.status is SessionStatus.RUNNING:
        every = session.every_seconds
        if every is None:  # no cadence of its own: the operator's default
            every = services.settings.session_default_every_seconds
        delay = max(frame.delay_seconds, every)
        if delay:
            moved = moved.model_copy(update={"next_run_at": now + timedelta(seconds=delay)})
        queue_step(conn, moved, now, delay)
    elif moved.status is not session.status:
        announce(batch, moved, agent_id)
    rows.save(conn, moved)
    queue.finish(conn, claimed, now, error=error)
