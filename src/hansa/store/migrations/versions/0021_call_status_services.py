"""llm_calls: status (ok, cancelled, failed) and estimated (tokens counted at characters / 4:
a call cut before its provider said), so a cut call's spend is recorded; services: a
tenant's named outbound services (base URL, sealed headers, the methods graphs and rules
may call unattended), which service.call names

Revision ID: 0021
Revises: 0020
Create Date: 2026-11-27 17:45:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import hansa.store.types

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("llm_calls") as batch:
        batch.add_column(sa.Column("status", sa.String(16), nullable=False, server_default="ok"))
        batch.add_column(
            sa.Column("estimated", sa.Boolean, nullable=False, server_default=sa.false())
        )
    op.execute("UPDATE llm_calls SET status = 'failed' WHERE NOT success")
    op.create_table(
        "services",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("tenant_id", sa.String(length=36), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("base_url", sa.Text(), nullable=False),
        sa.Column("headers", hansa.store.types.Json, nullable=False),
        sa.Column("unattended_methods", hansa.store.types.Json, nullable=False),
        sa.Column("created_at", hansa.store.types.UtcDateTime(), nullable=False),
        sa.Column("updated_at", hansa.store.types.UtcDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["tenant_id"], ["tenants.id"], name=op.f("fk_services_tenant_id_tenants")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_services")),
        sa.UniqueConstraint("tenant_id", "name", name=op.f("uq_services_tenant_id_name")),
    )


def downgrade() -> None:
    op.drop_table("services")
    with op.batch_alter_table("llm_calls") as batch:
        batch.drop_column("estimated")
        batch.drop_column("status")
