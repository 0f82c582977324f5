"""The job queue: every unit of background work, claimed with a lease.

A job is claimable when it is queued and due, or running with an expired lease (a
takeover; a claim looks for those only when asked: it reads every running job). Jobs
sharing a ``key`` never run at the same time: the claim skips a key that has a live
running job, takes only the oldest job of each key, and a partial unique index (one
running job per key) makes the database enforce it. Each claim bumps ``epoch``; writes on
a job's behalf call :func:`guard` in their transaction, so a worker whose lease was taken
over can write nothing.
"""

from __future__ import annotations

import functools
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection

from hansa import errors, tracing
from hansa.domain import job
from hansa.store import db, dbclock, direct, notify, presence, tables
from hansa.store.dbclock import Due, LeaseEnd, Now

_jobs = tables.jobs
_QUEUED = job.JobStatus.QUEUED.value
_RUNNING = job.JobStatus.RUNNING.value
_B = sa.bindparam
_IS: dict[str, sa.ColumnElement[str]] = {
    status: sa.literal_column(f"'{status}'") for status in (_QUEUED, _RUNNING)
}
"""The live statuses as literals: a condition on a key's live jobs written with them is
served by the partial index ``ix_jobs_live_key`` (a bound value proves nothing to the
planner), so it reads the key's live jobs, not every job the key ever had."""

