"""store.direct runs statements as Connection.execute would: same rows, same types, same errors."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
import sqlalchemy as sa

from factories import make_conversation
from hansa import errors
from hansa.domain.base import new_id
from hansa.store import conversations, direct, queue, runs, tables
from hansa.store.db import DEFAULT_TENANT_ID, Database
from hansa.store.migrate import _upgrade

_jobs = tables.jobs
_NOW = datetime(2026, 11, 22, 6, 30, 15, 123456, tzinfo=UTC)


_INSERT = _jobs.insert().returning(_jobs.c.id)


def _job(**changes: object) -> dict[str, object]:
    return {
        "tenant_id": DEFAULT_TENANT_ID,
        "kind": "turn",
        "key": None,
        "payload": {"nested": {"list": [1, "two", None]}, "text": "é"},
        "status": "queued",
        "run_at": _NOW,
        "attempts": 0,
        "max_attempts": 3,
        "epoch": 0,
        "created_at": _NOW,
        "updated_at": _NOW,
        **changes,
    }


def test_rows_read_back_as_connection_execute_reads_them(db: Database) -> None:
    read = sa.select(_jobs).where(_jobs.c.status == sa.bindparam("p_status")).order_by(_jobs.c.id)

    def both(conn: sa.Connection) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
        direct.execute_many(conn, _jobs.insert(), [_job(), _job(key="k", payload={})])
        mine = [dict(r) for r in direct.rows(conn, read, {"p_status": "queued"})]
        theirs = [dict(r) for r in conn.execute(read, {"p_status": "queued"}).mappings()]
        return mine, theirs

    mine, theirs = db.write_now(both)
    assert mine == theirs
    assert len(mine) == 2 and mine[0]["payload"] == _job()["payload"]
    assert mine[0]["run_at"] == _NOW and mine[0]["run_at"].tzinfo is not None


def test_returning_rowcount_and_literal_values(db: Database) -> None:
    def steps(conn: sa.Connection) -> tuple[object, int, int, set[str]]:
        job_id = direct.scalar(conn, _INSERT, _job(key="run:1"))
        # _FINISH fixes nothing but takes status from a parameter; _LIVE_OF_KEY has literals
        live = {r["status"] for r in direct.rows(conn, queue._LIVE_OF_KEY, {"p_key": "run:1"})}
        held = {"p_id": job_id, "p_epoch": 0, "p_status": "done", "p_error": None, "p_now": _NOW}
        finished_while_queued = direct.execute(conn, queue._FINISH, held)
        missing = direct.execute(conn, queue._FINISH, {**held, "p_id": -1})
        return job_id, finished_while_queued, missing, live

    job_id, finished_while_queued, missing, live = db.write_now(steps)
    assert isinstance(job_id, int)
    assert live == {"queued"}
    assert finished_while_queued == 0, "_FINISH only moves a running job"
    assert missing == 0


def test_a_driver_error_is_sqlalchemys_and_the_write_leaves_nothing(db: Database) -> None:
    row = {**_job(), "id": 10_001}

    def twice(conn: sa.Connection) -> None:
        direct.execute(conn, _jobs.insert(), row)
        direct.execute(conn, _jobs.insert(), row)  # the same primary key

    with pytest.raises(sa.exc.IntegrityError):
        db.write_now(twice)
    count = sa.select(sa.func.count()).select_from(_jobs).where(_jobs.c.id == 10_001)
    assert db.write_now(lambda conn: direct.scalar(conn, count, {})) == 0


def test_a_missing_parameter_is_named(db: Database) -> None:
    with pytest.raises(sa.exc.StatementError, match="p_now"):
        db.write_now(lambda conn: direct.execute(conn, runs._LOCK_RUN, {"p_id": "x"}))


def test_an_expanding_parameter_cannot_run_directly(tmp_path: Path) -> None:
    db = Database(f"sqlite:///{tmp_path}/direct.db")
    many = sa.select(_jobs.c.id).where(_jobs.c.id.in_(sa.bindparam("p_ids", expanding=True)))
    try:
        db.write_now(_upgrade)
        with pytest.raises(ValueError, match="expanding"):
            db.write_now(lambda conn: direct.rows(conn, many, {"p_ids": [1, 2]}))
    finally:
        db.close()


def test_a_returning_statement_run_for_its_rowcount_leaves_the_commit_free(db: Database) -> None:
    bump = (
        sa.update(_jobs)
        .where(_jobs.c.id == sa.bindparam("p_id"))
        .values(epoch=_jobs.c.epoch + 1)
        .returning(_jobs.c.epoch)
    )

    def steps(conn: sa.Connection) -> int:
        job_id = direct.scalar(conn, _INSERT, _job())
        return direct.execute(conn, bump, {"p_id": job_id})

    assert db.write_now(steps) == 1  # and the commit after it went through
    epochs = sa.select(_jobs.c.epoch)
    assert [r["epoch"] for r in db.write_now(lambda conn: direct.rows(conn, epochs, {}))] == [1]


def test_statements_built_at_each_call_do_not_grow_the_cache(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(direct, "_compiled", {})
    monkeypatch.setattr(direct, "CACHE_LIMIT", 3)

    def many(conn: sa.Connection) -> list[object]:
        fresh = [sa.select(sa.literal(i, sa.Integer).label("n")) for i in range(10)]
        return [direct.scalar(conn, statement, {}) for statement in fresh]

    assert db.write_now(many) == list(range(10)), "still correct once the cache is full"
    assert len(direct._compiled) <= 3


def test_a_lookup_by_id_checks_its_tenant_by_the_primary_key_on_a_fresh_schema(
    pg_db: Database,
) -> None:
    """Without statistics PostgreSQL served ``id = $1 AND tenant_id = $2`` from the index
    leading with the tenant, a scan of all its rows (issue 29): the tenant is only checked."""
    ids = [new_id() for _ in range(300)]
    pg_db.write_now(
        lambda conn: [conversations.create(conn, make_conversation(id=cid)) for cid in ids]
    )
    params = {"p_id": ids[150], "p_tenant": DEFAULT_TENANT_ID}

    def plan(conn: sa.Connection) -> str:
        compiled = direct._compile(conn, conversations._GET, params)
        assert compiled is not None
        explained = conn.exec_driver_sql("EXPLAIN " + compiled.sql, tuple(compiled.args(params)))
        return "\n".join(str(r[0]) for r in explained)

    found = pg_db.write_now(plan)
    assert "ix_conversations_tenant" not in found, found
    got = pg_db.write_now(lambda conn: conversations.get(conn, DEFAULT_TENANT_ID, ids[150]))
    assert got.id == ids[150]
    with pytest.raises(errors.NotFound):
        pg_db.write_now(lambda conn: conversations.get(conn, "another", ids[150]))
