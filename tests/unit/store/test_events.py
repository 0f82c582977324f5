import asyncio
from collections.abc import Callable

import pytest

from hansa import errors
from hansa.domain import event
from hansa.domain.base import utcnow
from hansa.store import events
from hansa.store.db import DEFAULT_TENANT_ID as T
from hansa.store.db import Database


def _delta(i: int) -> events.NewEvent:
    return events.NewEvent(event.TextDeltaData(message_id="m", delta=str(i)))


@pytest.mark.anyio
async def test_concurrent_appends_get_gap_free_ordered_seqs(
    db: Database, new_conversation: Callable[[], str]
) -> None:
    cid = new_conversation()

    async def writer(i: int) -> None:
        await db.write(lambda conn: events.append(conn, T, cid, [_delta(i), _delta(i)], utcnow()))

    await asyncio.gather(*(writer(i) for i in range(20)))
    log = await db.read(lambda conn: events.read_after(conn, T, cid, 0, limit=1000))
    assert [e.seq for e in log] == list(range(1, 41))
    # the two events of one transaction are adjacent
    assert all(log[i].payload == log[i + 1].payload for i in range(0, 40, 2))


def test_rolled_back_append_leaves_no_gap(
    db: Database, new_conversation: Callable[[], str]
) -> None:
    cid = new_conversation()

    def fails(conn: object) -> None:
        events.append(conn, T, cid, [_delta(1)], utcnow())  # type: ignore[arg-type]
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        db.write_now(fails)
    stored = db.write_now(lambda conn: events.append(conn, T, cid, [_delta(2)], utcnow()))
    assert stored[0].seq == 1


def test_read_after_is_a_cursor(db: Database, new_conversation: Callable[[], str]) -> None:
    cid = new_conversation()
    db.write_now(lambda conn: events.append(conn, T, cid, [_delta(i) for i in range(5)], utcnow()))
    assert [e.seq for e in db.write_now(lambda c: events.read_after(c, T, cid, 3))] == [4, 5]
    first_two = db.write_now(lambda c: events.read_after(c, T, cid, 0, limit=2))
    assert [e.seq for e in first_two] == [1, 2]


def test_append_to_another_tenants_conversation_is_not_found(
    db: Database, new_conversation: Callable[[], str]
) -> None:
    cid = new_conversation()
    with pytest.raises(errors.NotFound):
        db.write_now(lambda conn: events.append(conn, "someone-else", cid, [_delta(1)], utcnow()))
