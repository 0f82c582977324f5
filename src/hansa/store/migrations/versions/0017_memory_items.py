"""memory_items: the Agent Protocol's store (long-term memory items by namespace and key);
its primary key (tenant, namespace, key) serves a tenant's prefix searches, namespace and
key compared bytewise (the "C" collation on PostgreSQL)

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-26 10:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import hansa.store.types

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def _bytewise(length: int) -> sa.types.TypeEngine[str]:
    return sa.String(length=length).with_variant(
        sa.String(length=length, collation="C"), "postgresql"
    )


def upgrade() -> None:
    op.create_table(
        "memory_items",
        sa.Column("tenant_id", sa.String(length=36), nullable=False),
        sa.Column("namespace", _bytewise(1009), nullable=False),
        sa.Column("key", _bytewise(200), nullable=False),
        sa.Column("value", hansa.store.types.Json, nullable=False),
        sa.Column("created_at", hansa.store.types.UtcDateTime(), nullable=False),
        sa.Column("updated_at", hansa.store.types.UtcDateTime(), nullable=False),
        sa.Column("expires_at", hansa.store.types.UtcDateTime(), nullable=True),
        sa.ForeignKeyConstraint(
            ["tenant_id"], ["tenants.id"], name=op.f("fk_memory_items_tenant_id_tenants")
        ),
        sa.PrimaryKeyConstraint("tenant_id", "namespace", "key", name=op.f("pk_memory_items")),
    )


def downgrade() -> None:
    op.drop_table("memory_items")
