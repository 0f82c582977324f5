"""Notices between processes that share a PostgreSQL database (LISTEN/NOTIFY).

The store sends them inside the transaction they announce (``store/notify.py``); the
bus listens (``bus/postgres.py``). A payload starts with its sender, ``"<sender>:…"``,
so that a process can ignore its own notices.
"""

from __future__ import annotations

import os


def sender_id() -> str:
    """This process, as notices name it (read at each call: a forked child is another)."""
    return str(os.getpid())
