"""llm_calls: index ix_llm_calls_turn (turn_id) for a turn's calls, summed at every turn of
the chat routes (decision 0043)

Revision ID: 0023
Revises: 0022
Create Date: 2026-11-27 21:05:00.000000
"""

from __future__ import annotations

from alembic import op

revision = "0023"
down_revision = "0022"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_llm_calls_turn", "llm_calls", ["turn_id"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_llm_calls_turn", table_name="llm_calls")
