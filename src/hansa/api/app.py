"""The composition root: ``create_app(settings)`` wires every layer into one ASGI app."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import Depends, FastAPI

import hansa
from hansa.api import auth, errors, limits, mcp_server, openapi, policy
from hansa.api.access import AccessLog
from hansa.api.guard import Cors, Guard
from hansa.api.idempotency import IdempotencyKeys
from hansa.api.panel import PanelMount, panel
from hansa.api.routes import (
    agent_state,
    agents,
    agui,
    ap_crons,
    ap_graphs,
    ap_runs,
    ap_state,
    ap_store,
    ap_threads,
    chat,
    claims,
    control,
    conversations,
    graphs,
    handoffs,
    health,
    keys,
    mcp_servers,
    me,
    metrics,
    openai_chat,
    projects,
    rules,
    run_logs,
    runs,
    schedules,
    services,
    sessions,
    stream,
    summaries,
    turns,
    usage,
    webhook_message,
    webhooks,
    workspace,
)
from hansa.engine.running import running
from hansa.models.base import Model
from hansa.settings import Settings

log = logging.getLogger(__name__)

_STATIC = Path(__file__).resolve().parent.parent / "web" / "static"


def create_app(settings: Settings | None = None, *, model: Model | None = None) -> FastAPI:
    """The app for ``settings``; the database is migrated and the worker started at start-up."""
    settings = settings or Settings()
    mcp = mcp_server.McpServer()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with running(settings, model=model) as services, mcp.serving(services):
            app.state.services = services
            yield

    app = FastAPI(
        title="Hansa",
        summary="Multi-agent assistants that plan, act and show their work.",
        version=hansa.__version__,
        lifespan=lifespan,
        dependencies=[Depends(policy.authorize)],  # what each role may do, on every route
        docs_url=None,  # api/openapi.py serves them, from local files
        redoc_url=None,
        generate_unique_id_function=openapi.operation_id,
    )
    errors.install(app)
    routers = (
        health,
        metrics,
        me,
        keys,
        agents,
        projects,
        conversations,
        agent_state,
        summaries,
        claims,
        control,
        handoffs,
        stream,
        chat,
        turns,
        runs,
        run_logs,
        rules,
        graphs,
        sessions,
        schedules,
        services,
        webhooks,
        webhook_message,
        usage,
        workspace,
        openai_chat,
        agui,
        mcp_servers,
        ap_store,
        ap_threads,
        ap_graphs,
        ap_state,
        ap_runs,
        ap_crons,
    )
    for module in routers:
        app.include_router(module.router)
    openapi.install(app)
    app.router.routes.append(mcp.route())  # an ASGI route: not in the OpenAPI description
    if _STATIC.is_dir():
        app.router.routes.append(PanelMount("/", app=panel(_STATIC), name="panel"))
    app.add_middleware(IdempotencyKeys)  # inside the body limit: it reads whole bodies
    app.add_middleware(
        errors.BodyLimit, max_bytes=settings.max_body_bytes, max_depth=settings.max_json_depth
    )
    limits.install(app, settings)  # inside the guard (per principal), before bodies are read
    app.add_middleware(
        Guard, loopback=auth.is_loopback(settings.host), origins=settings.cors_origins
    )  # who asks
    app.add_middleware(Cors, origins=settings.cors_origins)  # preflights come without keys
    app.add_middleware(AccessLog)  # outermost: every answer, refusals too, has a request id
    return app
