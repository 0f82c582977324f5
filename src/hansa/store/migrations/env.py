"""Alembic environment: runs on the connection Hansa hands it (see store/migrate.py)."""

from __future__ import annotations

from alembic import context

from hansa.store.tables import metadata

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("run migrations through `hansa migrate` or hansa.store.migrate")

context.configure(
    connection=connection,
    target_metadata=metadata,
    render_as_batch=connection.dialect.name == "sqlite",
)
with context.begin_transaction():
    context.run_migrations()
