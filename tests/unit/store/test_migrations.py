"""Migrations: 0004 back-fills the slug column from existing entities, on both databases,
and the migrated schema is the one store/tables.py declares."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from hansa.domain.base import new_id, utcnow
from hansa.store import tables
from hansa.store.db import DEFAULT_TENANT_ID as T
from hansa.store.db import Database
from hansa.store.migrate import alembic_config


def _to(db: Database, revision: str) -> None:
    db.write_now(lambda conn: command.upgrade(alembic_config(conn), revision))


def test_0004_back_fills_slugs_from_the_data(bare: Database) -> None:
    _to(bare, "0003")
    entities = {
        "page": {"slug": "pricing", "html": ""},
        "number": {"slug": 42},
        "long": {"slug": "x" * 301},
        "none": {"html": ""},
    }

    def seed(conn: sa.Connection) -> None:
        now = utcnow()
        conn.execute(tables.tenants.insert().values(id=T, name="t", created_at=now))
        for name, data in entities.items():
            conn.execute(
                tables.workspace_entities.insert().values(
                    id=new_id(),
                    tenant_id=T,
                    project_id=None,
                    kind="page",
                    name=name,
                    parent_id=None,
                    position=0,
                    data=data,
                    idempotency_key=None,
                    created_at=now,
                    updated_at=now,
                    deleted_at=None,
                )
            )

    bare.write_now(seed)
    _to(bare, "head")
    ent = tables.workspace_entities
    rows = bare.write_now(lambda conn: conn.execute(sa.select(ent.c.name, ent.c.slug)).all())
    assert dict(rows) == {"page": "pricing", "number": None, "long": None, "none": None}


def test_the_migrated_schema_is_the_declared_one(bare: Database) -> None:
    _to(bare, "head")

    def differences(conn: sa.Connection) -> list[object]:
        return list(compare_metadata(MigrationContext.configure(conn), tables.metadata))

    assert bare.write_now(differences) == []


def test_0004_downgrades_and_upgrades_again(bare: Database) -> None:
    _to(bare, "head")
    bare.write_now(lambda conn: command.downgrade(alembic_config(conn), "0003"))
    columns = bare.write_now(
        lambda conn: [c["name"] for c in sa.inspect(conn).get_columns("workspace_entities")]
    )
    assert "slug" not in columns
    _to(bare, "head")
