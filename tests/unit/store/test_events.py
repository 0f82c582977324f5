import asyncio

import pytest

from hansa import errors
from hansa.domain import event
from hansa.domain.base import utcnow
from hansa.store import events
from hansa.store.db import DEFAULT_TENANT_ID as T
from hansa.store.db import Database

pytestmark = pytest.mark.anyio


def _delta(i: int) -> events.NewEvent:
    return events.NewEvent(event.TextDeltaData(message_id="m", delta=str(i)))


async def test_concurrent_appends_get_gap_free_ordered_seqs(db: Database, new_conversation) -> None:
    cid = await new_conversation()

    async def writer(i: int) -> None:
        async with db.transaction() as conn:
            await events.append(conn, T, cid, [_delta(i), _delta(i)], utcnow())

    await asyncio.gather(*(writer(i) for i in range(20)))
    async with db.read() as conn:
        log = await events.read_after(conn, T, cid, 0, limit=1000)
    assert [e.seq for e in log] == list(range(1, 41))
    # the two events of one transaction are adjacent
    pairs = [(log[i].payload, log[i + 1].payload) for i in range(0, 40, 2)]
    assert all(a == b for a, b in pairs)


async def test_rolled_back_append_leaves_no_gap(db: Database, new_conversation) -> None:
    cid = await new_conversation()
    with pytest.raises(RuntimeError):
        async with db.transaction() as conn:
            await events.append(conn, T, cid, [_delta(1)], utcnow())
            raise RuntimeError("boom")
    async with db.transaction() as conn:
        stored = await events.append(conn, T, cid, [_delta(2)], utcnow())
    assert stored[0].seq == 1


async def test_read_after_is_a_cursor(db: Database, new_conversation) -> None:
    cid = await new_conversation()
    async with db.transaction() as conn:
        await events.append(conn, T, cid, [_delta(i) for i in range(5)], utcnow())
    async with db.read() as conn:
        assert [e.seq for e in await events.read_after(conn, T, cid, 3)] == [4, 5]
        assert [e.seq for e in await events.read_after(conn, T, cid, 0, limit=2)] == [1, 2]


async def test_append_to_another_tenants_conversation_is_not_found(db: Database, new_conversation) -> None:
    cid = await new_conversation()
    with pytest.raises(errors.NotFound):
        async with db.transaction() as conn:
            await events.append(conn, "someone-else", cid, [_delta(1)], utcnow())
