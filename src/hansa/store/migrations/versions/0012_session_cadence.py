"""agent_sessions.every_seconds: ongoing work checks in at a cadence

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-23 13:10:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("agent_sessions") as batch:
        batch.add_column(sa.Column("every_seconds", sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("agent_sessions") as batch:
        batch.drop_column("every_seconds")