# Statements are built once (building one costs ten times more than running it) and run
# through store.direct (decision 0007).
_ENQUEUE = _jobs.insert().values(run_at=Due()).returning(_jobs.c.id)
_ENQUEUE_CLAIMED = _jobs.insert().values(run_at=Now(), lease_until=LeaseEnd()).returning(_jobs.c.id)
_other = _jobs.alias("other")
_LIVE_SAME_KEY = (
    sa.exists()
    .where(_other.c.key == _jobs.c.key, _other.c.id != _jobs.c.id)
    .where(
        sa.or_(
            sa.and_(_other.c.status == _IS[_RUNNING], _other.c.lease_until >= Now()),
            sa.and_(_other.c.status == _IS[_QUEUED], _other.c.id < _jobs.c.id),
        )
    )
)
_QUEUED_DUE = sa.and_(_jobs.c.status == _QUEUED, _jobs.c.run_at <= Now())
_CLAIMABLE = {  # due; with takeovers, also running on an expired lease
    False: _QUEUED_DUE,
    True: sa.or_(
        _QUEUED_DUE,
        sa.and_(
            _jobs.c.status == _RUNNING,
            sa.or_(_jobs.c.lease_until < Now(), presence.Abandoned()),
        ),
    ),
}
"""By ``takeovers``: a look for expired leases, and for jobs whose owner's presence ended
(it died: store/presence.py), reads every running job (no index serves ``lease_until``: one
would cost heartbeats their HOT updates, decision 0028), so a worker looks for them once per
poll, not at every claim (issue 29)."""
_IS_RUN = _jobs.c.kind == job.JobKind.RUN.value
_CANDIDATES = {  # by lane: run jobs, or every other kind (see ``claim``); and takeovers
    (runs, takeovers): sa.select(_jobs.c.id, _jobs.c.key)
    .where(_CLAIMABLE[takeovers], _IS_RUN if runs else ~_IS_RUN)
    .where(sa.or_(_jobs.c.key.is_(None), ~_LIVE_SAME_KEY))
    .order_by(_jobs.c.id)
    .limit(_B("p_limit"))
    .with_for_update(skip_locked=True)
    for runs in (True, False)
    for takeovers in (True, False)
}
_DUE = {takeovers: sa.select(_jobs.c.id).where(c).limit(1) for takeovers, c in _CLAIMABLE.items()}
# A held job is found by its primary key alone: without statistics (a fresh schema) PostgreSQL
# served ``id = $1 AND status = 'running'`` from the partial index of running jobs or from
# ix_jobs_claim, a scan of every running job per guard, heartbeat and finish (issue 29: ~100
# rows fetched per run in a burst); the status is only checked (decision 0028).
_HELD = (
    _jobs.c.id == _B("p_id"),
    _jobs.c.epoch == _B("p_epoch"),
    direct.only_checks(_jobs.c.status) == _RUNNING,
)
# The row lock (FOR NO KEY UPDATE on PostgreSQL) is held to the commit, so a takeover's
# claim (SKIP LOCKED) cannot slip in between the check and the commit (review M1).
_GUARD = sa.select(_jobs.c.id).where(*_HELD).with_for_update(key_share=True)
_HEARTBEAT = sa.update(_jobs).where(*_HELD).values(lease_until=LeaseEnd(), updated_at=Now())
# The same, but a row locked right now (its job's step holds it to its commit) is left alone
# rather than waited for: a heartbeat that waited held the rows it had already extended, so
# their steps waited behind it in turn (a convoy; issue 29: 4.6 ms per heartbeat UPDATE).
_held = _jobs.alias("held")
_HEARTBEAT_UNLESS_BUSY = (
    sa.update(_jobs)
    .where(
        _jobs.c.id
        == sa.select(_held.c.id)
        .where(
            _held.c.id == _B("p_id"),
            _held.c.epoch == _B("p_epoch"),
            direct.only_checks(_held.c.status) == _RUNNING,
        )
        .with_for_update(key_share=True, skip_locked=True)
        .scalar_subquery()
    )
    .values(lease_until=LeaseEnd(), updated_at=Now())
)
_LIVE = _jobs.c.status.in_([_IS[_QUEUED], _IS[_RUNNING]])
_LIVE_OF_KEY = sa.select(_jobs.c.status).where(_jobs.c.key == _B("p_key"), _LIVE)
_LIVE_JOBS_OF_KEY = sa.select(_jobs.c.id, _jobs.c.status, _jobs.c.attempts, _jobs.c.payload).where(
    _jobs.c.key == _B("p_key"), _LIVE
)
_EPOCH = sa.select(_jobs.c.epoch).where(_jobs.c.id == _B("p_id"))
_FINISH = (
    sa.update(_jobs)
    .where(*_HELD)
    .values(
        status=_B("p_status"), last_error=_B("p_error"), lease_until=None, updated_at=_B("p_now")
    )
)
_RELEASE = (
    sa.update(_jobs)
    .where(*_HELD)
    .values(
        status=_QUEUED, run_at=Due(), lease_until=None, last_error=_B("p_error"), updated_at=Now()
    )
)
_HURRY = (
    sa.update(_jobs)
    .where(_jobs.c.key == _B("p_key"), _jobs.c.status == _IS[_QUEUED], _jobs.c.run_at > Now())
    .values(run_at=Now())
)
_CANCEL = (
    sa.update(_jobs)
    .where(_jobs.c.id == _B("p_id"))
    .values(
        status=job.JobStatus.DONE.value,
        epoch=_jobs.c.epoch + 1,
        last_error="cancelled",
        lease_until=None,
        updated_at=_B("p_now"),
    )
)


@functools.cache
def _claim(count: int) -> sa.Update:
    # one statement per number of jobs claimed at once (at most ``limit``): parameters
    # p_id_0 … p_id_<count-1>, not an expanding IN list
    ids: list[sa.BindParameter[Any]] = [_B(f"p_id_{i}") for i in range(count)]
    return (
        sa.update(_jobs)
        .where(_jobs.c.id.in_(ids))
        .values(
            status=_RUNNING,
            lease_owner=_B("p_owner"),
            lease_until=LeaseEnd(),
            epoch=_jobs.c.epoch + 1,
            attempts=_jobs.c.attempts + 1,
            updated_at=Now(),
        )
        .returning(*_jobs.c)
    )


