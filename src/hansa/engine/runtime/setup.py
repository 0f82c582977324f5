"""Build the engine's services from settings: the one place that wires the layers below."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta

import sqlalchemy as sa

from hansa import errors
from hansa.bus.memory import MemoryBus
from hansa.bus.postgres import PostgresBus
from hansa.domain.agent import AgentDefinition
from hansa.domain.base import utcnow
from hansa.engine.roster import load_config, roster_from_config
from hansa.engine.routing import Router, rules_from_config
from hansa.engine.runtime.services import Services
from hansa.models.base import Model
from hansa.models.pool import ModelPool
from hansa.models.registry import ProviderOptions, infer_model
from hansa.settings import Settings
from hansa.store import agents, projects, secrets
from hansa.store.db import Database
from hansa.store.migrate import migrate
from hansa.tasks.connectors import mcp_config
from hansa.tasks.registry import default_registry

log = logging.getLogger(__name__)


def provider_options(settings: Settings) -> ProviderOptions:
    """The providers' endpoints and keys, from the settings."""
    return ProviderOptions(
        openai_base_url=settings.openai_base_url,
        openai_api_key=settings.openai_api_key,
        anthropic_base_url=settings.anthropic_base_url,
        anthropic_api_key=settings.anthropic_api_key,
        local_model_path=settings.local_model_path,
        local_cache_reuse=settings.local_cache_reuse,
    )


def build_model(settings: Settings) -> Model:
    """The model named by the settings."""
    return infer_model(settings.model, **provider_options(settings))


def build_pool(settings: Settings, roster: list[AgentDefinition], model: Model | None) -> ModelPool:
    """The process's models: the server default (``model`` if given), and every agent's own
    model, built now, so that a missing key or file is a start-up error."""
    pool = ModelPool({settings.model: model} if model else None, **provider_options(settings))
    for spec in {settings.model, *(a.model_settings.model for a in roster)}:
        if spec:
            pool.get(spec)
    return pool


async def build_services(settings: Settings, *, model: Model | None = None) -> Services:
    """Migrate the database, store the roster, and return ready services."""
    config = load_config(settings.config)
    roster = roster_from_config(config)
    router = Router(rules_from_config(config), {a.id for a in roster})
    models = build_pool(settings, roster, model)
    db = Database(
        settings.database_url,
        lock_timeout_seconds=settings.db_lock_timeout_seconds,
        idle_in_transaction_seconds=settings.db_idle_in_transaction_seconds,
    )
    try:
        await _with_retries(settings, lambda: migrate(db))
        await db.write(lambda conn: agents.replace_roster(conn, None, roster))
        await _secrets_at_rest(settings, db)
    except BaseException:
        await db.dispose()
        await models.aclose()
        raise
    bus: MemoryBus = MemoryBus()
    if db.dialect == "postgresql":
        dsn = db.engine_url().render_as_string(hide_password=False)
        bus = PostgresBus(
            dsn.replace("postgresql+psycopg://", "postgresql://", 1),
            drop_notices=settings.drop_notices,
        )
    return Services(
        settings=settings,
        db=db,
        bus=bus,
        models=models,
        roster=roster,
        router=router,
        registry=default_registry(),
        clock=_clock(settings.clock_skew_seconds),
        stdio_servers=mcp_config.operator_servers(config),
    )


def _clock(skew: float) -> Callable[[], datetime]:
    """The process's clock: the system's, or one running ``skew`` seconds off (a fault)."""
    if not skew:
        return utcnow
    offset = timedelta(seconds=skew)
    return lambda: utcnow() + offset


async def _secrets_at_rest(settings: Settings, db: Database) -> None:
    """Seal what a new key can seal; warn about secrets kept in clear or out of reach."""
    box = secrets.box(settings.secret_keys())
    clear, sealed = await db.write(lambda conn: projects.secrets_at_rest(conn, box))
    if clear:
        log.warning(
            "%d project(s) store connector secrets in clear: set HANSA_SECRET_KEY "
            "(docs/security.md, Secrets) to seal them",
            clear,
        )
    if sealed and not box.sealing:
        log.warning(
            "%d project(s) hold sealed secrets but HANSA_SECRET_KEY is not set: "
            "their connectors will fail until it is",
            sealed,
        )


async def _with_retries(settings: Settings, step: Callable[[], Awaitable[None]]) -> None:
    """Retry while the database is unreachable (it may be restarting), up to a deadline."""
    deadline = time.monotonic() + settings.startup_retry_seconds
    delay = 0.2
    while True:
        try:
            await step()
            return
        except sa.exc.OperationalError as exc:
            if time.monotonic() + delay > deadline:
                raise errors.ConfigError(f"cannot reach the database: {exc}") from exc
            log.warning("database unreachable at start-up (%s); retrying in %.1f s", exc, delay)
            await asyncio.sleep(delay)
            delay = min(delay * 2, 5.0)
