"""Reads made for every turn cost the same in a long conversation as in a short one
(issue 35 item 3, decision 0043).

The cost of a read is what the database did for it, counted inside the read's transaction:
on SQLite the virtual machine's steps (a progress handler called at every step: each row
an index or table scan visits takes several), on PostgreSQL the rows read from tables and
indexes (``pg_stat_get_xact_tuples_returned`` and ``…_fetched`` of the schema's relations,
this transaction's counts, before they are flushed). Each test measures a read, lets the
conversation grow by many turns that do not concern it, and measures it again.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection

from hansa.domain import event, llm_call, message, run, summary, turn
from hansa.domain.base import new_id, utcnow
from hansa.domain.job import JobKind
from hansa.store import direct, events, llm_calls, messages, queue, summaries, turns
from hansa.store.db import DEFAULT_TENANT_ID as T
from hansa.store.db import Database

GROWTH = 150
"""Turns the conversation grows by between the two measures."""

_PG_READ = sa.text(
    "SELECT coalesce(sum(pg_stat_get_xact_tuples_returned(c.oid)"
    " + pg_stat_get_xact_tuples_fetched(c.oid)), 0)"
    " FROM pg_class c WHERE c.relnamespace = current_schema()::regnamespace"
)


_PG_ROWS_READ = sa.text(
    "SELECT coalesce(sum(pg_stat_get_xact_tuples_fetched(c.oid)"
    " + CASE WHEN c.relkind = 'r' THEN pg_stat_get_xact_tuples_returned(c.oid) ELSE 0 END), 0)"
    " FROM pg_class c WHERE c.relnamespace = current_schema()::regnamespace"
)
"""On PostgreSQL, the rows read from tables only: by sequential scans and through indexes.
An index's own entries are left out: an entry whose row died stays in the index until a
scan marks it or vacuum removes it, which the transactions of other tests (an older
snapshot) can put off; its row is not read."""


def cost(
    db: Database, read: Callable[[Connection], Any], *, pg_rows: bool = False
) -> tuple[int, Any]:
    """What the database did for ``read`` (steps or rows, see the module), and its answer;
    with ``pg_rows``, on PostgreSQL only the rows read from tables (``_PG_ROWS_READ``)."""

    def measured(conn: Connection) -> tuple[int, Any]:
        if conn.dialect.name == "sqlite":
            steps = 0

            def step() -> int:
                nonlocal steps
                steps += 1
                return 0  # go on

            raw = direct.driver(conn)
            raw.set_progress_handler(step, 1)
            try:
                found = read(conn)
            finally:
                raw.set_progress_handler(None, 1)
            return steps, found
        counted = _PG_ROWS_READ if pg_rows else _PG_READ
        before = int(conn.execute(counted).scalar_one())
        found = read(conn)
        return int(conn.execute(counted).scalar_one()) - before, found

    return db.write_now(measured)


def _turn(
    conn: Connection,
    cid: str,
    status: turn.TurnStatus,
    *,
    extra: int = 4,
    at: datetime | None = None,
) -> turn.Turn:
    """A turn as posting makes it (its user message, with the seq of its event), then
    ``extra`` events its processing wrote."""
    now = at or utcnow()
    t = turn.Turn(
        id=new_id(),
        conversation_id=cid,
        message_id=new_id(),
        status=status,
        agent_id=None,
        created_at=now,
        finished_at=None,
        error=None,
    )
    said = message.Message(
        id=t.message_id,
        conversation_id=cid,
        turn_id=t.id,
        run_id=None,
        kind=message.Kind.USER,
        author=message.Author.USER,
        agent_id=None,
        content="Improve our SEO",
        created_at=now,
        metadata={},
    )
    payload = event.MessageData(
        message_id=said.id, kind=said.kind, author=said.author, content=said.content
    )
    (stored,) = events.append(conn, T, cid, [events.NewEvent(payload, turn_id=t.id)], now)
    messages.insert(conn, T, [(said, stored.seq)])
    turns.create(conn, T, t)
    later = [
        events.NewEvent(event.TextDeltaData(message_id="m", delta=str(i)), turn_id=t.id)
        for i in range(extra)
    ]
    events.append(conn, T, cid, later, now)
    return t


def _grow(db: Database, cid: str, count: int = GROWTH) -> None:
    def write(conn: Connection) -> None:
        for _ in range(count):
            _turn(conn, cid, turn.TurnStatus.COMPLETED)

    db.write_now(write)


def test_unfinished_turns_read_the_same_however_many_turns_ended(
    db: Database, new_conversation: Callable[[], str]
) -> None:
    cid = new_conversation()
    _grow(db, cid, 3)
    running = db.write_now(lambda conn: _turn(conn, cid, turn.TurnStatus.RUNNING))
    queued = db.write_now(lambda conn: _turn(conn, cid, turn.TurnStatus.QUEUED))
    short, found = cost(db, lambda conn: turns.unfinished(conn, T, cid))
    assert [t.id for t in found] == [running.id, queued.id], "oldest first"

    _grow(db, cid)
    long, found = cost(db, lambda conn: turns.unfinished(conn, T, cid))

    assert [t.id for t in found] == [running.id, queued.id]
    assert long <= short, f"{short} before, {long} after {GROWTH} more ended turns"


def test_a_turns_events_are_read_from_its_message_on(
    db: Database, new_conversation: Callable[[], str]
) -> None:
    cid = new_conversation()
    _grow(db, cid, 3)

    def the_turn(conn: Connection) -> turn.Turn:
        t = _turn(conn, cid, turn.TurnStatus.RUNNING)
        moved = event.RunStatusData(status=run.RunStatus.RUNNING)
        events.append(conn, T, cid, [events.NewEvent(moved, turn_id=t.id)], utcnow())
        return t

    t = db.write_now(the_turn)
    short, found = cost(db, lambda conn: events.run_moves_of_turn(conn, T, t))
    assert [e.type for e in found] == ["run_status"]

    # the conversation goes on: the turn's reader reads what came after it, so measure a
    # turn just as far from the end, with as much history before it as GROWTH turns
    _grow(db, cid)
    later = db.write_now(the_turn)
    long, found = cost(db, lambda conn: events.run_moves_of_turn(conn, T, later))

    assert [(e.type, e.turn_id) for e in found] == [("run_status", later.id)]
    assert long <= short * 1.1 + 10, f"{short} before, {long} after {GROWTH} more turns"
    again = db.write_now(lambda conn: events.run_moves_of_turn(conn, T, t))
    assert [(e.type, e.turn_id) for e in again] == [("run_status", t.id)], "older turns too"


def test_a_messages_seq_is_a_look_up_by_its_id(
    db: Database, new_conversation: Callable[[], str]
) -> None:
    cid = new_conversation()
    first = db.write_now(lambda conn: _turn(conn, cid, turn.TurnStatus.COMPLETED))
    short, seq = cost(db, lambda conn: messages.seq_of(conn, T, cid, first.message_id))
    _grow(db, cid)
    last = db.write_now(lambda conn: _turn(conn, cid, turn.TurnStatus.QUEUED))
    long, last_seq = cost(db, lambda conn: messages.seq_of(conn, T, cid, last.message_id))

    assert seq == 1
    assert last_seq is not None and last_seq > seq + GROWTH
    assert long <= short * 1.1 + 10
    assert db.write_now(lambda conn: messages.seq_of(conn, T, cid, "no-such-message")) is None
    assert db.write_now(lambda conn: messages.seq_of(conn, T, "other", first.message_id)) is None


def test_a_turn_created_later_is_unfinished_after_one_created_earlier(
    db: Database, new_conversation: Callable[[], str]
) -> None:
    cid = new_conversation()
    late = db.write_now(lambda conn: _turn(conn, cid, turn.TurnStatus.QUEUED))

    def earlier(conn: Connection) -> turn.Turn:
        at = late.created_at - timedelta(seconds=5)
        return _turn(conn, cid, turn.TurnStatus.RUNNING, at=at)

    first = db.write_now(earlier)
    found = db.write_now(lambda conn: turns.unfinished(conn, T, cid))
    assert [t.id for t in found] == [first.id, late.id]


def _call(cid: str, turn_id: str, tokens: int) -> llm_call.LlmCall:
    return llm_call.LlmCall(
        id=new_id(),
        tenant_id=T,
        conversation_id=cid,
        turn_id=turn_id,
        run_id=None,
        node_id=None,
        agent_id="chief",
        provider="scripted",
        model="scripted",
        prompt_tokens=tokens,
        completion_tokens=1,
        total_tokens=tokens + 1,
        latency_ms=1.0,
        success=True,
        error=None,
        cost_usd=0.0,
        created_at=utcnow(),
    )


def test_a_turns_model_calls_are_summed_from_its_own(
    db: Database, new_conversation: Callable[[], str]
) -> None:
    cid = new_conversation()

    def calls_of_a_turn(conn: Connection) -> str:
        turn_id = new_id()
        for tokens in (10, 20):
            llm_calls.record(conn, _call(cid, turn_id, tokens))
        return turn_id

    first = db.write_now(calls_of_a_turn)
    short, totals = cost(db, lambda conn: llm_calls.turn_totals(conn, T, cid, first))
    db.write_now(lambda conn: [calls_of_a_turn(conn) for _ in range(GROWTH)])
    long, again = cost(db, lambda conn: llm_calls.turn_totals(conn, T, cid, first))

    assert totals.prompt_tokens == again.prompt_tokens == 30
    assert totals.calls == again.calls == 2
    assert long <= short * 1.1 + 10, f"{short} before, {long} after {GROWTH} more turns"
    other = db.write_now(lambda conn: llm_calls.turn_totals(conn, T, "other", first))
    assert other.calls == 0, "another conversation's turn id sums nothing"


def _finished_jobs(db: Database, key: str, n: int) -> None:
    """``n`` jobs of ``key`` claimed and finished, as a long conversation's turns leave them
    (on PostgreSQL each leaves a dead entry in a partial index of live jobs: see
    ``_PG_ROWS_READ``)."""

    def run_one(conn: Connection) -> None:
        now = utcnow()
        claimed = queue.enqueue_claimed(
            conn,
            T,
            JobKind.TURN,
            {},
            now,
            owner="w",
            lease_until=now + timedelta(seconds=30),
            key=key,
        )
        queue.finish(conn, claimed, now)

    for _ in range(n):
        db.write_now(run_one)


def test_a_keys_live_jobs_are_read_without_its_finished_ones(
    db: Database, new_conversation: Callable[[], str]
) -> None:
    key = new_conversation()
    _finished_jobs(db, key, 3)
    db.write_now(lambda conn: queue.enqueue(conn, T, JobKind.TURN, {}, utcnow(), key=key))
    short, found = cost(db, lambda conn: queue.live_statuses(conn, key), pg_rows=True)
    assert found == {"queued"}

    _finished_jobs(db, key, GROWTH)
    long, found = cost(db, lambda conn: queue.live_statuses(conn, key), pg_rows=True)

    assert found == {"queued"}
    assert long <= short, f"{short} before, {long} after {GROWTH} more finished jobs"


def test_a_claim_reads_the_same_however_many_jobs_its_key_finished(
    db: Database, new_conversation: Callable[[], str]
) -> None:
    def claim_one(key: str) -> tuple[int, Any]:
        db.write_now(lambda conn: queue.enqueue(conn, T, JobKind.TURN, {}, utcnow(), key=key))
        lease = timedelta(seconds=30)
        spent, claimed = cost(
            db,
            lambda conn: queue.claim(conn, "w", utcnow(), lease=lease, limit=4, takeovers=False),
            pg_rows=True,
        )
        db.write_now(lambda conn: [queue.finish(conn, j, utcnow()) for j in claimed])
        return spent, claimed

    key = new_conversation()
    _finished_jobs(db, key, 3)
    short, claimed = claim_one(key)
    assert [j.key for j in claimed] == [key]

    _finished_jobs(db, key, GROWTH)
    long, claimed = claim_one(key)

    assert [j.key for j in claimed] == [key]
    assert long <= short * 1.1 + 10, f"{short} before, {long} after {GROWTH} more finished jobs"


def _summaries(db: Database, cid: str, versions: range) -> None:
    """Versions of a summary's size, a few hundred characters: with versions of a dozen, the
    table's few pages made PostgreSQL pick the right plan anyway."""

    def write(conn: Connection) -> None:
        summaries.lock(conn, T, cid)
        for v in versions:
            new = summary.ConversationSummary(
                conversation_id=cid,
                version=v,
                covered_through_seq=v,
                covered_messages=2 * v,
                text=f"version {v}: " + "what was said and decided so far. " * 16,
                facts=summary.SummaryFacts(),
                created_at=utcnow(),
            )
            summaries.add(conn, T, new)

    db.write_now(write)


def test_the_latest_summary_is_read_without_the_older_versions(
    db: Database, new_conversation: Callable[[], str]
) -> None:
    cid = new_conversation()
    _summaries(db, cid, range(1, 4))
    short, found = cost(db, lambda conn: summaries.latest(conn, T, cid))
    assert found is not None and found.version == 3

    _summaries(db, cid, range(4, 4 + GROWTH))
    long, found = cost(db, lambda conn: summaries.latest(conn, T, cid))

    assert found is not None and found.version == 3 + GROWTH
    assert long <= short, f"{short} before, {long} after {GROWTH} more versions"
    assert db.write_now(lambda conn: summaries.latest(conn, "another", cid)) is None
