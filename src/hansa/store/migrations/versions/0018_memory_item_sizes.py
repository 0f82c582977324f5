"""memory_items: size (the bytes of each value as compact JSON), so a tenant's byte quota is
a sum of integers rather than a read of every value; index ix_memory_items_tenant_updated
(tenant_id, updated_at) for a tenant's items, newest first

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-27 11:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("memory_items") as batch:
        batch.add_column(sa.Column("size", sa.Integer(), nullable=False, server_default="0"))
    if op.get_bind().dialect.name == "postgresql":
        op.execute("UPDATE memory_items SET size = octet_length(value::text)")
    else:
        op.execute("UPDATE memory_items SET size = length(CAST(value AS BLOB))")
    op.create_index(
        "ix_memory_items_tenant_updated", "memory_items", ["tenant_id", "updated_at"], unique=False
    )


def downgrade() -> None:
    op.drop_index("ix_memory_items_tenant_updated", table_name="memory_items")
    with op.batch_alter_table("memory_items") as batch:
        batch.drop_column("size")
