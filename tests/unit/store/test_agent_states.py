"""Agents' scratchpads in the store: versions per conversation and agent, tenant-bound."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from sqlalchemy import Connection

from hansa import errors
from hansa.domain.base import utcnow
from hansa.domain.conversation import State
from hansa.store import agent_states, conversations
from hansa.store.db import DEFAULT_TENANT_ID as T
from hansa.store.db import Database


def test_a_state_starts_empty_and_each_put_is_the_next_version(
    db: Database, new_conversation: Callable[[], str]
) -> None:
    cid = new_conversation()

    def put(agent: str, state: dict[str, object]) -> int:
        def write(conn: Connection) -> int:
            agent_states.lock(conn, T, cid)
            current = agent_states.get(conn, T, cid, agent)
            return agent_states.put(conn, T, current, state, utcnow()).version

        return db.write_now(write)

    empty = db.write_now(lambda conn: agent_states.get(conn, T, cid, "chief"))
    assert (empty.version, empty.state) == (0, {})

    assert put("chief", {"goal": "launch"}) == 1
    assert put("chief", {"goal": "launch", "risk": "late"}) == 2
    assert put("fileAgent", {"docs": []}) == 1

    states = db.write_now(lambda conn: agent_states.all_of(conn, T, cid))
    assert [(s.agent_id, s.version, s.state) for s in states] == [
        ("chief", 2, {"goal": "launch", "risk": "late"}),
        ("fileAgent", 1, {"docs": []}),
    ]
    assert all(s.updated_at is not None for s in states)


def test_another_tenant_sees_nothing_and_cannot_lock(
    db: Database, new_conversation: Callable[[], str]
) -> None:
    cid = new_conversation()
    db.write_now(
        lambda conn: agent_states.put(
            conn, T, agent_states.get(conn, T, cid, "chief"), {"a": 1}, utcnow()
        )
    )

    assert db.write_now(lambda conn: agent_states.all_of(conn, "other-tenant", cid)) == []
    with pytest.raises(errors.NotFound):
        db.write_now(lambda conn: agent_states.lock(conn, "other-tenant", cid))


@pytest.mark.parametrize("closing", [State.RESOLVED, State.ARCHIVED])
def test_a_conversation_resolved_or_archived_clears_every_agents_state(
    db: Database, new_conversation: Callable[[], str], closing: State
) -> None:
    cid, other = new_conversation(), new_conversation()
    for conversation_id in (cid, other):
        for agent, state in (("chief", {"goal": "launch"}), ("fileAgent", {"facts": ["x"]})):
            db.write_now(
                lambda conn, c=conversation_id, a=agent, s=state: agent_states.put(
                    conn, T, agent_states.get(conn, T, c, a), s, utcnow()
                )
            )

    db.write_now(lambda conn: conversations.move(conn, T, cid, State.IDLE, utcnow()))
    idle = db.write_now(lambda conn: agent_states.all_of(conn, T, cid))
    assert [s.state for s in idle] == [{"goal": "launch"}, {"facts": ["x"]}], "idle keeps them"
    db.write_now(lambda conn: conversations.move(conn, T, cid, closing, utcnow()))

    closed = db.write_now(lambda conn: agent_states.all_of(conn, T, cid))
    untouched = db.write_now(lambda conn: agent_states.all_of(conn, T, other))
    assert [(s.agent_id, s.version, s.state) for s in closed] == [
        ("chief", 2, {}),
        ("fileAgent", 2, {}),
    ]
    assert [s.state for s in untouched] == [{"goal": "launch"}, {"facts": ["x"]}]
