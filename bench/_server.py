"""Start a Hansa server process for a benchmark (scripted model, fresh SQLite file)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

import httpx


class Server(NamedTuple):
    url: str
    """Base URL, ``http://127.0.0.1:<port>``."""
    pid: int
    """The server's process id (to read its CPU time)."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def server_process(
    command: list[str],
    port: int,
    health: str,
    log_path: Path,
    *,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
) -> Iterator[Server]:
    """Start ``command`` (serving on ``port``), wait until ``health`` answers 200, stop it."""
    log = log_path.open("wb")
    proc = subprocess.Popen(
        command, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})}, cwd=cwd
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                raise RuntimeError(log_path.read_text())
            try:
                if httpx.get(url + health, timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"{command[0]} did not start; see {log_path}")
            time.sleep(0.1)
        yield Server(url, proc.pid)
    finally:
        proc.terminate()
        proc.wait(10)
        log.close()


@contextmanager
def hansa_process(
    tmp: Path, *args: str, env: dict[str, str] | None = None, database_url: str | None = None
) -> Iterator[Server]:
    """A running ``hansa serve`` (its URL and process id); stopped afterwards."""
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "hansa",
        "serve",
        "--port",
        str(port),
        "--database-url",
        database_url or f"sqlite:///{tmp / 'bench.db'}",
        *args,
    ]
    with server_process(command, port, "/healthz", tmp / "server.log", env=env) as server:
        yield server


@contextmanager
def hansa_server(
    tmp: Path, *args: str, env: dict[str, str] | None = None, database_url: str | None = None
) -> Iterator[str]:
    """Yield the base URL of a running ``hansa serve``; stop it afterwards."""
    with hansa_process(tmp, *args, env=env, database_url=database_url) as server:
        yield server.url


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` (all its threads), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def record(section: str, text: str) -> None:
    """Replace ``section``'s block in docs/benchmarks.md (between its markers)."""
    path = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"
    begin, end = f"<!-- {section}:begin -->", f"<!-- {section}:end -->"
    doc = path.read_text() if path.exists() else "# Benchmarks\n"
    block = f"{begin}\n{text.rstrip()}\n{end}"
    if begin in doc and end in doc:
        head, rest = doc.split(begin, 1)
        doc = head + block + rest.split(end, 1)[1]
    else:
        doc = doc.rstrip() + "\n\n" + block + "\n"
    path.write_text(doc)
