"""The bus across processes: PostgreSQL LISTEN/NOTIFY.

Writers notify inside their transaction (``store/notify.py``), so a notice is
delivered exactly when the change commits. A listener thread per process
receives them and rings local subscribers (who then read the log) or wakes the
local worker. Notices from this process are ignored: it rang its subscribers
already, with the events in hand. A notice is a hint, never the only way: streams
re-read the log on a timer and workers poll for jobs.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable

import psycopg

from hansa.bus.memory import MemoryBus
from hansa.domain import notice
from hansa.domain.event import EVENTS_CHANNEL, JOBS_CHANNEL

log = logging.getLogger(__name__)


class PostgresBus(MemoryBus):
    """In-process fan-out plus notices from other processes sharing the database."""

    def __init__(self, dsn: str, *, drop_notices: bool = False) -> None:
        super().__init__()
        self._dsn = dsn
        self._drop = drop_notices  # fault injection: streams must still see every event
        self._me = notice.sender_id()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.on_job: Callable[[], None] = lambda: None
        """Called (on the event loop) when another process enqueued a job."""

    def start(self) -> None:
        """Start listening; call from the running event loop."""
        self._loop = asyncio.get_running_loop()
        self._thread = threading.Thread(target=self._listen, name="hansa-pg-listen", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop listening (the thread ends within a second)."""
        self._stop.set()

    def _deliver(self, channel: str, payload: str) -> None:
        sender, _, rest = payload.partition(":")
        if sender == self._me or self._drop:
            return
        if channel == JOBS_CHANNEL:
            self.on_job()
            return
        conversation_id, _, _seq = rest.partition(":")
        for sub in list(self._subs.get(conversation_id, ())):
            sub.ring()

    def _listen(self) -> None:
        backoff = 0.2
        while not self._stop.is_set():
            try:
                with psycopg.connect(self._dsn, autocommit=True) as conn:
                    conn.execute(f"LISTEN {EVENTS_CHANNEL}")
                    conn.execute(f"LISTEN {JOBS_CHANNEL}")
                    backoff = 0.2
                    self._ring_all()  # we may have missed notices while disconnected
                    while not self._stop.is_set():
                        for note in conn.notifies(timeout=1.0):
                            self._hand_over(note.channel, note.payload)
            except psycopg.Error as exc:
                log.warning("LISTEN connection lost (%s); reconnecting", exc)
                self._stop.wait(backoff)
                backoff = min(backoff * 2, 5.0)

    def _hand_over(self, channel: str, payload: str) -> None:
        if self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._deliver, channel, payload)

    def _ring_all(self) -> None:
        if self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._ring_everyone)

    def _ring_everyone(self) -> None:
        for subs in list(self._subs.values()):
            for sub in list(subs):
                sub.ring()
        self.on_job()
