"""lease_owner holds any host name; rule_firings: the last firings of each rule

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-23 12:15:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import hansa.store.types

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("jobs") as batch:
        batch.alter_column(
            "lease_owner",
            existing_type=sa.String(length=64),
            type_=sa.Text(),
            existing_nullable=True,
        )
    op.create_table(
        "rule_firings",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("tenant_id", sa.String(length=36), nullable=False),
        sa.Column("rule_id", sa.String(length=36), nullable=False),
        sa.Column("trigger", sa.String(length=32), nullable=False),
        sa.Column("conversation_id", sa.String(length=36), nullable=True),
        sa.Column("actions", hansa.store.types.Json, nullable=False),
        sa.Column("created_at", hansa.store.types.UtcDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["tenant_id"], ["tenants.id"], name=op.f("fk_rule_firings_tenant_id_tenants")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_rule_firings")),
    )
    op.create_index("ix_rule_firings_rule", "rule_firings", ["rule_id", "id"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_rule_firings_rule", table_name="rule_firings")
    op.drop_table("rule_firings")
    with op.batch_alter_table("jobs") as batch:
        batch.alter_column(
            "lease_owner",
            existing_type=sa.Text(),
            type_=sa.String(length=64),
            existing_nullable=True,
        )
