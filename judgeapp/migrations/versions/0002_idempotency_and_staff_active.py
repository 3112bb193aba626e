"""penalties.idempotency_key (one record per key and judge); staff.active (staff are disabled, never deleted)

Revision ID: 0002
Revises: 0001

Plain ALTER TABLE ADD COLUMN and a unique index: no table is rebuilt, so the migration runs on a SQLite
database full of records (with foreign keys) as well as on PostgreSQL.
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("penalties", sa.Column("idempotency_key", sa.String(length=80), nullable=True))
    op.create_index("penalty_idempotency_unique", "penalties", ["judge_id", "idempotency_key"], unique=True)
    op.add_column("staff", sa.Column("active", sa.Boolean(), nullable=False, server_default=sa.true()))


def downgrade() -> None:
    with op.batch_alter_table("staff") as batch:
        batch.drop_column("active")
    op.drop_index("penalty_idempotency_unique", table_name="penalties")
    with op.batch_alter_table("penalties") as batch:
        batch.drop_column("idempotency_key")
