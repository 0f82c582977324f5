"""Start and stop what runs beside the API: the bus listener and the in-process worker."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from hansa.bus.postgres import PostgresBus
from hansa.engine.services import Services
from hansa.engine.setup import build_services
from hansa.engine.worker import Worker
from hansa.models.base import Model
from hansa.settings import Settings


@asynccontextmanager
async def running(
    settings: Settings, *, model: Model | None = None, workers: int | None = None
) -> AsyncIterator[Services]:
    """Services with their background parts running; everything stops on exit."""
    services = await build_services(settings, model=model)
    worker: Worker | None = None
    task: asyncio.Task[None] | None = None
    if (workers if workers is not None else settings.workers) > 0:
        worker = Worker(services)  # it hooks itself into the services
        task = asyncio.create_task(worker.run(), name="in-process worker")
    if isinstance(services.bus, PostgresBus):
        services.bus.on_job = services.wake_worker
        services.bus.start()
    try:
        yield services
    finally:
        if isinstance(services.bus, PostgresBus):
            services.bus.stop()
        if worker is not None and task is not None:
            worker.stop()
            await task
        await services.model.aclose()
        await services.db.dispose()
