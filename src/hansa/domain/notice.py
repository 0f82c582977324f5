"""Notices between processes that share a PostgreSQL database (LISTEN/NOTIFY).

The store sends them inside the transaction they announce (``store/notify.py``); the
bus listens (``bus/postgres.py``). A payload starts with its sender, ``"<sender>:…"``,
so that a process can ignore its own notices.

The sender is a random id made once per process, and made again in a forked child: not
the PID, which is the same (often 1) in every container of a fleet (review H4).
"""

from __future__ import annotations

import os
import uuid

_sender = uuid.uuid4().hex


def _new_sender() -> None:
    global _sender
    _sender = uuid.uuid4().hex


os.register_at_fork(after_in_child=_new_sender)


def sender_id() -> str:
    """This process, as notices name it."""
    return _sender
