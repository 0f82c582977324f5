"""assistant_conversations: user, who the conversation is with (``{id, displayName?, email?,
…}`` plus the caller's own attributes, JSON; null: nobody named), the ``user.*`` facts of
rules, graph templates and context packs

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-27 17:30:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import hansa.store.types

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("assistant_conversations") as batch:
        batch.add_column(sa.Column("user", hansa.store.types.JsonOrNull, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("assistant_conversations") as batch:
        batch.drop_column("user")
