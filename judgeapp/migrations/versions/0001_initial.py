"""events, staff, players, penalties, voids, appeals, decisions, audit

Revision ID: 0001
Revises:
Create Date: 2026-11-30 01:33:56.174968
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "events",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=120), nullable=False),
        sa.Column("game", sa.String(length=40), nullable=False),
        sa.Column("held_on", sa.Date(), nullable=False),
        sa.Column("level", sa.String(length=20), nullable=False),
        sa.Column("tier", sa.Integer(), nullable=True),
        sa.Column("rounds", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("level in ('competitive', 'casual')", name="event_level"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_table(
        "players",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("event_id", sa.Integer(), nullable=False),
        sa.Column("number", sa.String(length=40), nullable=False),
        sa.Column("name", sa.String(length=80), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["event_id"],
            ["events.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("event_id", "number", name="player_number_unique"),
    )
    with op.batch_alter_table("players", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_players_event_id"), ["event_id"], unique=False)

    op.create_table(
        "staff",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("event_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=60), nullable=False),
        sa.Column("role", sa.String(length=20), nullable=False),
        sa.Column("passcode_hash", sa.String(length=255), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=True),
        sa.Column("grants", sa.JSON(), nullable=False),
        sa.Column("failed_signins", sa.Integer(), nullable=False),
        sa.Column("locked_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["event_id"],
            ["events.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("event_id", "name", name="staff_name_unique"),
        sa.UniqueConstraint("token_hash"),
    )
    with op.batch_alter_table("staff", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_staff_event_id"), ["event_id"], unique=False)

    op.create_table(
        "audit",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("event_id", sa.Integer(), nullable=False),
        sa.Column("staff_id", sa.Integer(), nullable=True),
        sa.Column("action", sa.String(length=40), nullable=False),
        sa.Column("target", sa.String(length=80), nullable=False),
        sa.Column("detail", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["event_id"],
            ["events.id"],
        ),
        sa.ForeignKeyConstraint(
            ["staff_id"],
            ["staff.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("audit", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_audit_event_id"), ["event_id"], unique=False)

    op.create_table(
        "penalties",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("event_id", sa.Integer(), nullable=False),
        sa.Column("player_id", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("round", sa.Integer(), nullable=False),
        sa.Column("infraction", sa.String(length=120), nullable=True),
        sa.Column("level", sa.String(length=60), nullable=False),
        sa.Column("level_label", sa.String(length=60), nullable=False),
        sa.Column("facts", sa.Text(), nullable=False),
        sa.Column("notes", sa.Text(), nullable=False),
        sa.Column("citations", sa.JSON(), nullable=False),
        sa.Column("corpus_version", sa.String(length=80), nullable=False),
        sa.Column("answers", sa.JSON(), nullable=False),
        sa.Column("judge_id", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["event_id"],
            ["events.id"],
        ),
        sa.ForeignKeyConstraint(
            ["judge_id"],
            ["staff.id"],
        ),
        sa.ForeignKeyConstraint(
            ["player_id"],
            ["players.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("player_id", "seq", name="penalty_player_seq_unique"),
    )
    with op.batch_alter_table("penalties", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_penalties_event_id"), ["event_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_penalties_player_id"), ["player_id"], unique=False)

    op.create_table(
        "appeals",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("event_id", sa.Integer(), nullable=False),
        sa.Column("penalty_id", sa.Integer(), nullable=False),
        sa.Column("grounds", sa.Text(), nullable=False),
        sa.Column("recorded_by_id", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["event_id"],
            ["events.id"],
        ),
        sa.ForeignKeyConstraint(
            ["penalty_id"],
            ["penalties.id"],
        ),
        sa.ForeignKeyConstraint(
            ["recorded_by_id"],
            ["staff.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("penalty_id"),
    )
    with op.batch_alter_table("appeals", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_appeals_event_id"), ["event_id"], unique=False)

    op.create_table(
        "voids",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("penalty_id", sa.Integer(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("by_id", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["by_id"],
            ["staff.id"],
        ),
        sa.ForeignKeyConstraint(
            ["penalty_id"],
            ["penalties.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("penalty_id"),
    )
    op.create_table(
        "decisions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("appeal_id", sa.Integer(), nullable=False),
        sa.Column("outcome", sa.String(length=20), nullable=False),
        sa.Column("new_level", sa.String(length=60), nullable=True),
        sa.Column("new_level_label", sa.String(length=60), nullable=True),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("by_id", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("outcome in ('uphold', 'change', 'overturn')", name="decision_outcome"),
        sa.ForeignKeyConstraint(
            ["appeal_id"],
            ["appeals.id"],
        ),
        sa.ForeignKeyConstraint(
            ["by_id"],
            ["staff.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("appeal_id"),
    )


def downgrade() -> None:
    op.drop_table("decisions")
    op.drop_table("voids")
    with op.batch_alter_table("appeals", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_appeals_event_id"))

    op.drop_table("appeals")
    with op.batch_alter_table("penalties", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_penalties_player_id"))
        batch_op.drop_index(batch_op.f("ix_penalties_event_id"))

    op.drop_table("penalties")
    with op.batch_alter_table("audit", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_audit_event_id"))

    op.drop_table("audit")
    with op.batch_alter_table("staff", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_staff_event_id"))

    op.drop_table("staff")
    with op.batch_alter_table("players", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_players_event_id"))

    op.drop_table("players")
    op.drop_table("events")
