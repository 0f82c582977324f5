"""Trigger jobs (a new conversation, a handoff, a context change) and timer jobs.

A trigger job is enqueued, keyed by its conversation, in the transaction that made the
change, and only when the tenant has rules for that trigger. A timer job is due at its
rule's next firing; it fires the rule in the rule's conversation and, in the same
transaction, queues the next firing while the rule is enabled: at most one is live per
rule, and a restart loses none. Both read and evaluate the rules (off the event loop)
before the transaction that records the firings and applies their actions.
"""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import Connection

from hansa import errors
from hansa.domain import job
from hansa.domain.conversation import Conversation
from hansa.domain.rules import Rule
from hansa.engine.runtime.recorder import Batch, Recorder
from hansa.engine.runtime.services import Services
from hansa.engine.triggers import actions
from hansa.engine.triggers.fire import evaluated, facts_of, fire
from hansa.store import conversations, queue
from hansa.store import rules as rule_rows
from hansa.store.db import growing


async def run_trigger_job(services: Services, claimed: job.Job) -> None:
    """Fire the trigger for its conversation, in one transaction guarded by the job."""
    work = job.TriggerJob.model_validate(claimed.payload)
    tenant_id = claimed.tenant_id
    trigger = work.trigger
    batch = Batch(work.conversation_id, None)

    @growing  # the tenant's rules: on a reader thread, as ``rule_rows.for_trigger`` is
    def look(conn: Connection) -> tuple[Conversation, list[Rule]]:
        convo = conversations.get(conn, tenant_id, work.conversation_id)
        return convo, rule_rows.for_trigger(conn, tenant_id, trigger, convo.project_id)

    convo, found = await services.db.read(look)
    facts = facts_of(convo, **work.facts)
    firings = await evaluated(services, found, trigger, facts)  # before the transaction

    def go(conn: Connection) -> None:
        scene = actions.Scene(services, tenant_id, convo.id, convo.project_id, batch)
        fire(scene, found, trigger, facts, firings)
        queue.finish(conn, claimed, services.clock())

    batch.then(go)
    await Recorder(services, tenant_id, work.conversation_id, claimed).write(batch)


def schedule_timer(conn: Connection, services: Services, rule: Rule, fired: int = 0) -> None:
    """Queue the rule's next firing unless one is queued already (or it is off)."""
    if not rule.enabled or rule.schedule is None:
        return
    key = f"timer:{rule.id}"
    if job.JobStatus.QUEUED.value in queue.live_statuses(conn, key):
        return
    now = services.clock()
    due = now + timedelta(seconds=rule.schedule.every_seconds)
    work = job.payload(job.TimerJob(rule_id=rule.id, fired=fired))
    queue.enqueue(conn, rule.tenant_id, job.JobKind.TIMER, work, now, key=key, run_at=due)


async def run_timer_job(services: Services, claimed: job.Job) -> None:
    """Fire a timer rule in its conversation and queue its next firing, in one transaction."""
    work = job.TimerJob.model_validate(claimed.payload)
    tenant_id = claimed.tenant_id
    rule = await _current(services, tenant_id, work.rule_id)
    if rule is None or rule.schedule is None or not rule.enabled:
        await services.db.write(lambda conn: queue.finish(conn, claimed, services.clock()))
        return
    conversation_id = rule.schedule.conversation_id
    batch = Batch(conversation_id, None)
    timer = {
        "ruleId": rule.id,
        "fired": work.fired + 1,
        "everySeconds": rule.schedule.every_seconds,
    }

    convo = await services.db.read(conversations.get, tenant_id, conversation_id)
    facts = facts_of(convo, timer=timer)
    firings = await evaluated(services, [rule], "timer.fired", facts)  # before the transaction

    def go(conn: Connection) -> None:
        scene = actions.Scene(services, tenant_id, convo.id, convo.project_id, batch)
        fire(scene, [rule], "timer.fired", facts, firings)
        queue.finish(conn, claimed, services.clock())
        schedule_timer(conn, services, rule, fired=work.fired + 1)

    batch.then(go)
    await Recorder(services, tenant_id, conversation_id, claimed).write(batch)


async def _current(services: Services, tenant_id: str, rule_id: str) -> Rule | None:
    try:
        return await services.db.read(rule_rows.get, tenant_id, rule_id)
    except errors.NotFound:
        return None
