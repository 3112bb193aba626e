"""Event records in SQLAlchemy 2.x: events, staff, players, penalty records, voids, appeals and decisions,
and the audit log.

Nothing is ever updated in place or deleted: a record is corrected by a new row (a void, an appeal decision),
and every change writes an audit entry. The only columns that change after insert are a staff member's role,
grants, passcode, active flag, session version and API token (each change audited), a player's record count
(the per-player counter that serialises recording) and the standing tally kept beside it (derived from the
records, never a record), the sign-in throttle and a join link's use. The live desk's notes (`LiveNote`) are
notifications, not records: they are deleted after a few minutes.
"""

from __future__ import annotations

from datetime import UTC, date, datetime

from sqlalchemy import (
    JSON,
    Boolean,
    CheckConstraint,
    Date,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    true,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship


def utcnow() -> datetime:
    return datetime.now(UTC)


class Base(DeclarativeBase):
    pass


ROLES = {
    "organizer": "主催者",
    "head_judge": "ヘッドジャッジ",
    "floor_judge": "フロアジャッジ",
    "scorekeeper": "スコアキーパー",
}
LEVELS = {"competitive": "競技", "casual": "一般"}


class Event(Base):
    __tablename__ = "events"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(120))
    game: Mapped[str] = mapped_column(String(40))
    held_on: Mapped[date] = mapped_column(Date)
    level: Mapped[str] = mapped_column(String(20))  # competitive | casual
    tier: Mapped[int | None] = mapped_column(Integer, nullable=True)  # where the game's policy has tiers
    rounds: Mapped[int] = mapped_column(Integer)
    # The round being played, set by the head judge or the scorekeeper: every record form starts from it.
    current_round: Mapped[int | None] = mapped_column(Integer, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    staff: Mapped[list[Staff]] = relationship(back_populates="event", order_by="Staff.id")
    __table_args__ = (CheckConstraint("level in ('competitive', 'casual')", name="event_level"),)


class Staff(Base):
    __tablename__ = "staff"

    id: Mapped[int] = mapped_column(primary_key=True)
    event_id: Mapped[int] = mapped_column(ForeignKey("events.id"), index=True)
    name: Mapped[str] = mapped_column(String(60))
    role: Mapped[str] = mapped_column(String(20))
    passcode_hash: Mapped[str] = mapped_column(String(255))
    token_hash: Mapped[str | None] = mapped_column(String(64), unique=True, nullable=True)
    grants: Mapped[list] = mapped_column(JSON, default=list)  # permissions the organizer granted
    active: Mapped[bool] = mapped_column(Boolean, default=True, server_default=true())
    failed_signins: Mapped[int] = mapped_column(Integer, default=0)  # unused since 0003 (see SigninThrottle)
    locked_until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)  # unused
    # Bumped by sign-out, disable, passcode reset and role change: every cookie carrying an older one ends.
    session_version: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    token_expires_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    event: Mapped[Event] = relationship(back_populates="staff")
    __table_args__ = (UniqueConstraint("event_id", "name", name="staff_name_unique"),)

    @property
    def role_label(self) -> str:
        return ROLES.get(self.role, self.role)


