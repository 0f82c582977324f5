"""graphs: prompt graphs (seed 001), every version of each kept

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-23 15:30:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import hansa.store.types

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "graphs",
        sa.Column("tenant_id", sa.String(length=36), nullable=False),
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("version", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("components", hansa.store.types.Json, nullable=False),
        sa.Column("edges", hansa.store.types.Json, nullable=False),
        sa.Column("created_at", hansa.store.types.UtcDateTime(), nullable=False),
        sa.Column("created_by", sa.String(length=100), nullable=False),
        sa.ForeignKeyConstraint(
            ["tenant_id"], ["tenants.id"], name=op.f("fk_graphs_tenant_id_tenants")
        ),
        sa.PrimaryKeyConstraint("tenant_id", "id", "version", name=op.f("pk_graphs")),
    )


def downgrade() -> None:
    op.drop_table("graphs")
