"""Agent sessions and their append-only steps."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection

from hansa import errors
from hansa.domain.session import AgentSession, SessionStep
from hansa.store import direct, tables
from hansa.store.db import growing

_s = tables.agent_sessions
_st = tables.agent_session_steps
_B = sa.bindparam

STEPS_PAGE = 100
"""Steps one read returns at most."""

# Statements are built once and run through store.direct (decision 0007).
_INSERT = _s.insert()
_GET = sa.select(_s).where(
    _s.c.id == _B("p_id"), direct.only_checks(_s.c.tenant_id) == _B("p_tenant")
)
_LOCK = _GET.with_for_update()
_INSERT_STEP = _st.insert()
_STEPS_AFTER = (
    sa.select(_st)
    .where(_st.c.session_id == _B("p_id"), _st.c.iteration > _B("p_after"))
    .order_by(_st.c.iteration)
    .limit(_B("p_limit"))
)
_OF_CONVERSATION = sa.select(_s).where(
    _s.c.conversation_id == _B("p_conversation"),
    _s.c.tenant_id == _B("p_tenant"),
    _s.c.status == "running",
)
_DELETE_STEPS = sa.delete(_st).where(_st.c.session_id == _B("p_id"))
_DELETE = sa.delete(_s).where(_s.c.id == _B("p_id"), _s.c.tenant_id == _B("p_tenant"))
_FIELDS = (
    "status",
    "iteration",
    "step",
    "state",
    "guidance",
    "next_run_at",
    "reason",
    "updated_at",
)


def live_count(conn: Connection, tenant_id: str) -> int:
    """How many of the tenant's sessions are running or paused (not ended)."""
    query = sa.select(sa.func.count()).where(
        _s.c.tenant_id == tenant_id, _s.c.status.in_(("running", "paused"))
    )
    return int(conn.execute(query).scalar_one())


def _session(row: Any) -> AgentSession:
    return AgentSession.model_validate(dict(row))


def create(conn: Connection, session: AgentSession) -> None:
    """Insert a new session."""
    values = {c.name: getattr(session, c.name) for c in _s.columns}
    values["status"] = session.status.value
    direct.execute(conn, _INSERT, values)


def get(conn: Connection, tenant_id: str, session_id: str, *, lock: bool = False) -> AgentSession:
    """The session, or NotFound (also for another tenant's id); ``lock`` holds its row to
    the end of the transaction (control and steps of one session take turns)."""
    statement = _LOCK if lock else _GET
    row = direct.first(conn, statement, {"p_id": session_id, "p_tenant": tenant_id})
    if row is None:
        raise errors.NotFound(f"agent session {session_id} not found")
    return _session(row)


_SAVE = (
    sa.update(_s)
    .where(_s.c.id == _B("p_id"))
    .values({name: _B(f"p_{name}", type_=_s.c[name].type) for name in _FIELDS})
)


def save(conn: Connection, session: AgentSession) -> None:
    """Write the session's changing fields."""
    values = {f"p_{name}": getattr(session, name) for name in _FIELDS}
    values["p_status"] = session.status.value
    direct.execute(conn, _SAVE, {**values, "p_id": session.id})


def append_step(conn: Connection, tenant_id: str, step: SessionStep) -> None:
    """Record a step; a second record of the same iteration is refused by the key."""
    values = {c.name: getattr(step, c.name) for c in _st.columns if c.name != "tenant_id"}
    direct.execute(conn, _INSERT_STEP, {**values, "tenant_id": tenant_id})


def steps_after(
    conn: Connection, session_id: str, after: int, limit: int = STEPS_PAGE
) -> list[SessionStep]:
    """The steps after iteration ``after``, in order (at most ``limit``, capped)."""
    params = {"p_id": session_id, "p_after": after, "p_limit": min(limit, STEPS_PAGE)}
    return [SessionStep.model_validate(r) for r in direct.rows(conn, _STEPS_AFTER, params)]


def running_in(conn: Connection, tenant_id: str, conversation_id: str) -> list[AgentSession]:
    """The conversation's running sessions."""
    params = {"p_conversation": conversation_id, "p_tenant": tenant_id}
    return [_session(r) for r in direct.rows(conn, _OF_CONVERSATION, params)]


@growing
def list_all(
    conn: Connection, tenant_id: str, agent_id: str | None = None, status: str | None = None
) -> list[AgentSession]:
    """The tenant's sessions, newest first."""
    query = sa.select(_s).where(_s.c.tenant_id == tenant_id)
    if agent_id is not None:
        query = query.where(_s.c.agent_id == agent_id)
    if status is not None:
        query = query.where(_s.c.status == status)
    rows = conn.execute(query.order_by(_s.c.created_at.desc(), _s.c.id.desc())).mappings()
    return [_session(r) for r in rows]


def delete(conn: Connection, tenant_id: str, session_id: str) -> None:
    """Remove a session and its steps."""
    get(conn, tenant_id, session_id, lock=True)
    direct.execute(conn, _DELETE_STEPS, {"p_id": session_id})
    direct.execute(conn, _DELETE, {"p_id": session_id, "p_tenant": tenant_id})
