"""jobs: ix_jobs_key (key, status) replaced by the partial ix_jobs_live_key (key) of the
queued and running jobs, read at every claim and post (decision 0043)

Revision ID: 0024
Revises: 0023
Create Date: 2026-11-27 21:50:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0024"
down_revision = "0023"
branch_labels = None
depends_on = None

_LIVE = "status IN ('queued', 'running')"


def upgrade() -> None:
    op.drop_index("ix_jobs_key", table_name="jobs")
    op.create_index(
        "ix_jobs_live_key",
        "jobs",
        ["key"],
        unique=False,
        sqlite_where=sa.text(_LIVE),
        postgresql_where=sa.text(_LIVE),
    )


def downgrade() -> None:
    op.drop_index("ix_jobs_live_key", table_name="jobs")
    op.create_index("ix_jobs_key", "jobs", ["key", "status"], unique=False)
