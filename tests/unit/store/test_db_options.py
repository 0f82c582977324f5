"""Hansa's PostgreSQL sessions: its timeouts, and the URL's own options kept."""

from __future__ import annotations

import time

import pytest
import sqlalchemy as sa

from hansa.store import direct
from hansa.store.db import Database
from pg import fresh_schema


def test_sessions_have_timeouts_and_keep_the_urls_options() -> None:
    with fresh_schema() as url:
        db = Database(url, lock_timeout_seconds=2, idle_in_transaction_seconds=3)
        try:
            shown = db.write_now(
                lambda conn: (
                    [
                        conn.exec_driver_sql(f"SHOW {name}").scalar()
                        for name in ("lock_timeout", "idle_in_transaction_session_timeout")
                    ]
                    + [conn.exec_driver_sql("SELECT current_schema()").scalar()]
                )
            )
        finally:
            db.close()
    assert shown[:2] == ["2s", "3s"]
    assert str(shown[2]).startswith("hansa_test_"), "the URL's search_path is kept"


def test_a_transaction_frozen_after_a_many_row_insert_is_still_ended() -> None:
    """psycopg's executemany (pipeline mode) left the session without a Sync, where the idle
    timeout is never armed: a frozen worker kept its locks for ever. Now it is ended."""
    table = sa.table("t", sa.column("x"))

    def frozen(conn: sa.Connection) -> object:
        direct.execute_many(conn, table.insert(), [{"x": 1}, {"x": 2}])
        time.sleep(1.5)  # the process is frozen here, inside its transaction
        return conn.exec_driver_sql("SELECT count(*) FROM t").scalar()

    with fresh_schema() as url:
        db = Database(url, idle_in_transaction_seconds=0.5)
        try:
            db.write_now(lambda conn: conn.exec_driver_sql("CREATE TABLE t (x int)"))
            with pytest.raises(sa.exc.DBAPIError, match="idle-in-transaction timeout"):
                db.write_now(frozen)
            assert db.write_now(lambda c: c.exec_driver_sql("SELECT count(*) FROM t").scalar()) == 0
        finally:
            db.close()
