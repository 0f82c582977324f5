"""The database's fault path reads right (security review 2026-11-27, L6): while the
database is read-only or full, ``/readyz`` answers 503 (a load balancer stops sending
writes), a read-only file is not called "full", and the access log records the 503 the
client got, without a traceback per request. Both faults need root (``chattr``, a tmpfs)."""

from __future__ import annotations

import contextlib
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness import Server, running_server


def _sh(*args: str) -> bool:
    return subprocess.run(args, capture_output=True).returncode == 0


@contextlib.contextmanager
def _immutable(paths: list[Path]) -> Iterator[None]:
    if not _sh("chattr", "+i", *map(str, paths)):
        pytest.skip("chattr +i is not permitted here")
    try:
        yield
    finally:
        _sh("chattr", "-i", *map(str, paths))


def _write(server: Server) -> tuple[int, str | None]:
    with server.client() as c:
        answer = c.post("/api/conversations", json={})
    reason = answer.json()["error"]["details"]["reason"] if answer.status_code == 503 else None
    return answer.status_code, reason


def _ready(server: Server) -> int:
    with server.client() as c:
        return c.get("/readyz").status_code


def _ready_within(server: Server, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while _ready(server) != 200:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.5)
    return True


def test_a_read_only_database_is_not_ready_and_not_full(tmp_path: Path) -> None:
    with running_server(tmp_path) as server:
        assert _write(server)[0] == 201 and _ready(server) == 200
        files = [p for p in tmp_path.glob("hansa.db*") if p.is_file()]
        with _immutable(files):
            written = _write(server)
            ready = _ready(server)
            with server.client() as c:
                reads = c.get("/api/conversations").status_code
        assert written[0] == 503 and written[1] != "full", written
        assert ready == 503 and reads == 200
        assert _write(server)[0] == 201, "writes work again at once"
        assert _ready_within(server, 15), "ready again once no write has failed for a while"
    log = server.log_path.read_text()
    assert "POST /api/conversations 503" in log and "POST /api/conversations 500" not in log
    assert "Exception in ASGI application" not in log


def test_a_full_disk_is_not_ready(tmp_path: Path) -> None:
    disk = tmp_path / "disk"
    disk.mkdir()
    if not _sh("mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(disk)):
        pytest.skip("mounting a tmpfs is not permitted here")
    filler = disk / "filler"
    try:
        url = f"sqlite:///{disk / 'hansa.db'}"
        with running_server(tmp_path, database_url=url) as server:
            assert _write(server)[0] == 201 and _ready(server) == 200
            # unbuffered: a write that fails leaves nothing for close() to fail on again
            with filler.open("wb", buffering=0) as f, contextlib.suppress(OSError):
                while True:
                    f.write(b"\0" * 65536)
            written = [_write(server) for _ in range(3)]
            ready = _ready(server)
            filler.unlink()
            recovered = _write(server)[0], _ready_within(server, 15)
    finally:
        _sh("umount", "-l", str(disk))
    assert (503, "full") in written, written
    assert ready == 503
    assert recovered == (201, True)
