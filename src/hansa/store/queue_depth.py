"""How many jobs wait and run, by kind: read for ``GET /metrics``, never on a hot path."""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy import Connection

from hansa.domain.job import JobKind, JobStatus
from hansa.store import tables
from hansa.store.db import growing

_jobs = tables.jobs
_KINDS = frozenset(k.value for k in JobKind)

_DEPTH = (
    sa.select(_jobs.c.kind, _jobs.c.status, sa.func.count())
    .where(_jobs.c.status.in_([JobStatus.QUEUED.value, JobStatus.RUNNING.value]))
    .group_by(_jobs.c.kind, _jobs.c.status)
)


@growing
def depth(conn: Connection) -> dict[tuple[JobKind, JobStatus], int]:
    """Queued and running jobs of every tenant, by (kind, status); absent pairs have none."""
    out: dict[tuple[JobKind, JobStatus], int] = {}
    for kind, status, count in conn.execute(_DEPTH):
        if kind in _KINDS:  # a kind only a newer release knows is not this export's
            out[JobKind(kind), JobStatus(status)] = int(count)
    return out
