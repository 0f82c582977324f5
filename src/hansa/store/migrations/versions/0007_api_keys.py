"""api_keys: the tenant's API keys and agent tokens, hashed at rest

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-23 12:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import hansa.store.types

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "api_keys",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("tenant_id", sa.String(length=36), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("agent_id", sa.String(length=64), nullable=True),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("hint", sa.String(length=16), nullable=False),
        sa.Column("created_at", hansa.store.types.UtcDateTime(), nullable=False),
        sa.Column("revoked_at", hansa.store.types.UtcDateTime(), nullable=True),
        sa.ForeignKeyConstraint(
            ["tenant_id"], ["tenants.id"], name=op.f("fk_api_keys_tenant_id_tenants")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_api_keys")),
    )
    op.create_index("ux_api_keys_token_hash", "api_keys", ["token_hash"], unique=True)
    op.create_index("ix_api_keys_tenant", "api_keys", ["tenant_id", "created_at"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_api_keys_tenant", table_name="api_keys")
    op.drop_index("ux_api_keys_token_hash", table_name="api_keys")
    op.drop_table("api_keys")
