"""Restart the local PostgreSQL server (its cluster on this machine), for fault soaks."""

from __future__ import annotations

import os
import subprocess
import time


def restart_postgres(ready_seconds: float = 60.0) -> None:
    """``pg_ctlcluster restart`` (every connection cut), then wait until it accepts again."""
    (version,) = os.listdir("/etc/postgresql")
    cmd = ["pg_ctlcluster", "--skip-systemctl-redirect", version, "main", "restart"]
    subprocess.run(cmd, check=True, capture_output=True, timeout=120)
    deadline = time.monotonic() + ready_seconds
    while subprocess.run(["pg_isready", "-h", "127.0.0.1", "-q"]).returncode != 0:
        if time.monotonic() > deadline:
            raise RuntimeError("PostgreSQL did not come back")
        time.sleep(0.2)
