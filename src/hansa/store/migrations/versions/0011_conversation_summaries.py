"""conversation_summaries: each conversation's rolling summary, every version kept

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-24 10:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import hansa.store.types

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "conversation_summaries",
        sa.Column("conversation_id", sa.String(length=36), nullable=False),
        sa.Column("version", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("tenant_id", sa.String(length=36), nullable=False),
        sa.Column("covered_through_seq", sa.Integer(), nullable=False),
        sa.Column("covered_messages", sa.Integer(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("facts", hansa.store.types.Json, nullable=False),
        sa.Column("model_failed", sa.Boolean(), nullable=False),
        sa.Column("created_at", hansa.store.types.UtcDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["conversation_id"],
            ["assistant_conversations.id"],
            name=op.f("fk_conversation_summaries_conversation_id_assistant_conversations"),
        ),
        sa.ForeignKeyConstraint(
            ["tenant_id"], ["tenants.id"], name=op.f("fk_conversation_summaries_tenant_id_tenants")
        ),
        sa.PrimaryKeyConstraint(
            "conversation_id", "version", name=op.f("pk_conversation_summaries")
        ),
    )


def downgrade() -> None:
    op.drop_table("conversation_summaries")
