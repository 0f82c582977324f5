"""assistant_conversations: client_id, the id a client chose for its thread (a UUID), unique
per tenant (ix_conversations_tenant_client (tenant_id, client_id)), so two tenants' clients
may choose the same one; a thread opened with the client's id before is given it as its
client_id (its conversation's id, 36 characters: Hansa's own ids are 26)

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-27 14:30:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("assistant_conversations") as batch:
        batch.add_column(sa.Column("client_id", sa.String(36), nullable=True))
    op.execute("UPDATE assistant_conversations SET client_id = id WHERE length(id) = 36")
    op.create_index(
        "ix_conversations_tenant_client",
        "assistant_conversations",
        ["tenant_id", "client_id"],
        unique=True,
    )


def downgrade() -> None:
    op.drop_index("ix_conversations_tenant_client", table_name="assistant_conversations")
    with op.batch_alter_table("assistant_conversations") as batch:
        batch.drop_column("client_id")
