"""Records as JSON and as CSV, and times as judges in Japan read them. CSV cells that a spreadsheet would run
as a formula (starting with = + - @, a tab or a carriage return) are written with a leading apostrophe."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import TYPE_CHECKING

from .models import LEVELS, Event, Player, Staff

if TYPE_CHECKING:
    from .records import PlayerRecord, RecordView

JST = timezone(timedelta(hours=9), "JST")
OUTCOME_LABELS = {"uphold": "維持", "change": "変更", "overturn": "取消"}
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def aware(dt: datetime | None) -> datetime | None:
    """SQLite gives back naive datetimes: they were written in UTC."""
    return dt.replace(tzinfo=UTC) if dt is not None and dt.tzinfo is None else dt


def iso(dt: datetime | None) -> str | None:
    return aware(dt).isoformat() if dt is not None else None


def jst(dt: datetime | None, fmt: str = "%Y-%m-%d %H:%M:%S") -> str:
    """A time as judges in Japan read it."""
    return aware(dt).astimezone(JST).strftime(fmt) if dt is not None else ""


def record_json(v: RecordView) -> dict:
    """One record as it stands now (a RecordView)."""
    p = v.penalty
    return {
        "id": p.id,
        "player": {"id": p.player_id, "number": p.player.number, "name": p.player.name},
        "seq": p.seq,
        "round": p.round,
        "infraction": p.infraction,
        "level": p.level,
        "penalty": p.level_label,
        "effective_penalty": v.level_label if v.counts else None,
        "state": v.state,
        "facts": p.facts,
        "notes": p.notes,
        "citations": p.citations,
        "corpus_version": p.corpus_version,
        "answers": p.answers,
        "judge": {"id": p.judge_id, "name": p.judge.name},
        "recorded_at": iso(p.created_at),
        "void": {"reason": v.void.reason, "by": v.void.by_id, "at": iso(v.void.created_at)}
        if v.void
        else None,
        "appeal": {
            "id": v.appeal.id,
            "grounds": v.appeal.grounds,
            "recorded_by": v.appeal.recorded_by_id,
            "at": iso(v.appeal.created_at),
        }
        if v.appeal
        else None,
        "decision": {
            "outcome": v.decision.outcome,
            "penalty": v.decision.new_level_label,
            "reason": v.decision.reason,
            "by": v.decision.by_id,
            "at": iso(v.decision.created_at),
        }
        if v.decision
        else None,
    }


def csv_cell(value: object) -> object:
    """A cell a spreadsheet shows as text: a leading = + - @ tab or CR gets an apostrophe
    (OWASP CSV injection)."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def event_json(ev: Event) -> dict:
    return {
        "id": ev.id,
        "name": ev.name,
        "game": ev.game,
        "date": ev.held_on.isoformat(),
        "level": ev.level,
        "level_label": LEVELS.get(ev.level, ev.level),
        "tier": ev.tier,
        "rounds": ev.rounds,
        "url": f"/events/{ev.id}",
    }


def staff_json(st: Staff) -> dict:
    return {
        "id": st.id,
        "name": st.name,
        "role": st.role,
        "role_label": st.role_label,
        "grants": st.grants or [],
        "active": st.active,
    }


def standing_summary(rec: PlayerRecord, last_step_only: bool = False) -> dict:
    """A PlayerRecord's standing as the API gives it (the engine's JSON and the upgrades on offer)."""
    from ..policy import standing_json

    out = standing_json(rec.standing, last_step_only)
    out["upgrades"] = rec.upgrades
    return out


def player_json(p: Player, rec: PlayerRecord | None = None) -> dict:
    out = {"id": p.id, "number": p.number, "name": p.name}
    if rec is not None:
        out["standing"] = standing_summary(rec)
        out["removed"] = rec.removed
        out["records"] = [record_json(v) for v in rec.records]
    return out
