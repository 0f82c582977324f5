"""Hansa's PostgreSQL sessions: its timeouts, and the URL's own options kept."""

from __future__ import annotations

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
