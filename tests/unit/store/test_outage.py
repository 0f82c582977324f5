"""Which database failures are outages (503, one log line) and which are bugs (500)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import psycopg
import pytest
import sqlalchemy as sa

from hansa.store import outage
from pg import fresh_schema


def _raised(fn: object) -> BaseException:
    try:
        fn()  # type: ignore[operator]
    except BaseException as exc:  # noqa: BLE001 - the error is what is tested
        return exc
    raise AssertionError("no error")


def test_sqlite_full_and_read_only_and_a_syntax_error(tmp_path: Path) -> None:
    engine = sa.create_engine(f"sqlite:///{tmp_path}/t.db")
    with engine.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE t (x TEXT)")
    with engine.connect() as conn:
        pages = conn.exec_driver_sql("PRAGMA page_count").scalar()
        conn.exec_driver_sql(f"PRAGMA max_page_count={pages}")
        full = _raised(
            lambda: [
                conn.exec_driver_sql("INSERT INTO t VALUES (?)", ("x" * 5000,)) for _ in range(9)
            ]
        )
        typo = _raised(lambda: conn.exec_driver_sql("SELEC 1"))
    read_only = sqlite3.connect(f"file:{tmp_path}/t.db?mode=ro", uri=True)
    denied = _raised(lambda: read_only.execute("INSERT INTO t VALUES ('y')"))
    assert outage.outage(full) == "full"
    assert outage.outage(denied) == "read_only"
    assert outage.outage(typo) is None, "a bug is not an outage"


def test_postgres_unreachable_and_a_lock_timeout() -> None:
    down = _raised(
        lambda: psycopg.connect("postgresql://postgres@127.0.0.1:1/test", connect_timeout=2)
    )
    assert outage.outage(down) == "unreachable"
    with fresh_schema() as url, psycopg.connect(url, autocommit=True) as setup:
        setup.execute("CREATE TABLE t (x int)")
        setup.execute("INSERT INTO t VALUES (1)")
        with psycopg.connect(url) as holder, psycopg.connect(url) as waiter:
            holder.execute("SELECT x FROM t FOR UPDATE")
            waiter.execute("SET lock_timeout = '100ms'")
            busy = _raised(lambda: waiter.execute("SELECT x FROM t FOR UPDATE"))
    assert outage.outage(busy) == "busy"
    assert outage.outage(ValueError("not a database error")) is None


def test_the_throttle_says_yes_once_per_interval() -> None:
    throttle = outage.Throttle(seconds=60)
    assert [throttle("a"), throttle("a"), throttle("b")] == [True, False, True]


@pytest.mark.parametrize("reason", ["full", "busy", "read_only", "io_error", "unreachable"])
def test_every_reason_has_words(reason: outage.Reason) -> None:
    assert outage.describe(reason).startswith("the database")


def test_only_a_disks_state_keeps_readiness_down_after_the_failed_write() -> None:
    now = [100.0]
    recent = outage.Recent(clock=lambda: now[0])
    recent.note("busy")
    recent.note("unreachable")
    assert recent.within(outage.READY_AFTER_SECONDS) is None, "the probe meets these itself"
    recent.note("full")
    now[0] += outage.READY_AFTER_SECONDS - 1
    assert recent.within(outage.READY_AFTER_SECONDS) == "full"
    now[0] += 2
    assert recent.within(outage.READY_AFTER_SECONDS) is None
