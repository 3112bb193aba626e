"""events.current_round; seats (a player's table per round); notices of removal-status changes and their
acknowledgements; penalties.ruling (a head judge's ruling where the text is silent)

Revision ID: 0004
Revises: 0003

Plain ALTER TABLE ADD COLUMN and new tables: nothing is rebuilt, so it runs on a SQLite database full of
records as well as on PostgreSQL.
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("events", sa.Column("current_round", sa.Integer(), nullable=True))
    op.add_column("penalties", sa.Column("ruling", sa.String(length=300), nullable=True))
    op.create_table(
        "seats",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("event_id", sa.Integer(), sa.ForeignKey("events.id"), nullable=False),
        sa.Column("player_id", sa.Integer(), sa.ForeignKey("players.id"), nullable=False),
        sa.Column("round", sa.Integer(), nullable=False),
        sa.Column("table_no", sa.String(length=20), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("player_id", "round", name="seat_player_round_unique"),
    )
    op.create_index("ix_seats_event_id", "seats", ["event_id"])
    op.create_index("seat_event_round_table", "seats", ["event_id", "round", "table_no"])
    op.create_table(
        "notices",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("event_id", sa.Integer(), sa.ForeignKey("events.id"), nullable=False),
        sa.Column("player_id", sa.Integer(), sa.ForeignKey("players.id"), nullable=False),
        sa.Column("change", sa.String(length=20), nullable=False),
        sa.Column("cause", sa.String(length=40), nullable=False),
        sa.Column("penalty_id", sa.Integer(), sa.ForeignKey("penalties.id"), nullable=True),
        sa.Column("by_id", sa.Integer(), sa.ForeignKey("staff.id"), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("change in ('removed', 'restored')", name="notice_change"),
    )
    op.create_index("ix_notices_event_id", "notices", ["event_id"])
    op.create_table(
        "notice_acks",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("notice_id", sa.Integer(), sa.ForeignKey("notices.id"), nullable=False, unique=True),
        sa.Column("by_id", sa.Integer(), sa.ForeignKey("staff.id"), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("notice_acks")
    op.drop_index("ix_notices_event_id", table_name="notices")
    op.drop_table("notices")
    op.drop_index("seat_event_round_table", table_name="seats")
    op.drop_index("ix_seats_event_id", table_name="seats")
    op.drop_table("seats")
    with op.batch_alter_table("penalties") as batch:
        batch.drop_column("ruling")
    with op.batch_alter_table("events") as batch:
        batch.drop_column("current_round")
