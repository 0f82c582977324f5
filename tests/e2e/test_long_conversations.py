"""A turn of a long conversation reads no more than a turn of a short one (issue 35 item 3).

The real server (API and worker in one process) on a fresh PostgreSQL schema of its own; what
its turns read is the rows PostgreSQL reports read from the schema's tables
(``pg_stat_all_tables``: sequential scans' rows and rows fetched through indexes), counted
over a few turns at turn ~10 and again at turn ~250 of the same conversation. A read that
scanned the conversation's messages, events, turns, jobs or summary versions would read
hundreds of rows more a turn at the second count.

What a turn reads must not grow in size either: the newest summary version (read at every
turn, folded into the next) stays within its bound. Unbounded, the scripted model's extract
grew ~175 bytes a turn (40 KB at turn 250), and a PostgreSQL worker's C memory with it: its
database threads' malloc arenas kept the largest results they had received (decision 0042).

Backends report their counts when they go idle, at most once a second, or ten seconds after
(PostgreSQL 15's ``PGSTAT_IDLE_INTERVAL``): each count is taken after the server has been
quiet for longer than that, and both windows last about as long (the worker's polls read a
few rows a second, the same in both).
"""

from __future__ import annotations

import time
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlparse

import httpx
import psycopg

from hansa.engine.rolling_summary import EXTRACT_CHARS
from harness import new_conversation, running_server, turn
from pg import BASE

SHORT = 10
"""Turns before the first count."""
LONG = 250
"""Turns before the second count."""
MEASURED = 5
"""Turns counted each time."""
SETTLE = 11.0
"""Seconds of quiet before a count: longer than PostgreSQL's ten seconds."""

_READ = """
SELECT relname, coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0)
FROM pg_stat_all_tables WHERE schemaname = %s
"""


def _schema(url: str) -> str:
    options = parse_qs(urlparse(url).query)["options"][0]
    return unquote(options).split("search_path=", 1)[1]


def _rows_read(schema: str) -> dict[str, int]:
    with psycopg.connect(BASE, autocommit=True) as conn:
        return {name: int(n) for name, n in conn.execute(_READ, (schema,)).fetchall()}


def _per_turn(client: httpx.Client, cid: str, schema: str) -> tuple[float, dict[str, float]]:
    """Rows read a turn over ``MEASURED`` turns of ``cid``: in all, and by table."""
    time.sleep(SETTLE)
    before = _rows_read(schema)
    for i in range(MEASURED):
        events = turn(client, cid, f"Measured message {i}: how is the SEO plan going?")
        assert events[-1]["type"] == "done"
    time.sleep(SETTLE)
    after = _rows_read(schema)
    by_table = {t: (after[t] - before.get(t, 0)) / MEASURED for t in after}
    return sum(by_table.values()), {t: n for t, n in by_table.items() if n}


def test_a_turns_reads_do_not_grow_with_its_conversation(tmp_path: Path, pg_url: str) -> None:
    schema = _schema(pg_url)
    with running_server(tmp_path, database_url=pg_url) as server, server.client() as client:
        cid = new_conversation(client)
        for i in range(SHORT):
            turn(client, cid, f"Message {i}: what should we do about our SEO?")
        short, short_tables = _per_turn(client, cid, schema)
        for i in range(SHORT + MEASURED, LONG):
            turn(client, cid, f"Message {i}: and after that, what next?")
        long, long_tables = _per_turn(client, cid, schema)
        newest = client.get(f"/api/conversations/{cid}/summaries", params={"limit": 1}).json()

    assert newest and newest[0]["version"] > 1, "the conversation was summarized, again"
    assert len(newest[0]["text"]) <= EXTRACT_CHARS, f"{len(newest[0]['text'])} characters"

    grown = {t: (short_tables.get(t, 0), n) for t, n in long_tables.items()}
    assert long <= short * 1.2 + 20, (
        f"{short:.0f} rows a turn at turn {SHORT}, {long:.0f} at turn {LONG}: {grown}"
    )
