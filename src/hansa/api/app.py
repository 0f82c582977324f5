"""The composition root: ``create_app(settings)`` wires every layer into one ASGI app."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from hansa.api import errors as api_errors
from hansa.api.routes import chat, conversations, health, projects, runs, stream, usage
from hansa.engine.setup import build_services
from hansa.engine.worker import Worker
from hansa.models.base import Model
from hansa.settings import Settings

log = logging.getLogger(__name__)

_STATIC = Path(__file__).resolve().parent.parent / "web" / "static"


def create_app(settings: Settings | None = None, *, model: Model | None = None) -> FastAPI:
    """The app for ``settings``; the database is migrated and the worker started at start-up."""
    settings = settings or Settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        services = await build_services(settings, model=model)
        app.state.services = services
        worker_task: asyncio.Task[None] | None = None
        worker: Worker | None = None
        if settings.workers > 0:
            worker = Worker(services)
            services.wake_worker = worker.wake
            worker_task = asyncio.create_task(worker.run(), name="in-process worker")
        try:
            yield
        finally:
            if worker is not None and worker_task is not None:
                worker.stop()
                await worker_task
            await services.model.aclose()
            await services.db.dispose()

    app = FastAPI(
        title="Hansa",
        summary="Multi-agent assistants that plan, act and show their work.",
        version="0.1.0",
        lifespan=lifespan,
    )
    api_errors.install(app)
    for module in (health, projects, conversations, stream, chat, runs, usage):
        app.include_router(module.router)
    if _STATIC.is_dir():
        app.mount("/", StaticFiles(directory=_STATIC, html=True), name="panel")
    app.add_middleware(api_errors.BodyLimit, max_bytes=settings.max_body_bytes)
    return app
