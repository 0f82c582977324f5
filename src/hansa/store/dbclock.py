"""The database's clock for leases and due times (review M2, issue 15 item 2).

Workers on several hosts share PostgreSQL; their clocks drift. Lease expiry and due times
are therefore computed by PostgreSQL (``now()``, the transaction's start), never by the
worker: a worker whose clock runs minutes ahead neither steals live jobs nor loses its own.
SQLite serves one host, so there the statements take the caller's clock as parameters.

Each element compiles per dialect: on SQLite to the parameter (``:p_now``, ``:p_until``,
``:p_run_at``), on PostgreSQL to ``now()`` plus a number of seconds (``:p_lease_seconds``,
``:p_delay_seconds``). Callers pass both; each dialect's statement reads what it needs.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.expression import ColumnElement

from hansa.store.types import UtcDateTime

_B = sa.bindparam


class _Moment(ColumnElement[Any]):
    """``now()`` plus an optional number of seconds, by the database's clock."""

    inherit_cache = True
    type = UtcDateTime()
    local: str
    """The parameter holding the caller's time (SQLite)."""
    seconds: str | None
    """The parameter holding the seconds to add to the database's ``now()`` (PostgreSQL)."""


class Now(_Moment):
    inherit_cache = True
    local, seconds = "p_now", None


class LeaseEnd(_Moment):
    inherit_cache = True
    local, seconds = "p_until", "p_lease_seconds"


class Due(_Moment):
    inherit_cache = True
    local, seconds = "p_run_at", "p_delay_seconds"


@compiles(_Moment)
def _on_the_callers_clock(element: _Moment, compiler: Any, **kw: Any) -> str:
    return str(compiler.process(_B(element.local, type_=UtcDateTime()), **kw))


@compiles(_Moment, "postgresql")
def _on_the_databases_clock(element: _Moment, compiler: Any, **kw: Any) -> str:
    if element.seconds is None:
        return "now()"
    seconds = compiler.process(_B(element.seconds, type_=sa.Float()), **kw)
    return f"(now() + make_interval(secs => {seconds}))"


def _on_postgres(conn: sa.Connection) -> bool:
    return conn.dialect.name == "postgresql"


def now(conn: sa.Connection, local: datetime) -> dict[str, Any]:
    """The parameters of :class:`Now`."""
    return {} if _on_postgres(conn) else {"p_now": local}


def lease(conn: sa.Connection, local: datetime, length: timedelta) -> dict[str, Any]:
    """The parameters of :class:`LeaseEnd`: ``length`` from now."""
    if _on_postgres(conn):
        return {"p_lease_seconds": length.total_seconds()}
    return {"p_now": local, "p_until": local + length}


def due(conn: sa.Connection, local: datetime, at: datetime) -> dict[str, Any]:
    """The parameters of :class:`Due`: ``at`` on the caller's clock, so that far from now
    on the database's (never in the past)."""
    if _on_postgres(conn):
        return {"p_delay_seconds": max(0.0, (at - local).total_seconds())}
    return {"p_run_at": at}
