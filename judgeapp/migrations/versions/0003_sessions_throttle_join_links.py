"""staff.session_version and token expiry (sessions that end); players.penalty_count (the per-player counter
recording locks); signin_throttle (per name and address); join_links (one-time QR sign-in)

Revision ID: 0003
Revises: 0002

Plain ADD COLUMN and new tables: nothing is rebuilt, so it runs on a SQLite database full of records as well
as on PostgreSQL. penalty_count starts as each player's highest seq.
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("staff", sa.Column("session_version", sa.Integer(), nullable=False, server_default="0"))
    op.add_column("staff", sa.Column("token_expires_at", sa.DateTime(timezone=True), nullable=True))
    op.add_column("players", sa.Column("penalty_count", sa.Integer(), nullable=False, server_default="0"))
    op.execute(
        "UPDATE players SET penalty_count = (SELECT COALESCE(MAX(seq), 0) FROM penalties "
        "WHERE penalties.player_id = players.id)"
    )
    # Tokens issued before expiry existed end now: their owners sign in again.
    op.execute("UPDATE staff SET token_hash = NULL")
    op.create_table(
        "signin_throttle",
        sa.Column("key", sa.String(length=64), primary_key=True),
        sa.Column("failures", sa.Integer(), nullable=False),
        sa.Column("locked_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "join_links",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("event_id", sa.Integer(), sa.ForeignKey("events.id"), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False, unique=True),
        sa.Column("role", sa.String(length=20), nullable=False),
        sa.Column("created_by_id", sa.Integer(), sa.ForeignKey("staff.id"), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("used_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("used_by_id", sa.Integer(), sa.ForeignKey("staff.id"), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_join_links_event_id", "join_links", ["event_id"])


def downgrade() -> None:
    op.drop_index("ix_join_links_event_id", table_name="join_links")
    op.drop_table("join_links")
    op.drop_table("signin_throttle")
    with op.batch_alter_table("players") as batch:
        batch.drop_column("penalty_count")
    with op.batch_alter_table("staff") as batch:
        batch.drop_column("token_expires_at")
        batch.drop_column("session_version")
