"""handoffs: a conversation handed to a person, with its snapshot; one open per conversation

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-23 10:10:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import hansa.store.types

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

_OPEN = sa.text("status IN ('pending', 'active')")


def upgrade() -> None:
    op.create_table(
        "handoffs",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("tenant_id", sa.String(length=36), nullable=False),
        sa.Column("conversation_id", sa.String(length=36), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("reason", sa.String(length=500), nullable=False),
        sa.Column("priority", sa.String(length=16), nullable=False),
        sa.Column("priority_rank", sa.Integer(), nullable=False),
        sa.Column("metadata", hansa.store.types.Json, nullable=False),
        sa.Column("snapshot", hansa.store.types.Json, nullable=False),
        sa.Column("requested_by", hansa.store.types.Json, nullable=False),
        sa.Column("assignee", sa.String(length=200), nullable=True),
        sa.Column("paused_runs", hansa.store.types.Json, nullable=False),
        sa.Column("created_at", hansa.store.types.UtcDateTime(), nullable=False),
        sa.Column("assigned_at", hansa.store.types.UtcDateTime(), nullable=True),
        sa.Column("resolved_at", hansa.store.types.UtcDateTime(), nullable=True),
        sa.ForeignKeyConstraint(["tenant_id"], ["tenants.id"]),
        sa.ForeignKeyConstraint(["conversation_id"], ["assistant_conversations.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(
        "ix_handoffs_queue", "handoffs", ["tenant_id", "status", "priority_rank", "created_at"]
    )
    op.create_index(
        "ux_handoffs_open",
        "handoffs",
        ["conversation_id"],
        unique=True,
        sqlite_where=_OPEN,
        postgresql_where=_OPEN,
    )


def downgrade() -> None:
    op.drop_index("ux_handoffs_open", table_name="handoffs")
    op.drop_index("ix_handoffs_queue", table_name="handoffs")
    op.drop_table("handoffs")
