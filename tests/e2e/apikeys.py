"""API keys for e2e tests: made with the real command line on the server's database."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import httpx

from harness import Server


def hansa(*args: str) -> subprocess.CompletedProcess[str]:
    """``python -m hansa …``, its output captured."""
    return subprocess.run(
        [sys.executable, "-m", "hansa", *args], capture_output=True, text=True, timeout=60
    )


def create_key(server: Server, tenant: str, role: str = "admin", name: str = "") -> str:
    """``hansa keys create`` on the server's database; the key (its last line)."""
    result = hansa(
        "keys",
        "create",
        "--tenant",
        tenant,
        "--role",
        role,
        "--name",
        name or f"{tenant} {role}",
        "--database-url",
        f"sqlite:///{server.db_path}",
    )
    assert result.returncode == 0, result.stdout + result.stderr
    key = result.stdout.strip().splitlines()[-1]
    assert key.startswith("hk_"), result.stdout
    return key


def bearer(key: str) -> dict[str, str]:
    """The header that authenticates a request with ``key``."""
    return {"Authorization": f"Bearer {key}"}


def client(server: Server, key: str | None, **kwargs: Any) -> httpx.Client:
    """A client that sends ``key`` on every request (none: no key at all)."""
    return server.client(headers=bearer(key) if key else {}, **kwargs)


def error_code(response: httpx.Response) -> str:
    """The API error code of a refused request."""
    return str(response.json()["error"]["code"])


def get_as(server: Server, key: str | None, path: str) -> httpx.Response:
    """One GET with ``key`` on a client of its own (closed again)."""
    with client(server, key) as c:
        return c.get(path)
