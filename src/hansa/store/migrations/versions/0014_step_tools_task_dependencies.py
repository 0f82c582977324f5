"""agent_session_steps.tools (the tools a step used); assistant_tasks.node_id and
depends_on (a task is ready when the tasks it depends on are final: graphs)

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-23 15:40:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import hansa.store.types

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("agent_session_steps") as batch:
        batch.add_column(sa.Column("tools", hansa.store.types.Json, nullable=True))
    with op.batch_alter_table("assistant_tasks") as batch:
        batch.add_column(sa.Column("node_id", sa.String(length=64), nullable=True))
        batch.add_column(sa.Column("depends_on", hansa.store.types.Json, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("assistant_tasks") as batch:
        batch.drop_column("depends_on")
        batch.drop_column("node_id")
    with op.batch_alter_table("agent_session_steps") as batch:
        batch.drop_column("tools")
