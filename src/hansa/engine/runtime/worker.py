"""The worker: claims jobs from the queue, runs them, keeps their leases alive.

One worker runs up to ``worker_concurrency`` turns and other jobs at once, and up to
``worker_run_concurrency`` run jobs beside them (a run's job mostly waits for its tasks;
it must not take a turn's slot). It wakes when this process enqueues a job and polls for
jobs enqueued elsewhere. Jobs whose worker died are looked for once per poll interval, not
at every claim (that look reads every running job): a worker holds a presence that ends with
its process (``store/presence.py``), so a dead worker's jobs are taken over at the next look,
and a frozen one's when their lease expires.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import threading
import time
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta

from sqlalchemy import Connection

from hansa import errors, tracing
from hansa.domain.job import Job, JobKind
from hansa.engine.runtime.faults import crash_point
from hansa.engine.runtime.services import Drive
from hansa.settings import Settings
from hansa.store import outage, presence, queue
from hansa.store.db import Database

log = logging.getLogger(__name__)
_LOG_OUTAGE = outage.Throttle()

Handler = Callable[[Job], Awaitable[None]]
"""Runs one claimed job (``engine.running`` dispatches on the job's kind)."""

GiveUp = Callable[[Job, str], Awaitable[None]]
"""Ends a job that failed outside its handler's care ``max_attempts`` times, with the error."""

RETRY_DELAY = timedelta(seconds=1)
"""How long a job that failed outside its handler's care waits before it is claimed again."""


class Worker:
    """Claims and runs jobs until stopped."""

    def __init__(
        self,
        settings: Settings,
        db: Database,
        clock: Callable[[], datetime],
        *,
        owner: str | None = None,
    ) -> None:
        self.settings = settings
        self.db = db
        self.clock = clock
        self.owner = owner or presence.owner_name(
            f"{socket.gethostname()}:{os.getpid()}:{id(self):x}"
        )
        self._presence = presence.of(db.engine_url(), self.owner)
        self._wake = asyncio.Event()
        self._hinted = False
        """A job was enqueued since the last claim: claim without looking first."""
        self._takeovers_due = 0.0
        """When (``time.monotonic``) the next claim also looks for expired leases."""
        self._stop = asyncio.Event()
        self._running: dict[int, tuple[Job, asyncio.Task[None]]] = {}
        self._lease = timedelta(seconds=settings.lease_seconds)
        self._capacity = {False: settings.worker_concurrency, True: settings.worker_run_concurrency}
        """Slots by lane: run jobs (True) wait on their tasks for long; turns must not."""
        self._busy = {False: 0, True: 0}
        """Slots taken by lane, counting run slots held for hand-overs not yet committed."""
        self._slots = threading.Lock()  # reservations may come from a PostgreSQL write thread
        self._handle: Handler | None = None
        self._give_up: GiveUp | None = None

    def reserve_run_slot(self) -> bool:
        """Hold a run slot for a run job a transaction is about to hand over; False if none."""
        with self._slots:
            if self._busy[True] >= self._capacity[True]:
                return False
            self._busy[True] += 1
            return True

    def release_run_slots(self, count: int) -> None:
        """Give back slots held for run jobs whose transaction did not commit."""
        with self._slots:
            self._busy[True] -= count

    def adopt(self, job: Job, drive: Drive) -> None:
        """Run a run job claimed for this worker in another transaction (which held its slot),
        starting from ``drive``, the first step that transaction prepared."""
        if job.id in self._running:  # cannot start twice: give its slot back
            self.release_run_slots(1)
            return
        self._start(job, held=True, drive=drive)

    def wake(self) -> None:
        """A job was enqueued: look now rather than at the next poll."""
        self._hinted = True
        self._wake.set()

    def stop(self) -> None:
        """Stop claiming; running jobs are cancelled when ``run`` returns."""
        self._stop.set()
        self._wake.set()

    async def run(self, handle: Handler, give_up: GiveUp | None = None) -> None:
        """Claim jobs and run each with ``handle`` until ``stop``; a job that fails outside
        ``handle``'s care goes back to the queue, and after its last attempt to ``give_up``
        (without one, it is failed with its error)."""
        self._handle = handle
        self._give_up = give_up
        heartbeat = asyncio.create_task(self._heartbeat(), name=f"heartbeat {self.owner}")
        try:
            while not self._stop.is_set():
                self._wake.clear()
                # a worker claims only while present: its jobs would be taken over at once
                free = self._free() if await self._present() else {False: 0, True: 0}
                claimed = await self._claim(free)
                for job in claimed:
                    if job.attempts > 1:
                        crash_point(self.settings, "recovery.claim")
                    self._start(job)
                took = {lane: sum(_is_run(j) is lane for j in claimed) for lane in free}
                if any(n and took[lane] == n for lane, n in free.items()):
                    continue  # a lane took all it could: there may be more waiting
                try:
                    await asyncio.wait_for(self._wake.wait(), self.settings.poll_seconds)
                except TimeoutError:
                    pass
        finally:
            heartbeat.cancel()
            tasks = [t for _, t in self._running.values()]
            for t in tasks:
                t.cancel()
            await asyncio.gather(heartbeat, *tasks, return_exceptions=True)
            await asyncio.to_thread(self._presence.close)

    async def _present(self) -> bool:
        """Whether this worker's presence is held, taking it (again) if it is not."""
        if not self._presence.lost():
            return True
        return await asyncio.to_thread(self._presence.hold)

    def _start(self, job: Job, *, held: bool = False, drive: Drive | None = None) -> None:
        if not held:
            with self._slots:
                self._busy[_is_run(job)] += 1
        task = asyncio.create_task(self._run(job, drive), name=f"job {job.id} {job.kind}")
        self._running[job.id] = (job, task)

    def _free(self) -> dict[bool, int]:
        """Free slots by lane (adopted jobs may fill a lane past its slots: none free)."""
        with self._slots:
            return {lane: max(0, n - self._busy[lane]) for lane, n in self._capacity.items()}

    async def _claim(self, free: dict[bool, int]) -> list[Job]:
        if not any(free.values()):
            return []
        now = self.clock()
        hinted, self._hinted = self._hinted, False
        # in a burst a worker claims many times a second; a takeover can wait for the poll
        takeovers = time.monotonic() >= self._takeovers_due
        if takeovers:
            self._takeovers_due = time.monotonic() + self.settings.poll_seconds

        def claim(conn: Connection) -> list[Job]:
            lease, owner = self._lease, self.owner
            return [
                job
                for lane, n in free.items()
                for job in queue.claim(
                    conn, owner, now, lease=lease, limit=n, runs=lane, takeovers=takeovers
                )
            ]

        def due(conn: Connection) -> bool:
            return queue.any_due(conn, now, takeovers=takeovers)

        try:
            if takeovers and self._presence.checks_owners and await self._ended_dead_leases(now):
                hinted = True
            # most wake-ups but those for an enqueued job find nothing (a job of this worker
            # ended, a poll): look before locking
            if not hinted and not await self.db.read(due):
                return []
            return await self.db.write(claim)
        except Exception as exc:  # a database hiccup must not kill the worker
            _log_failure(exc, "claiming jobs failed; retrying at the next poll")
            return []

    async def _ended_dead_leases(self, now: datetime) -> bool:
        """SQLite: end the leases of owners whose presence ended (a server that restarted
        finds its dead process's jobs); whether there were any."""
        dead = self._presence.abandoned(await self.db.read(presence.running_owners))
        if dead:
            log.warning("taking over the jobs of %d dead worker(s): %s", len(dead), dead)
            await self.db.write(lambda conn: presence.end_leases(conn, dead, now))
        return bool(dead)

    async def _run(self, job: Job, drive: Drive | None) -> None:
        assert self._handle is not None, "the worker runs jobs only inside run()"
        try:
            with tracing.resumed(job.payload):  # the trace of what queued it
                await (drive() if drive is not None else self._handle(job))
        except errors.StaleLease:
            log.warning("job %s was taken over while it ran; its late writes were refused", job.id)
        except Exception as exc:
            log.exception("job %s (%s) failed outside its handler's care", job.id, job.kind)
            await self._after_failure(job, f"{type(exc).__name__}: {exc}"[:2000])
        finally:
            if self._running.pop(job.id, None) is not None:
                with self._slots:
                    self._busy[_is_run(job)] -= 1
            self._wake.set()  # a slot is free, and a job of the same key may be waiting

    async def _after_failure(self, job: Job, error: str) -> None:
        """Retry the job soon, or end it after its last attempt (never leave it to its lease:
        it would hold its conversation's key until then, and be retried for ever)."""
        try:
            if job.attempts < job.max_attempts:
                now = self.clock()
                await self.db.write(
                    lambda conn: queue.release(conn, job, now, error=error, delay=RETRY_DELAY)
                )
            elif self._give_up is not None:
                await self._give_up(job, error)
            else:
                now = self.clock()
                await self.db.write(lambda conn: queue.finish(conn, job, now, error=error))
        except errors.StaleLease:
            pass  # taken over meanwhile: the new owner decides
        except Exception as exc:
            _log_failure(exc, f"job {job.id}: recording its failure failed")

    async def _beat(self, jobs: list[Job]) -> list[bool]:
        """Extend the leases of ``jobs``; whether each is still held. One transaction skips
        the rows locked meanwhile (a step of their job is committing), so that it holds no
        row while it waits for another; a second waits for those few, or finds them taken
        over or finished."""
        now = self.clock()

        def extend(conn: Connection) -> list[bool]:
            return [queue.heartbeat(conn, j, now, self._lease, unless_busy=True) for j in jobs]

        extended = await self.db.write(extend)
        rest = [j for j, done in zip(jobs, extended, strict=True) if not done]
        if not rest:
            return extended
        later = self.clock()

        def extend_rest(conn: Connection) -> dict[int, bool]:
            return {
                j.id: queue.heartbeat(conn, j, later, self._lease) or not queue.taken_over(conn, j)
                for j in rest
            }

        alive = await self.db.write(extend_rest)
        return [done or alive[j.id] for j, done in zip(jobs, extended, strict=True)]

    async def _heartbeat(self) -> None:
        interval = self._lease.total_seconds() / 3
        while True:
            await asyncio.sleep(interval)
            running = list(self._running.values())
            if not running:
                continue
            try:
                alive = await self._beat([j for j, _ in running])
            except Exception as exc:
                _log_failure(exc, "heartbeat failed; retrying at the next beat")
                continue
            for (job, task), ok in zip(running, alive, strict=True):
                if not ok and not task.done():
                    log.warning("job %s lost its lease; cancelling it here", job.id)
                    task.cancel()


def _log_failure(exc: Exception, what: str) -> None:
    """A traceback for a failure; for an outage (disk full, database down) one line at most
    every ``outage.LOG_EVERY_SECONDS``, however often the worker retries."""
    reason = outage.outage(exc)
    if reason is None:
        log.exception(what)
    elif _LOG_OUTAGE(f"{what}:{reason}"):
        log.warning(
            "%s: %s (said once per %.0f s)", what, outage.describe(reason), outage.LOG_EVERY_SECONDS
        )


def _is_run(job: Job) -> bool:
    return job.kind is JobKind.RUN
