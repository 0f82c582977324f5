"""Start and stop the engine: services, the bus listener and the in-process worker.

This is the engine's composition root: the one module that sees turns, runs and the
runtime together, and the one place that gives the worker its handlers and the
services their worker.
"""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial

from hansa import logs
from hansa.bus.postgres import PostgresBus
from hansa.domain.job import Job, JobKind
from hansa.engine.handoffs import service as handoff_service
from hansa.engine.runs import run_job, summary
from hansa.engine.runtime.give_up import give_up
from hansa.engine.runtime.services import Drive, Services
from hansa.engine.runtime.setup import build_services
from hansa.engine.runtime.worker import Handler, Worker
from hansa.engine.schedules import fire_job
from hansa.engine.sessions import step_job
from hansa.engine.triggers import jobs
from hansa.engine.turns import summary_job, turn_job
from hansa.engine.turns.stages import context
from hansa.engine.webhooks import delivery
from hansa.models.base import Model
from hansa.settings import Settings

log = logging.getLogger(__name__)

HANDLERS = {
    JobKind.TURN: turn_job.run_turn_job,
    JobKind.RUN: run_job.run_run_job,
    JobKind.RUN_SUMMARY: summary.run_summary_job,
    JobKind.TRIGGER: jobs.run_trigger_job,
    JobKind.TIMER: jobs.run_timer_job,
    JobKind.CONVERSATION_SUMMARY: summary_job.run_conversation_summary_job,
    JobKind.SESSION_STEP: step_job.run_session_step_job,
    JobKind.SCHEDULE: fire_job.run_schedule_job,
    JobKind.WEBHOOK_DELIVERY: delivery.run_delivery_job,
}


@asynccontextmanager
async def running(
    settings: Settings, *, model: Model | None = None, workers: int | None = None
) -> AsyncIterator[Services]:
    """Services with their background parts running; everything stops on exit."""
    services = await build_services(settings, model=model)
    services = dataclasses.replace(services, open_handoff=handoff_service.opening_from_graph)
    settle_heap()
    worker: Worker | None = None
    task: asyncio.Task[None] | None = None
    warming: asyncio.Task[None] | None = None
    if (workers if workers is not None else settings.workers) > 0:
        worker = Worker(settings, services.db, services.clock)
        services = dataclasses.replace(services, local_worker=_Observed(worker, services))
        services.db.on_enqueued = services.wake_worker  # after any commit that queued a job
        warming = asyncio.create_task(warm(services), name="model warm-up")
        task = asyncio.create_task(
            worker.run(_handler(services), partial(give_up, services)), name="in-process worker"
        )
        await asyncio.wait({warming}, timeout=WARM_UP_WAIT_SECONDS)  # then in the background
    if isinstance(services.bus, PostgresBus):
        services.bus.on_job = services.wake_worker
        services.bus.start()
    try:
        yield services
    finally:
        if isinstance(services.bus, PostgresBus):
            services.bus.stop()
        if warming is not None:
            warming.cancel()
            await asyncio.gather(warming, return_exceptions=True)
        if worker is not None and task is not None:
            worker.stop()
            await task
        await services.models.aclose()
        await services.db.dispose()


WARM_UP_MESSAGE = "Hello"
WARM_UP_WAIT_SECONDS = 10.0
"""How long start-up waits for the model's warm-up before it serves (the rest goes on in
the background). The embedded model takes ~2.5 s here (weights 0.35 s, a plain turn's
~430-token system prompt the rest); a first turn sent meanwhile waited for it all the same."""


async def warm(services: Services) -> None:
    """Warm the supervisor's model with a plain turn's prompt (``Model.warm``: the embedded
    model loads its weights and computes the system prompt, which llama.cpp keeps), so the
    first plain turn after start-up streams as soon as later ones."""
    started = time.perf_counter()
    try:
        model = services.model_for(services.supervisor)
        await model.warm(context.plain_prompt(services, WARM_UP_MESSAGE))
    except Exception as exc:  # the first turn will say what is wrong, in its own words
        log.warning("the model was not warmed: %s", exc)
        return
    ms = (time.perf_counter() - started) * 1000
    if type(model).warm is not Model.warm:
        log.info("model %s warmed in %.0f ms", model.model_name, ms)


def _handler(services: Services) -> Handler:
    async def handle(job: Job) -> None:
        await _observed(services, job, partial(HANDLERS[job.kind], services, job))

    return handle


async def _observed(services: Services, job: Job, work: Drive) -> None:
    """Run a job's work with its ids bound to every log line; time it, log its end."""
    payload = job.payload
    with logs.bound(
        request_id=None,  # a job adopted while a request was served is not that request
        job_id=str(job.id),
        job_kind=job.kind.value,
        conversation_id=_payload_id(payload, "conversation"),
        turn_id=_payload_id(payload, "turn"),
        run_id=_payload_id(payload, "run"),
    ):
        started = time.perf_counter()
        ok = False
        try:
            await work()
            ok = True
        finally:
            seconds = time.perf_counter() - started
            services.metrics.job_done(job.kind, seconds, ok=ok)
            ms = round(seconds * 1000, 1)
            log.info(
                "%s job %d %s in %.1f ms",
                job.kind.value,
                job.id,
                "ended" if ok else "failed",
                ms,
                extra={"duration_ms": ms, "outcome": "ok" if ok else "error"},
            )


def _payload_id(payload: dict[str, object], name: str) -> str | None:
    found = payload.get(f"{name}Id", payload.get(f"{name}_id"))
    return found if isinstance(found, str) else None


class _Observed:
    """The worker as the services see it: jobs handed over to it are observed too."""

    def __init__(self, worker: Worker, services: Services) -> None:
        self.owner = worker.owner
        self._worker = worker
        self._services = services

    def wake(self) -> None:
        self._worker.wake()

    def reserve_run_slot(self) -> bool:
        return self._worker.reserve_run_slot()

    def release_run_slots(self, count: int) -> None:
        self._worker.release_run_slots(count)

    def adopt(self, job: Job, drive: Drive) -> None:
        self._worker.adopt(job, partial(_observed, self._services, job, drive))


COLLECTOR_THRESHOLDS = (20_000, 20, 20)
"""Allocations between collections of the youngest generation, and the two ratios above it."""


def settle_heap() -> None:
    """Take what lives as long as the process out of the cyclic garbage collector's work.

    After start-up the heap holds ~170,000 long-lived objects (modules, the schema, compiled
    statements, validators, the model); every full collection walked them all (~90 ms here,
    four times in a burst of 200 runs), and a young one ran every 700 allocations. Frozen,
    and with young collections every 20,000 allocations, a burst ran ~35 % more runs per
    second (decision 0007). Cyclic garbage made later is still collected, only less often.
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(*COLLECTOR_THRESHOLDS)
