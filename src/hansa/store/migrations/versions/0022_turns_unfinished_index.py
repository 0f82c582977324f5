"""assistant_turns: partial index ix_turns_unfinished (conversation_id, created_at) of the
queued and running turns, read at every message posted (decision 0043)

Revision ID: 0022
Revises: 0021
Create Date: 2026-11-27 21:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0022"
down_revision = "0021"
branch_labels = None
depends_on = None

_UNFINISHED = "status IN ('queued', 'running')"


def upgrade() -> None:
    op.create_index(
        "ix_turns_unfinished",
        "assistant_turns",
        ["conversation_id", "created_at"],
        unique=False,
        sqlite_where=sa.text(_UNFINISHED),
        postgresql_where=sa.text(_UNFINISHED),
    )


def downgrade() -> None:
    op.drop_index("ix_turns_unfinished", table_name="assistant_turns")
