"""agent_sessions and agent_session_steps: long-running agent sessions (seed 004)

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-23 13:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import hansa.store.types

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "agent_sessions",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("tenant_id", sa.String(length=36), nullable=False),
        sa.Column("agent_id", sa.String(length=64), nullable=False),
        sa.Column("conversation_id", sa.String(length=36), nullable=False),
        sa.Column("goal", sa.Text(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("iteration", sa.Integer(), nullable=False),
        sa.Column("step", sa.String(length=200), nullable=False),
        sa.Column("state", hansa.store.types.Json, nullable=False),
        sa.Column("guidance", sa.Text(), nullable=True),
        sa.Column("max_steps", sa.Integer(), nullable=False),
        sa.Column("max_runtime_seconds", sa.Float(), nullable=True),
        sa.Column("next_run_at", hansa.store.types.UtcDateTime(), nullable=True),
        sa.Column("reason", sa.String(length=500), nullable=True),
        sa.Column("created_at", hansa.store.types.UtcDateTime(), nullable=False),
        sa.Column("updated_at", hansa.store.types.UtcDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["conversation_id"],
            ["assistant_conversations.id"],
            name=op.f("fk_agent_sessions_conversation_id_assistant_conversations"),
        ),
        sa.ForeignKeyConstraint(
            ["tenant_id"], ["tenants.id"], name=op.f("fk_agent_sessions_tenant_id_tenants")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_agent_sessions")),
    )
    op.create_index("ix_agent_sessions_tenant", "agent_sessions", ["tenant_id", "created_at"])
    op.create_index(
        "ix_agent_sessions_conversation", "agent_sessions", ["conversation_id", "status"]
    )
    op.create_table(
        "agent_session_steps",
        sa.Column("session_id", sa.String(length=36), nullable=False),
        sa.Column("iteration", sa.Integer(), nullable=False),
        sa.Column("tenant_id", sa.String(length=36), nullable=False),
        sa.Column("step", sa.String(length=200), nullable=False),
        sa.Column("next_step", sa.String(length=200), nullable=False),
        sa.Column("text", sa.Text(), nullable=True),
        sa.Column("data", hansa.store.types.Json, nullable=True),
        sa.Column("done", sa.Boolean(), nullable=False),
        sa.Column("notes", sa.Text(), nullable=True),
        sa.Column("guidance", sa.Text(), nullable=True),
        sa.Column("state", hansa.store.types.Json, nullable=False),
        sa.Column("started_at", hansa.store.types.UtcDateTime(), nullable=False),
        sa.Column("finished_at", hansa.store.types.UtcDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["session_id"],
            ["agent_sessions.id"],
            name=op.f("fk_agent_session_steps_session_id_agent_sessions"),
        ),
        sa.ForeignKeyConstraint(
            ["tenant_id"], ["tenants.id"], name=op.f("fk_agent_session_steps_tenant_id_tenants")
        ),
        sa.PrimaryKeyConstraint("session_id", "iteration", name=op.f("pk_agent_session_steps")),
    )


def downgrade() -> None:
    op.drop_table("agent_session_steps")
    op.drop_index("ix_agent_sessions_conversation", table_name="agent_sessions")
    op.drop_index("ix_agent_sessions_tenant", table_name="agent_sessions")
    op.drop_table("agent_sessions")
