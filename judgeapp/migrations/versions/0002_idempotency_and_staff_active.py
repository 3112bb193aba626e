"""penalties.idempotency_key (one record per key and judge); staff.active (staff are disabled, never deleted)

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("penalties") as batch:
        batch.add_column(sa.Column("idempotency_key", sa.String(length=80), nullable=True))
        batch.create_unique_constraint("penalty_idempotency_unique", ["judge_id", "idempotency_key"])
    with op.batch_alter_table("staff") as batch:
        batch.add_column(sa.Column("active", sa.Boolean(), nullable=False, server_default=sa.true()))


def downgrade() -> None:
    with op.batch_alter_table("staff") as batch:
        batch.drop_column("active")
    with op.batch_alter_table("penalties") as batch:
        batch.drop_constraint("penalty_idempotency_unique", type_="unique")
        batch.drop_column("idempotency_key")