def enqueue(
    conn: Connection,
    tenant_id: str,
    kind: job.JobKind,
    payload: dict[str, Any],
    now: datetime,
    *,
    key: str | None = None,
    max_attempts: int = 3,
    run_at: datetime | None = None,
) -> int:
    """Add a job in the caller's transaction (with the change that needs it); returns its id.
    The payload carries the caller's trace context (``tracing.carried``)."""
    payload = tracing.carried(payload, db.caller_trace(conn))
    job_id = direct.scalar(
        conn,
        _ENQUEUE,
        {
            "tenant_id": tenant_id,
            "kind": kind.value,
            "key": key,
            "payload": payload,
            "status": _QUEUED,
            "attempts": 0,
            "max_attempts": max_attempts,
            "epoch": 0,
            "created_at": now,
            "updated_at": now,
            **dbclock.due(conn, now, run_at or now),
        },
    )
    notify.job_enqueued(conn, kind.value)
    db.enqueued(conn)  # this process's worker is woken after the commit
    return int(job_id)


def enqueue_claimed(
    conn: Connection,
    tenant_id: str,
    kind: job.JobKind,
    payload: dict[str, Any],
    now: datetime,
    *,
    owner: str,
    lease_until: datetime,
    key: str | None = None,
    max_attempts: int = 3,
) -> job.Job:
    """Add a job already claimed by ``owner`` (the worker that creates it runs it).

    Saves a claim round trip; if that worker dies, the lease expires and another takes it.
    A keyed job may be added this way only while :func:`live_statuses` of its key is empty.
    """
    payload = tracing.carried(payload, db.caller_trace(conn))
    values = {
        "tenant_id": tenant_id,
        "kind": kind.value,
        "key": key,
        "payload": payload,
        "status": _RUNNING,
        "attempts": 1,
        "max_attempts": max_attempts,
        "lease_owner": owner,
        "epoch": 1,
        "created_at": now,
        "updated_at": now,
    }
    values.update(dbclock.lease(conn, now, lease_until - now))
    job_id = int(direct.scalar(conn, _ENQUEUE_CLAIMED, values))
    return job.Job(
        id=job_id,
        tenant_id=tenant_id,
        kind=kind,
        key=key,
        payload=payload,
        attempts=1,
        max_attempts=max_attempts,
        epoch=1,
        lease_owner=owner,
        lease_until=lease_until,
    )


def hurry(conn: Connection, key: str, now: datetime) -> None:
    """Make the queued job of ``key`` due now, if it was due later."""
    direct.execute(conn, _HURRY, {"p_key": key, **dbclock.now(conn, now)})
    db.enqueued(conn)  # due now: this process's worker looks after the commit


def live_statuses(conn: Connection, key: str) -> set[str]:
    """The statuses (queued, running) of the unfinished jobs of ``key``."""
    return {row["status"] for row in direct.rows(conn, _LIVE_OF_KEY, {"p_key": key})}


def any_due(conn: Connection, now: datetime, *, takeovers: bool = True) -> bool:
    """True when some job could be claimed now (a cheap read before a claiming write);
    without ``takeovers``, only a queued job counts, not a running one whose lease expired."""
    return direct.first(conn, _DUE[takeovers], dbclock.now(conn, now)) is not None


def claim(
    conn: Connection,
    owner: str,
    now: datetime,
    *,
    lease: timedelta,
    limit: int,
    runs: bool = False,
    takeovers: bool = True,
) -> list[job.Job]:
    """Claim up to ``limit`` due jobs for ``owner``, one per key, oldest first: run jobs
    when ``runs``, else jobs of every other kind (a worker keeps slots for each lane, so
    runs waiting on long tasks never hold up turns). With ``takeovers``, running jobs whose
    lease expired are due too: looking for them reads every running job.

    Run it in a write transaction of its own (``Database.write``).
    """
    if limit <= 0:
        return []
    chosen: list[int] = []
    keys: set[str] = set()
    found = direct.rows(
        conn, _CANDIDATES[runs, takeovers], {**dbclock.now(conn, now), "p_limit": limit * 2}
    )
    for row in found:
        job_id, key = row["id"], row["key"]
        if key is not None:
            if key in keys:
                continue
            keys.add(key)
        chosen.append(int(job_id))
        if len(chosen) == limit:
            break
    if not chosen:
        return []
    params: dict[str, Any] = {f"p_id_{i}": job_id for i, job_id in enumerate(chosen)}
    params.update(p_owner=owner, **dbclock.lease(conn, now, lease))
    try:
        with conn.begin_nested():
            rows = direct.rows(conn, _claim(len(chosen)), params)
    except sa.exc.IntegrityError:
        # Another process claimed a job of the same key between our read and write.
        return []
    return sorted((_job(r) for r in rows), key=lambda j: j.id)


