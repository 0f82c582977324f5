"""Bring the schema to the newest revision, and make sure the default tenant exists."""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa
from alembic import command
from alembic.config import Config

from hansa.domain.base import utcnow
from hansa.store import tables
from hansa.store.db import DEFAULT_TENANT_ID, Database

_MIGRATIONS = Path(__file__).parent / "migrations"


def alembic_config(connection: sa.Connection | None = None) -> Config:
    """An Alembic config pointing at Hansa's migrations."""
    config = Config()
    config.set_main_option("script_location", str(_MIGRATIONS))
    config.attributes["connection"] = connection
    return config


MIGRATION_LOCK = 7_262_021
"""PostgreSQL advisory lock id: processes starting together migrate one after another."""


def _upgrade(conn: sa.Connection) -> None:
    if conn.dialect.name == "postgresql":
        conn.execute(sa.text("SELECT pg_advisory_xact_lock(:id)"), {"id": MIGRATION_LOCK})
    command.upgrade(alembic_config(conn), "head")
    found = conn.scalar(
        sa.select(tables.tenants.c.id).where(tables.tenants.c.id == DEFAULT_TENANT_ID)
    )
    if found is None:
        conn.execute(
            tables.tenants.insert().values(
                id=DEFAULT_TENANT_ID, name="Default tenant", created_at=utcnow()
            )
        )


async def migrate(db: Database) -> None:
    """Run pending migrations and seed the default tenant; safe to call at every start."""
    await db.write(_upgrade)
