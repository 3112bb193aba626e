"""live_notes: the live desk's announcements on SQLite, so that every server process hears them (on
PostgreSQL the table stays empty: NOTIFY carries them)

Revision ID: 0006
Revises: 0005

A new table: nothing is rebuilt, so it runs on a SQLite database full of records as well as on PostgreSQL.
Its rows are notifications, not records: a writer deletes those older than a few minutes now and then. On
SQLite its ids never come back after a delete (AUTOINCREMENT), so a poller that reads `id > last` misses none.
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "live_notes",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("origin", sa.String(length=40), nullable=False),
        sa.Column("payload", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sqlite_autoincrement=True,
    )


def downgrade() -> None:
    op.drop_table("live_notes")
