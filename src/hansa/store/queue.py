"""The job queue: every unit of background work, claimed with a lease.

A job is claimable when it is queued and due, or running with an expired lease
(a takeover). Jobs sharing a ``key`` never run at the same time: the claim skips
a key that has a live running job, takes only the oldest job of each key, and a
partial unique index (one running job per key) makes the database enforce it.
Each claim bumps ``epoch``; writes on a job's behalf call :func:`guard` in
their transaction, so a worker whose lease was taken over can write nothing.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from hansa import errors
from hansa.domain import job
from hansa.store import tables
from hansa.store.db import Database

_jobs = tables.jobs
_QUEUED = job.JobStatus.QUEUED.value
_RUNNING = job.JobStatus.RUNNING.value


async def enqueue(
    conn: AsyncConnection,
    tenant_id: str,
    kind: job.JobKind,
    payload: dict[str, Any],
    now: datetime,
    *,
    key: str | None = None,
    max_attempts: int = 3,
) -> int:
    """Add a job in the caller's transaction (with the change that needs it); returns its id."""
    result = await conn.execute(
        _jobs.insert()
        .values(
            tenant_id=tenant_id,
            kind=kind.value,
            key=key,
            payload=payload,
            status=_QUEUED,
            run_at=now,
            attempts=0,
            max_attempts=max_attempts,
            epoch=0,
            created_at=now,
            updated_at=now,
        )
        .returning(_jobs.c.id)
    )
    return int(result.scalar_one())


async def claim(
    db: Database, owner: str, now: datetime, *, lease: timedelta, limit: int
) -> list[job.Job]:
    """Claim up to ``limit`` due jobs for ``owner``, one per key, oldest first."""
    if limit <= 0:
        return []
    try:
        async with db.transaction() as conn:
            ids = await _claimable_ids(conn, now, limit)
            if not ids:
                return []
            rows = (
                (
                    await conn.execute(
                        sa.update(_jobs)
                        .where(_jobs.c.id.in_(ids))
                        .values(
                            status=_RUNNING,
                            lease_owner=owner,
                            lease_until=now + lease,
                            epoch=_jobs.c.epoch + 1,
                            attempts=_jobs.c.attempts + 1,
                            updated_at=now,
                        )
                        .returning(*_jobs.c)
                    )
                )
                .mappings()
                .all()
            )
    except sa.exc.IntegrityError:
        # Another process claimed a job of the same key between our read and write.
        return []
    return sorted((_job(r) for r in rows), key=lambda j: j.id)


async def _claimable_ids(conn: AsyncConnection, now: datetime, limit: int) -> list[int]:
    other = _jobs.alias("other")
    live_same_key = (
        sa.exists()
        .where(other.c.key == _jobs.c.key, other.c.id != _jobs.c.id)
        .where(
            sa.or_(
                sa.and_(other.c.status == _RUNNING, other.c.lease_until >= now),
                sa.and_(other.c.status == _QUEUED, other.c.id < _jobs.c.id),
            )
        )
    )
    due = sa.or_(
        sa.and_(_jobs.c.status == _QUEUED, _jobs.c.run_at <= now),
        sa.and_(_jobs.c.status == _RUNNING, _jobs.c.lease_until < now),
    )
    query = (
        sa.select(_jobs.c.id, _jobs.c.key)
        .where(due, sa.or_(_jobs.c.key.is_(None), ~live_same_key))
        .order_by(_jobs.c.id)
        .limit(limit * 2)
        .with_for_update(skip_locked=True)
    )
    chosen: list[int] = []
    keys: set[str] = set()
    for job_id, key in (await conn.execute(query)).all():
        if key is not None and key in keys:
            continue
        if key is not None:
            keys.add(key)
        chosen.append(int(job_id))
        if len(chosen) == limit:
            break
    return chosen


async def guard(conn: AsyncConnection, claimed: job.Job) -> None:
    """Raise StaleLease unless ``claimed`` still holds its job (same epoch, still running)."""
    row = (
        await conn.execute(sa.select(_jobs.c.epoch, _jobs.c.status).where(_jobs.c.id == claimed.id))
    ).first()
    if row is None or row.epoch != claimed.epoch or row.status != _RUNNING:
        raise errors.StaleLease(f"job {claimed.id} epoch {claimed.epoch} no longer holds its lease")


async def heartbeat(db: Database, claimed: job.Job, now: datetime, lease: timedelta) -> bool:
    """Extend the lease; False when the job was taken over or finished meanwhile."""
    async with db.transaction() as conn:
        result = await conn.execute(
            sa.update(_jobs)
            .where(
                _jobs.c.id == claimed.id,
                _jobs.c.epoch == claimed.epoch,
                _jobs.c.status == _RUNNING,
            )
            .values(lease_until=now + lease, updated_at=now)
        )
    return result.rowcount == 1


async def finish(
    conn: AsyncConnection,
    claimed: job.Job,
    now: datetime,
    *,
    error: str | None = None,
) -> None:
    """Mark the job done (or failed with ``error``) in the caller's transaction.

    Raises StaleLease, rolling back the caller's transaction, if the lease was lost.
    """
    status = job.JobStatus.FAILED if error is not None else job.JobStatus.DONE
    result = await conn.execute(
        sa.update(_jobs)
        .where(
            _jobs.c.id == claimed.id,
            _jobs.c.epoch == claimed.epoch,
            _jobs.c.status == _RUNNING,
        )
        .values(status=status.value, last_error=error, lease_until=None, updated_at=now)
    )
    if result.rowcount != 1:
        raise errors.StaleLease(f"job {claimed.id} epoch {claimed.epoch} no longer holds its lease")


async def counts(conn: AsyncConnection) -> dict[str, int]:
    """How many jobs are in each status."""
    rows = await conn.execute(sa.select(_jobs.c.status, sa.func.count()).group_by(_jobs.c.status))
    return {status: int(n) for status, n in rows.all()}


def _job(row: sa.RowMapping) -> job.Job:
    return job.Job(
        id=int(row["id"]),
        tenant_id=row["tenant_id"],
        kind=job.JobKind(row["kind"]),
        key=row["key"],
        payload=row["payload"],
        attempts=row["attempts"],
        epoch=row["epoch"],
        lease_owner=row["lease_owner"],
        lease_until=row["lease_until"],
    )