class Player(Base):
    __tablename__ = "players"

    id: Mapped[int] = mapped_column(primary_key=True)
    event_id: Mapped[int] = mapped_column(ForeignKey("events.id"), index=True)
    number: Mapped[str] = mapped_column(String(40))
    name: Mapped[str] = mapped_column(String(80))
    # How many records the player has: locked and bumped by each recording, it gives the next `seq`.
    penalty_count: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    # The standing engine's tally after the player's first `n` records under the policies of `v`
    # (records.TALLY): written by each recording with the count, cleared by a void or an appeal's decision;
    # a recording that finds none (or another `n` or `v`) reads the history instead. Never the record itself.
    standing_tally: Mapped[dict | None] = mapped_column(JSON, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    __table_args__ = (UniqueConstraint("event_id", "number", name="player_number_unique"),)


class Penalty(Base):
    """One penalty as the floor judge recorded it. Never changed: see Void and Appeal."""

    __tablename__ = "penalties"

    id: Mapped[int] = mapped_column(primary_key=True)
    event_id: Mapped[int] = mapped_column(ForeignKey("events.id"), index=True)
    player_id: Mapped[int] = mapped_column(ForeignKey("players.id"), index=True)
    seq: Mapped[int] = mapped_column(Integer)  # the player's n-th record: serialises concurrent recording
    round: Mapped[int] = mapped_column(Integer)
    infraction: Mapped[str | None] = mapped_column(String(120), nullable=True)  # "<game>/<infraction id>"
    level: Mapped[str] = mapped_column(String(60))  # a level or consequence id of the policy
    level_label: Mapped[str] = mapped_column(String(60))
    facts: Mapped[str] = mapped_column(Text)
    notes: Mapped[str] = mapped_column(Text, default="")
    citations: Mapped[list] = mapped_column(JSON, default=list)  # [{"section", "quote"}]
    corpus_version: Mapped[str] = mapped_column(String(80))
    answers: Mapped[dict] = mapped_column(JSON, default=dict)  # the wizard's answers {node: answer}
    # A head judge's ruling where the text prescribes nothing (level "head-judge-ruling"): a consequence the
    # policy knows (ゲームの敗北) or free text. Never counted as a level in the standing.
    ruling: Mapped[str | None] = mapped_column(String(300), nullable=True)
    judge_id: Mapped[int] = mapped_column(ForeignKey("staff.id"))
    # A key the form (or an API client's Idempotency-Key) sends once: a double tap or a retry on weak Wi-Fi
    # finds the record already made instead of making a second one.
    idempotency_key: Mapped[str | None] = mapped_column(String(80), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    judge: Mapped[Staff] = relationship(lazy="joined")
    player: Mapped[Player] = relationship(lazy="joined")
    __table_args__ = (
        UniqueConstraint("player_id", "seq", name="penalty_player_seq_unique"),
        Index("penalty_idempotency_unique", "judge_id", "idempotency_key", unique=True),
    )


class Void(Base):
    """A head judge's void of a record (a wrong player, a duplicate): the record stays, marked void."""

    __tablename__ = "voids"

    id: Mapped[int] = mapped_column(primary_key=True)
    penalty_id: Mapped[int] = mapped_column(ForeignKey("penalties.id"), unique=True)
    reason: Mapped[str] = mapped_column(Text)
    by_id: Mapped[int] = mapped_column(ForeignKey("staff.id"))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    by: Mapped[Staff] = relationship(lazy="joined")


class Appeal(Base):
    """A player's appeal of a floor judge's ruling; one per record (a second appeal is refused)."""

    __tablename__ = "appeals"

    id: Mapped[int] = mapped_column(primary_key=True)
    event_id: Mapped[int] = mapped_column(ForeignKey("events.id"), index=True)
    penalty_id: Mapped[int] = mapped_column(ForeignKey("penalties.id"), unique=True)
    grounds: Mapped[str] = mapped_column(Text)
    recorded_by_id: Mapped[int] = mapped_column(ForeignKey("staff.id"))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    penalty: Mapped[Penalty] = relationship(lazy="joined")
    recorded_by: Mapped[Staff] = relationship(lazy="joined")


class Decision(Base):
    """The head judge's decision on an appeal: final (one per appeal)."""

    __tablename__ = "decisions"

    id: Mapped[int] = mapped_column(primary_key=True)
    appeal_id: Mapped[int] = mapped_column(ForeignKey("appeals.id"), unique=True)
    outcome: Mapped[str] = mapped_column(String(20))  # uphold | change | overturn
    new_level: Mapped[str | None] = mapped_column(String(60), nullable=True)
    new_level_label: Mapped[str | None] = mapped_column(String(60), nullable=True)
    reason: Mapped[str] = mapped_column(Text)
    by_id: Mapped[int] = mapped_column(ForeignKey("staff.id"))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    by: Mapped[Staff] = relationship(lazy="joined")
    __table_args__ = (
        CheckConstraint("outcome in ('uphold', 'change', 'overturn')", name="decision_outcome"),
    )


class AuditEntry(Base):
    __tablename__ = "audit"

    id: Mapped[int] = mapped_column(primary_key=True)
    event_id: Mapped[int] = mapped_column(ForeignKey("events.id"), index=True)
    staff_id: Mapped[int | None] = mapped_column(ForeignKey("staff.id"), nullable=True)
    action: Mapped[str] = mapped_column(String(40))
    target: Mapped[str] = mapped_column(String(80))
    detail: Mapped[dict] = mapped_column(JSON, default=dict)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    staff: Mapped[Staff | None] = relationship(lazy="joined")


class SigninThrottle(Base):
    """Failed sign-ins per (event, name, client address), hashed: a wrong guess from one address slows only that
    address's tries for that name, and only up to a ceiling, so nobody can keep a judge locked out."""

    __tablename__ = "signin_throttle"

    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    failures: Mapped[int] = mapped_column(Integer, default=0)
    locked_until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class JoinLink(Base):
    """A one-time, expiring link the organizer shows as a QR code: whoever opens it first joins the event's
    staff with the role chosen here (stored hashed; used once)."""

    __tablename__ = "join_links"

    id: Mapped[int] = mapped_column(primary_key=True)
    event_id: Mapped[int] = mapped_column(ForeignKey("events.id"), index=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    role: Mapped[str] = mapped_column(String(20))
    created_by_id: Mapped[int] = mapped_column(ForeignKey("staff.id"))
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    used_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    used_by_id: Mapped[int | None] = mapped_column(ForeignKey("staff.id"), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Seat(Base):
    """Where a player sits in a round (卓番号 or seat), entered or imported; the record form finds a player
    by it. A seat can be corrected (audited); penalty records never depend on it."""

    __tablename__ = "seats"

    id: Mapped[int] = mapped_column(primary_key=True)
    event_id: Mapped[int] = mapped_column(ForeignKey("events.id"), index=True)
    player_id: Mapped[int] = mapped_column(ForeignKey("players.id"))
    round: Mapped[int] = mapped_column(Integer)
    table_no: Mapped[str] = mapped_column(String(20))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    __table_args__ = (
        UniqueConstraint("player_id", "round", name="seat_player_round_unique"),
        Index("seat_event_round_table", "event_id", "round", "table_no"),
    )


class Notice(Base):
    """A change of a player's removal status (removed, or back in the tournament) for the head judge's desk,
    written in the same transaction as the record, void or decision that caused it."""

    __tablename__ = "notices"

    id: Mapped[int] = mapped_column(primary_key=True)
    event_id: Mapped[int] = mapped_column(ForeignKey("events.id"), index=True)
    player_id: Mapped[int] = mapped_column(ForeignKey("players.id"))
    change: Mapped[str] = mapped_column(String(20))  # removed | restored
    cause: Mapped[str] = mapped_column(String(40))  # the audit action: penalty.record, penalty.void, ...
    penalty_id: Mapped[int | None] = mapped_column(ForeignKey("penalties.id"), nullable=True)
    by_id: Mapped[int] = mapped_column(ForeignKey("staff.id"))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    player: Mapped[Player] = relationship(lazy="joined")
    by: Mapped[Staff] = relationship(lazy="joined")
    __table_args__ = (CheckConstraint("change in ('removed', 'restored')", name="notice_change"),)


class NoticeAck(Base):
    """The head judge's acknowledgement of a notice (a row of its own: the notice is never changed)."""

    __tablename__ = "notice_acks"

    id: Mapped[int] = mapped_column(primary_key=True)
    notice_id: Mapped[int] = mapped_column(ForeignKey("notices.id"), unique=True)
    by_id: Mapped[int] = mapped_column(ForeignKey("staff.id"))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    by: Mapped[Staff] = relationship(lazy="joined")


class LiveNote(Base):
    """An announcement for the live desk on SQLite (judgeapp/events/live.py), written in the transaction of the
    change it announces, read by every server process's poller and deleted by a writer after a few minutes: a
    notification, not a record (PostgreSQL sends NOTIFY instead and leaves the table empty)."""

    __tablename__ = "live_notes"

    id: Mapped[int] = mapped_column(primary_key=True)
    origin: Mapped[str] = mapped_column(String(40))  # the process that wrote it (it dispatched it itself)
    payload: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    __table_args__ = {"sqlite_autoincrement": True}
