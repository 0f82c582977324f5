"""workspace entities: an indexed slug column

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-24 09:00:00.000000

``data["slug"]`` (a page's address) copied into a column of its own, with an index, so
that a page is found by its address without reading every page of the project. Existing
rows are back-filled from their data: a string of at most 300 characters, as
``store/workspace.py`` keeps it.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

_BACK_FILL = {
    "sqlite": """
        UPDATE workspace_entities SET slug = json_extract(data, '$.slug')
        WHERE json_type(data, '$.slug') = 'text'
          AND length(json_extract(data, '$.slug')) <= 300
    """,
    "postgresql": """
        UPDATE workspace_entities SET slug = data ->> 'slug'
        WHERE jsonb_typeof(data -> 'slug') = 'string' AND length(data ->> 'slug') <= 300
    """,
}


def upgrade() -> None:
    with op.batch_alter_table("workspace_entities", schema=None) as batch_op:
        batch_op.add_column(sa.Column("slug", sa.String(length=300), nullable=True))
        batch_op.create_index(
            "ix_entities_slug", ["tenant_id", "project_id", "kind", "slug"], unique=False
        )
    op.execute(sa.text(_BACK_FILL[op.get_bind().dialect.name]))


def downgrade() -> None:
    with op.batch_alter_table("workspace_entities", schema=None) as batch_op:
        batch_op.drop_index("ix_entities_slug")
        batch_op.drop_column("slug")
