"""Named crash points for fault-injection tests (``HANSA_CRASH_AT=<name>``).

Each point ends the process on the spot with ``os._exit`` — no cleanup, no
commit — exactly like a crash. Points: ``turn.after_route``,
``task.before_execute``, ``task.after_execute`` (between an external call and
its recorded result), ``summary.before_write`` and ``recovery.claim`` (right
after taking over a job whose previous worker died).

Named stop points (``HANSA_STOP_AT=<name>``) freeze the process instead (SIGSTOP to itself,
once), as a long GC pause or a partition would; the test resumes it with SIGCONT. Points:
``write.before_commit`` (inside a job's transaction, after its guard and writes).
"""

from __future__ import annotations

import logging
import os
import signal
import threading

from hansa.settings import Settings

CRASH_EXIT_CODE = 86
log = logging.getLogger(__name__)


def crash_point(settings: Settings, name: str) -> None:
    """End the process here if the settings name this point."""
    if settings.crash_at == name:
        log.error("crash point %s reached: exiting", name)
        os._exit(CRASH_EXIT_CODE)


_stopped: set[str] = set()


def stop_point(settings: Settings, name: str) -> None:
    """Freeze this process here (the first time only) if the settings name this point."""
    if settings.stop_at == name and name not in _stopped:
        _stopped.add(name)
        log.error("stop point %s reached: stopping", name)
        # to this thread: it stops before its next instruction. Sent to the process, the
        # signal may be taken by another thread (the loop's), and this one ran on to its
        # COMMIT before the stop reached it on a loaded machine (decision 0037)
        signal.pthread_kill(threading.get_ident(), signal.SIGSTOP)
