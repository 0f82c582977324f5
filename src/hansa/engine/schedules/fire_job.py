"""Fire a schedule: its action, its bookkeeping and its next firing in one transaction.

The job is due at a cron time. Its worker holds it with a lease and every write checks the
lease (``queue.guard`` under the job's row lock), so one worker fires it: the action (a user
message and its turn, or a run created and approved), the schedule's count, the job's end and
the next firing's job commit together or not at all. A worker that dies before the commit
leaves the job to be claimed again; one that dies after leaves nothing to repeat.

Missed times: the next firing is the first cron time after the later of now and the time this
one was for. A schedule whose time passed while every process was down fires once when a
worker starts, then keeps to its cron; the times missed meanwhile are not made up.
"""

from __future__ import annotations

import logging
from datetime import datetime

from sqlalchemy import Connection

from hansa import errors
from hansa.domain import conversation, job, message, turn
from hansa.domain.base import new_id
from hansa.domain.schedule import MessageAction, RunAction, RunTask, Schedule
from hansa.engine import runs
from hansa.engine.rules.enqueue import enqueue_if_ruled
from hansa.engine.runs.drafts import TaskDraft, default_summary
from hansa.engine.runtime.recorder import Batch, Recorder
from hansa.engine.runtime.services import Services
from hansa.engine.schedules import cron, service
from hansa.engine.sessions import service as sessions
from hansa.store import conversations, queue, turns
from hansa.store import schedules as rows

log = logging.getLogger(__name__)

TITLE_CHARS = 60
"""A new conversation's title: the schedule's name, cut to this length."""


async def run_schedule_job(services: Services, claimed: job.Job) -> None:
    """Fire the schedule and queue its next firing, in one transaction guarded by the job."""
    work = job.ScheduleJob.model_validate(claimed.payload)
    tenant_id = claimed.tenant_id
    try:
        schedule = await services.db.read(rows.get, tenant_id, work.schedule_id)
    except errors.NotFound:
        schedule = None
    if schedule is None or (not schedule.enabled and not work.now):
        await services.db.write(lambda conn: queue.finish(conn, claimed, services.clock()))
        return
    now = services.clock()
    due = (
        None if work.now else cron.next_after(schedule.cron, schedule.timezone, max(now, work.due))
    )
    batch = _firing(services, schedule, now)

    def bookkeeping(conn: Connection) -> None:
        _close(conn, services, claimed, schedule, now, due, error=None)

    batch.then(bookkeeping)
    try:
        await Recorder(services, tenant_id, batch.conversation_id, claimed).write(batch)
    except errors.UserError as exc:  # the action cannot happen now: say why, keep the cron
        log.info("schedule %s did not fire: %s", schedule.id, exc)
        error = f"{exc.code}: {exc}"

        def failed(conn: Connection) -> None:
            queue.guard(conn, claimed)
            _close(conn, services, claimed, schedule, now, due, error=error)

        await services.db.write(failed)


def _close(
    conn: Connection,
    services: Services,
    claimed: job.Job,
    schedule: Schedule,
    now: datetime,
    due: datetime | None,
    *,
    error: str | None,
) -> None:
    rows.fired(
        conn,
        schedule.tenant_id,
        schedule.id,
        now,
        error=error,
        next_run_at=due,
        counted=error is None,
    )
    queue.finish(conn, claimed, now)
    if due is not None:
        service.queue_firing(conn, services, schedule, due, now)


def _firing(services: Services, schedule: Schedule, now: datetime) -> Batch:
    action = schedule.action
    if isinstance(action, MessageAction):
        return _message(services, schedule, action, now)
    return _run(services, schedule, action)


def _message(services: Services, schedule: Schedule, action: MessageAction, now: datetime) -> Batch:
    tenant_id = schedule.tenant_id
    conversation_id = action.conversation_id or new_id()
    turn_id = new_id()
    batch = Batch(conversation_id, turn_id)
    text = action.content.strip()
    meta = {"scheduleId": schedule.id, "firing": schedule.fired + 1}
    message_id = batch.message(
        message.Kind.USER, message.Author.USER, text, agent_id=None, metadata=meta
    )
    work = job.TurnJob(
        turn_id=turn_id,
        conversation_id=conversation_id,
        message_id=message_id,
        active_agent_id=action.agent_id,
    )

    def store(conn: Connection) -> None:
        if action.conversation_id is None:
            _open_conversation(conn, services, schedule, action, conversation_id, now)
        convo = conversations.get(conn, tenant_id, conversation_id)
        if convo.state is conversation.State.ARCHIVED:
            raise errors.Conflict(f"conversation {conversation_id} is archived")
        busy = turns.unfinished(conn, tenant_id, conversation_id)
        if len(busy) >= services.settings.max_queued_turns:
            raise errors.RateLimited(
                f"conversation {conversation_id} already has {len(busy)} messages waiting",
                retry_after=60,
            )
        new_turn = turn.Turn(
            id=turn_id,
            conversation_id=conversation_id,
            message_id=message_id,
            status=turn.TurnStatus.QUEUED,
            agent_id=None,
            created_at=now,
            finished_at=None,
            error=None,
        )
        turns.create(conn, tenant_id, new_turn)
        queue.enqueue(
            conn, tenant_id, job.JobKind.TURN, job.payload(work), now, key=conversation_id
        )
        sessions.guide_from_message(conn, tenant_id, conversation_id, text, now)

    batch.then(store)
    return batch


def _open_conversation(
    conn: Connection,
    services: Services,
    schedule: Schedule,
    action: MessageAction,
    conversation_id: str,
    now: datetime,
) -> None:
    convo = conversation.Conversation(
        id=conversation_id,
        tenant_id=schedule.tenant_id,
        project_id=action.project_id,
        title=schedule.name[:TITLE_CHARS],
        state=conversation.State.IDLE,
        current_agent=action.agent_id or services.supervisor.id,
        last_seq=0,
        created_at=now,
        updated_at=now,
        metadata={"scheduleId": schedule.id},
    )
    conversations.create(conn, convo)
    enqueue_if_ruled(
        conn, schedule.tenant_id, "conversation.created", conversation_id, action.project_id, now
    )


def _run(services: Services, schedule: Schedule, action: RunAction) -> Batch:
    tenant_id = schedule.tenant_id
    batch = Batch(action.conversation_id, None)
    run_id = new_id()
    drafts = [_draft(t, action.project_id) for t in action.tasks]
    new = runs.NewRun(
        action.conversation_id,
        action.title,
        action.project_id,
        drafts,
        metadata={"scheduleId": schedule.id},
    )
    run_batch = batch.for_run(run_id)
    batch.then(
        runs.on_run(services, tenant_id, run_id, run_batch, lambda c: runs.store_run(c, new))
    )
    batch.then(runs.approving(services, tenant_id, run_id, run_batch))
    return run_batch


def _draft(task: RunTask, project_id: str | None) -> TaskDraft:
    return TaskDraft(
        step_group=task.step_group,
        task_type=task.task_type,
        parameters=dict(task.parameters),
        created_by=task.created_by_agent_id,
        summary=task.summary or default_summary(task.task_type, task.parameters),
        sequence_order=task.sequence_order,
        project_id=task.project_id or project_id,
        ref=task.ref,
    )