def guard(conn: Connection, claimed: job.Job) -> None:
    """Raise StaleLease unless ``claimed`` still holds its job (same epoch, still running);
    on PostgreSQL the job's row stays locked until the caller's transaction ends."""
    if direct.first(conn, _GUARD, {"p_id": claimed.id, "p_epoch": claimed.epoch}) is None:
        raise errors.StaleLease(f"job {claimed.id} epoch {claimed.epoch} no longer holds its lease")


def heartbeat(
    conn: Connection,
    claimed: job.Job,
    now: datetime,
    lease: timedelta,
    *,
    unless_busy: bool = False,
) -> bool:
    """Extend the lease; False when the job was taken over or finished meanwhile, or, when
    ``unless_busy``, while another transaction holds its row (on PostgreSQL: its own step,
    say; not waited for)."""
    params = {"p_id": claimed.id, "p_epoch": claimed.epoch, **dbclock.lease(conn, now, lease)}
    statement = _HEARTBEAT_UNLESS_BUSY if unless_busy else _HEARTBEAT
    return direct.execute(conn, statement, params) == 1


def taken_over(conn: Connection, claimed: job.Job) -> bool:
    """True when another claim (a newer epoch) owns the job now; False if it just finished."""
    return bool(direct.scalar(conn, _EPOCH, {"p_id": claimed.id}) != claimed.epoch)


def finish(
    conn: Connection,
    claimed: job.Job,
    now: datetime,
    *,
    error: str | None = None,
) -> None:
    """Mark the job done (or failed with ``error``) in the caller's transaction.

    Raises StaleLease, rolling back the caller's transaction, if the lease was lost.
    """
    status = job.JobStatus.FAILED if error is not None else job.JobStatus.DONE
    params = {
        "p_id": claimed.id,
        "p_epoch": claimed.epoch,
        "p_status": status.value,
        "p_error": error,
        "p_now": now,
    }
    if direct.execute(conn, _FINISH, params) != 1:
        raise errors.StaleLease(f"job {claimed.id} epoch {claimed.epoch} no longer holds its lease")


def release(
    conn: Connection, claimed: job.Job, now: datetime, *, error: str, delay: timedelta
) -> bool:
    """Give the job back to the queue after a failure its handler did not handle: it is due
    again after ``delay``, its attempts counted; False if it was no longer held."""
    params = {
        "p_id": claimed.id,
        "p_epoch": claimed.epoch,
        "p_error": error,
        **dbclock.now(conn, now),
        **dbclock.due(conn, now, now + delay),
    }
    return direct.execute(conn, _RELEASE, params) == 1


def cancel_key_job(
    conn: Connection,
    key: str,
    payload_match: dict[str, Any],
    now: datetime,
    *,
    unstarted_only: bool = False,
) -> bool:
    """End the queued or running job of ``key`` whose payload contains ``payload_match``
    (with ``unstarted_only``, only one that never started: queued, no attempt yet); whether
    a matching job that started is left (running, or back in the queue after an attempt).

    Its epoch moves on, so a worker still running it can write nothing more; the key's
    next job may start, so this process's worker looks after the commit.
    """
    left = False
    for row in direct.rows(conn, _LIVE_JOBS_OF_KEY, {"p_key": key}):
        payload = row["payload"]
        if not all(payload.get(k) == v for k, v in payload_match.items()):
            continue
        if unstarted_only and (row["status"] != _QUEUED or row["attempts"] > 0):
            left = True
            continue
        direct.execute(conn, _CANCEL, {"p_id": row["id"], "p_now": now})
        db.enqueued(conn)
    return left


def _job(row: direct.Row) -> job.Job:
    return job.Job.model_validate(row)
