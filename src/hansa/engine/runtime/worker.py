"""The worker: claims jobs from the queue, runs them, keeps their leases alive.

One worker runs up to ``worker_concurrency`` turns and other jobs at once, and up to
``worker_run_concurrency`` run jobs beside them (a run's job mostly waits for its tasks;
it must not take a turn's slot). It wakes when this process enqueues a job and polls for
jobs enqueued elsewhere.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import threading
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta

from sqlalchemy import Connection

from hansa import errors
from hansa.domain.job import Job, JobKind
from hansa.engine.runs import run_job, summary
from hansa.engine.runtime.faults import crash_point
from hansa.engine.runtime.recorder import Recorder
from hansa.engine.runtime.services import Services
from hansa.engine.turns.pipeline import TurnContext, run_pipeline
from hansa.engine.turns.stages import TURN_STAGES, fail
from hansa.store import queue

log = logging.getLogger(__name__)

Handler = Callable[[Services, Job], Awaitable[None]]


async def run_turn_job(services: Services, job: Job) -> None:
    """Run the turn a job stands for."""
    payload = job.payload
    ctx = TurnContext(
        services=services,
        job=job,
        tenant_id=job.tenant_id,
        turn_id=payload["turnId"],
        conversation_id=payload["conversationId"],
        message_id=payload["messageId"],
        active_agent_id=payload.get("activeAgentId"),
        request_context=payload.get("projectContext"),
        recorder=Recorder(services, job.tenant_id, payload["conversationId"], job),
    )
    if job.attempts > job.max_attempts:  # it kept crashing workers: stop and say so
        ctx.error = errors.HansaError("the turn was interrupted too many times")
        await fail(ctx)
        return
    await run_pipeline(ctx, TURN_STAGES, fail)


HANDLERS: dict[JobKind, Handler] = {
    JobKind.TURN: run_turn_job,
    JobKind.RUN: run_job.run_run_job,
    JobKind.RUN_SUMMARY: summary.run_summary_job,
}


class Worker:
    """Claims and runs jobs until stopped."""

    def __init__(self, services: Services, *, owner: str | None = None) -> None:
        self.services = services
        self.owner = owner or f"{socket.gethostname()}:{os.getpid()}:{id(self):x}"
        self._wake = asyncio.Event()
        self._stop = asyncio.Event()
        self._running: dict[int, tuple[Job, asyncio.Task[None]]] = {}
        settings = services.settings
        self._lease = timedelta(seconds=settings.lease_seconds)
        self._capacity = {False: settings.worker_concurrency, True: settings.worker_run_concurrency}
        """Slots by lane: run jobs (True) wait on their tasks for long; turns must not."""
        self._busy = {False: 0, True: 0}
        """Slots taken by lane, counting run slots held for hand-overs not yet committed."""
        self._slots = threading.Lock()  # reservations may come from a PostgreSQL write thread
        # this process's writers reach the worker through the services
        services.wake_worker = self.wake
        services.adopt = self.adopt
        services.worker_owner = self.owner
        services.reserve_run_slot = self.reserve_run_slot
        services.release_run_slots = self.release_run_slots

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

    def adopt(self, jobs: list[Job]) -> None:
        """Run jobs that were claimed for this worker inside another job's transaction."""
        for job in jobs:
            if job.lease_owner != self.owner:
                continue
            held = _is_run(job)  # its transaction held a run slot for it
            if job.id in self._running:
                if held:
                    self.release_run_slots(1)
                continue
            self._start(job, held=held)

    def wake(self) -> None:
        """A job was enqueued: look now rather than at the next poll."""
        self._wake.set()

    def stop(self) -> None:
        """Stop claiming; running jobs are cancelled when ``run`` returns."""
        self._stop.set()
        self._wake.set()

    async def run(self) -> None:
        """Claim and run jobs until ``stop``."""
        heartbeat = asyncio.create_task(self._heartbeat(), name=f"heartbeat {self.owner}")
        try:
            while not self._stop.is_set():
                self._wake.clear()
                free = self._free()
                claimed = await self._claim(free)
                for job in claimed:
                    if job.attempts > 1:
                        crash_point(self.services, "recovery.claim")
                    self._start(job)
                took = {lane: sum(_is_run(j) is lane for j in claimed) for lane in free}
                if any(n and took[lane] == n for lane, n in free.items()):
                    continue  # a lane took all it could: there may be more waiting
                try:
                    await asyncio.wait_for(self._wake.wait(), self.services.settings.poll_seconds)
                except TimeoutError:
                    pass
        finally:
            heartbeat.cancel()
            tasks = [t for _, t in self._running.values()]
            for t in tasks:
                t.cancel()
            await asyncio.gather(heartbeat, *tasks, return_exceptions=True)

    def _start(self, job: Job, *, held: bool = False) -> None:
        if not held:
            with self._slots:
                self._busy[_is_run(job)] += 1
        task = asyncio.create_task(self._run(job), name=f"job {job.id} {job.kind}")
        self._running[job.id] = (job, task)

    def _free(self) -> dict[bool, int]:
        """Free slots by lane (adopted jobs may fill a lane past its slots: none free)."""
        with self._slots:
            return {lane: max(0, n - self._busy[lane]) for lane, n in self._capacity.items()}

    async def _claim(self, free: dict[bool, int]) -> list[Job]:
        if not any(free.values()):
            return []
        now = self.services.clock()

        def claim(conn: Connection) -> list[Job]:
            return [
                job
                for lane, n in free.items()
                for job in queue.claim(conn, self.owner, now, lease=self._lease, limit=n, runs=lane)
            ]

        try:
            # most wake-ups find nothing (a job of this worker ended): look before locking
            if not await self.services.db.read(lambda conn: queue.any_due(conn, now)):
                return []
            return await self.services.db.write(claim)
        except Exception:  # a database hiccup must not kill the worker
            log.exception("claiming jobs failed; retrying at the next poll")
            return []

    async def _run(self, job: Job) -> None:
        try:
            await HANDLERS[job.kind](self.services, job)
        except errors.StaleLease:
            log.warning("job %s was taken over while it ran; its late writes were refused", job.id)
        except Exception:
            log.exception("job %s (%s) failed outside its handler's care", job.id, job.kind)
        finally:
            if self._running.pop(job.id, None) is not None:
                with self._slots:
                    self._busy[_is_run(job)] -= 1
            self._wake.set()  # a slot is free, and a job of the same key may be waiting

    async def _heartbeat(self) -> None:
        interval = self._lease.total_seconds() / 3
        while True:
            await asyncio.sleep(interval)
            running = list(self._running.values())
            if not running:
                continue
            now = self.services.clock()

            jobs = [j for j, _ in running]

            def extend(conn: Connection, jobs: list[Job] = jobs, now: datetime = now) -> list[bool]:
                return [
                    queue.heartbeat(conn, j, now, self._lease) or not queue.taken_over(conn, j)
                    for j in jobs
                ]

            try:
                alive = await self.services.db.write(extend)
            except Exception:
                log.exception("heartbeat failed; retrying at the next beat")
                continue
            for (job, task), ok in zip(running, alive, strict=True):
                if not ok and not task.done():
                    log.warning("job %s lost its lease; cancelling it here", job.id)
                    task.cancel()


def _is_run(job: Job) -> bool:
    return job.kind is JobKind.RUN
