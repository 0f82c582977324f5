"""assistant_runs: index ix_runs_tenant (tenant_id, created_at) for a tenant's runs, newest
first (GET /api/runs)

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-24 10:00:00.000000
"""

from __future__ import annotations

from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_runs_tenant", "assistant_runs", ["tenant_id", "created_at"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_runs_tenant", table_name="assistant_runs")
