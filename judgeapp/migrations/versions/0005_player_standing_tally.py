"""players.standing_tally: the standing engine's tally kept with the record count, so that recording adds one
penalty to it instead of reading the player's whole history (NULL: read the history, as before)

Revision ID: 0005
Revises: 0004

A plain ALTER TABLE ADD COLUMN (nullable, no default): nothing is rebuilt, so it runs on a SQLite database full
of records as well as on PostgreSQL; every existing player starts without a tally, and their next recording
reads their history once and keeps the tally.
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("players", sa.Column("standing_tally", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("players") as batch:
        batch.drop_column("standing_tally")
