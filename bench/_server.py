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

import httpx


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def hansa_server(
    tmp: Path, *args: str, env: dict[str, str] | None = None, database_url: str | None = None
) -> Iterator[str]:
    """Yield the base URL of a running ``hansa serve``; stop it afterwards."""
    port = _free_port()
    log = (tmp / "server.log").open("wb")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "hansa",
            "serve",
            "--port",
            str(port),
            "--database-url",
            database_url or f"sqlite:///{tmp / 'bench.db'}",
            *args,
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**os.environ, **(env or {})},
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                raise RuntimeError((tmp / "server.log").read_text())
            try:
                if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("server did not start")
            time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        proc.wait(10)
        log.close()


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
