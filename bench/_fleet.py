"""Processes for PostgreSQL benchmarks: a fresh schema, an API process, workers."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg

BASE = os.environ.get("HANSA_BENCH_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")
FAST = {"HANSA_LEASE_SECONDS": "2", "HANSA_POLL_SECONDS": "0.2"}


@contextmanager
def fresh_schema() -> Iterator[str]:
    """A URL on a new, empty schema of the benchmark database; dropped afterwards."""
    schema = f"hansa_bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(BASE, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    try:
        yield f"{BASE}?options=-csearch_path%3D{schema}"
    finally:
        with psycopg.connect(BASE, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


def start_worker(tmp: Path, url: str, **env: str) -> subprocess.Popen[bytes]:
    """A ``hansa worker`` process (scripted model)."""
    log = (tmp / f"worker-{uuid.uuid4().hex[:6]}.log").open("wb")
    return subprocess.Popen(
        [sys.executable, "-m", "hansa", "worker", "--database-url", url, "--model", "scripted"],
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**os.environ, **FAST, **env},
    )


def stop(proc: subprocess.Popen[bytes]) -> None:
    """Stop a process, politely then firmly."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
