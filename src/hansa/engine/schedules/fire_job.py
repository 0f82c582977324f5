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
from hansa.domain import job
from hansa.domain.base import new_id
from hansa.domain.schedule import MessageAction, RunAction, RunTask, Schedule
from hansa.engine import runs
from hansa.engine.runtime.opening import NewConversation, opening_conversation
from hansa.engine.runtime.recorder import Batch, Recorder
from hansa.engine.runtime.services import Services
from hansa.engine.schedules import cron, service
from hansa.engine.turns import chat
from hansa.store import queue
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

    def bookkeeping(conn: Connection) -> None:
        _close(conn, services, claimed, schedule, now, due, error=None)

    try:
        batch = _firing(services, schedule)
        batch.then(bookkeeping)
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


def _firing(services: Services, schedule: Schedule) -> Batch:
    action = schedule.action
    if isinstance(action, MessageAction):
        return _message(services, schedule, action)
    return _run(services, schedule, action)


def _message(services: Services, schedule: Schedule, action: MessageAction) -> Batch:
    """The schedule's message, posted as a user's is (``chat.posting``: the same limits,
    checks and turn), to a conversation opened for it unless the action names one."""
    tenant_id = schedule.tenant_id
    batch = Batch(action.conversation_id or new_id(), new_id())
    if action.conversation_id is None:
        new = NewConversation(
            batch.conversation_id,
            project_id=action.project_id,
            title=schedule.name[:TITLE_CHARS],
            agent_id=action.agent_id,
            metadata={"scheduleId": schedule.id},
            agent_field="action.agentId",
        )
        batch.then(opening_conversation(services, tenant_id, new))
    chat.posting(
        services,
        tenant_id,
        batch,
        action.content,
        active_agent_id=action.agent_id,
        metadata={"scheduleId": schedule.id, "firing": schedule.fired + 1},
    )
    return batch


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


def _draft(task: RunTask, project_id: str | None) -> runs.TaskDraft:
    return runs.TaskDraft(
        step_group=task.step_group,
        task_type=task.task_type,
        parameters=dict(task.parameters),
        created_by=task.created_by_agent_id,
        summary=task.summary or runs.default_summary(task.task_type, task.parameters),
        sequence_order=task.sequence_order,
        project_id=task.project_id or project_id,
        ref=task.ref,
    )
