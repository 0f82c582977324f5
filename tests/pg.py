"""PostgreSQL for tests: the real server on this machine, one fresh schema per use.

Never skipped: if PostgreSQL is not reachable the tests fail (CI must run them).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg

BASE = os.environ.get("HANSA_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")


@contextmanager
def fresh_schema() -> Iterator[str]:
    """A database URL whose search_path is a new, empty schema; dropped afterwards."""
    schema = f"hansa_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(BASE, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    try:
        yield f"{BASE}?options=-csearch_path%3D{schema}"
    finally:
        with psycopg.connect(BASE, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')
