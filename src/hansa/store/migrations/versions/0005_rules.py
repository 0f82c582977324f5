"""rules: a tenant's rules (seed 001), read by trigger

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-23 10:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import hansa.store.types

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "rules",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("tenant_id", sa.String(length=36), nullable=False),
        sa.Column("project_id", sa.String(length=36), nullable=True),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("priority", sa.Integer(), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("trigger", sa.String(length=32), nullable=False),
        sa.Column("conditions", hansa.store.types.Json, nullable=False),
        sa.Column("actions", hansa.store.types.Json, nullable=False),
        sa.Column("stop", sa.Boolean(), nullable=False),
        sa.Column("schedule", hansa.store.types.Json, nullable=True),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("created_at", hansa.store.types.UtcDateTime(), nullable=False),
        sa.Column("updated_at", hansa.store.types.UtcDateTime(), nullable=False),
        sa.ForeignKeyConstraint(["tenant_id"], ["tenants.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(
        "ix_rules_trigger", "rules", ["tenant_id", "trigger", "enabled", "priority"], unique=False
    )


def downgrade() -> None:
    op.drop_index("ix_rules_trigger", table_name="rules")
    op.drop_table("rules")
