"""Exports for the organizer and the publisher: CSV (for a Japanese spreadsheet), JSON (everything about the
event, which reads back into a fresh database with the same standings), and the score-card marks the
printable pages show. Columns are documented in docs/exports.md.
"""

from __future__ import annotations

import csv
import io
import secrets
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from ..corpus import Corpus
from ..errors import JudgeappError
from ..policy import Policies, Policy, Standing, standing, standing_json
from .audit import audit
from .db import Database
from .desk import RULING_LABEL, tables
from .models import ROLES, Appeal, Decision, Event, Penalty, Player, Seat, Staff, Void
from .parsing import clean_text, parse_passcode
from .players import find_players
from .records import RecordView, event_records, player_record, resolve_level
from .serialize import csv_cell, event_json, iso, jst, record_json, staff_json
from .staff import hash_passcode, list_staff

FORMAT = "judgeapp-event/1"
OUTCOMES = {"uphold": "維持", "change": "変更", "overturn": "取消"}

CSV_COLUMNS = [
    "記録ID",
    "記録日時（日本時間）",
    "ラウンド",
    "選手番号",
    "選手名",
    "卓番号",
    "違反",
    "ペナルティ（記録時）",
    "規定にない判断",
    "状態",
    "現在のペナルティ",
    "記録後の累積",
    "記録後に対戦から外れる",
    "上告",
    "上告の結果",
    "裁定後のペナルティ",
    "裁定理由",
    "根拠（条項）",
    "根拠の文書と版",
    "記録したジャッジ",
    "事実",
    "メモ",
]


def fullwidth(mark: str) -> str:
    """A score-card mark as Lycee writes it (N → Ｎ, W → Ｗ); other marks stay as they are."""
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in mark)


def mark_of(policy: Policy, view: RecordView) -> str:
    """The mark a record puts on the score card (nothing for a record that does not count)."""
    if not view.counts:
        return ""
    item = policy.resolve(view.level)
    return fullwidth(getattr(item, "mark", None) or item.label) if item is not None else view.level_label


def standing_text(st: Standing) -> str:
    if st.removed:
        return st.removed_text or "以後の対戦に出られません"
    return "・".join(f"{k} {v}" for k, v in st.effective.items()) or "なし"


@dataclass
class Row:
    """One record with what it comes to: the standing after it (its records so far, as they stand now)."""

    view: RecordView
    after: object  # policy.Standing
    table: str


def rows(db: Database, policy: Policy, event: Event) -> list[Row]:
    views = event_records(db, event.id)
    seats: dict[int, dict[int, str]] = {}
    for r in range(1, event.rounds + 1):
        for pid, t in tables(db, event.id, r).items():
            seats.setdefault(pid, {})[r] = t
    by_player: dict[int, list[str]] = {}
    out = []
    for v in sorted(views, key=lambda v: (v.penalty.player_id, v.penalty.seq)):
        so_far = by_player.setdefault(v.penalty.player_id, [])
        if v.counts:
            so_far.append(v.level)
        table = seats.get(v.penalty.player_id, {}).get(v.penalty.round, "")
        out.append(Row(v, standing(policy, list(so_far)), table))
    return sorted(out, key=lambda r: r.view.penalty.id)


def citation(corpus: Corpus, p: Penalty) -> tuple[str, str]:
    """The record's one citation (its first): the section, and the document with its version."""
    if not p.citations:
        return "", ""
    sec = p.citations[0]["section"]
    s = corpus.sections.get(sec)
    if s is None:
        return sec, ""
    doc = corpus.documents.get(f"{s.game}/{s.doc}")
    return f"{sec} {s.title}", f"{doc.title}（{doc.meta.version}）" if doc else ""


def export_csv(db: Database, policy: Policy, corpus: Corpus, event: Event) -> bytes:
    """UTF-8 with BOM and CRLF (a Japanese spreadsheet opens it as it is), one header line."""
    buf = io.StringIO(newline="")
    w = csv.writer(buf, lineterminator="\r\n")
    w.writerow(CSV_COLUMNS)
    for r in rows(db, policy, event):
        v, p = r.view, r.view.penalty
        iid = (p.infraction or "").rpartition("/")[2]
        inf = policy.infractions.get(iid)
        sec, doc = citation(corpus, p)
        d = v.decision
        w.writerow(
            [
                csv_cell(x)
                for x in [
                    p.id,
                    jst(p.created_at),
                    p.round,
                    p.player.number,
                    p.player.name,
                    r.table,
                    inf.name if inf else (p.infraction or ""),
                    p.level_label,
                    p.ruling or "" if v.outside_text else "",
                    v.state_label,
                    v.level_label
                    if v.counts
                    else ("規定にない判断（累積に数えない）" if v.outside_text else ""),
                    standing_text(r.after),
                    "はい" if r.after.removed else "いいえ",
                    v.appeal.grounds if v.appeal else "",
                    OUTCOMES.get(d.outcome, "") if d else ("裁定待ち" if v.appeal else ""),
                    (d.new_level_label or "") if d else "",
                    d.reason if d else "",
                    sec,
                    doc,
                    p.judge.name,
                    p.facts,
                    p.notes,
                ]
            ]
        )
    return ("\ufeff" + buf.getvalue()).encode("utf-8")


# --- JSON ------------------------------------------------------------------------------------------------


def _record(v: RecordView) -> dict:
    out = record_json(v)
    out["ruling"] = v.penalty.ruling
    out["outside_text"] = v.outside_text
    if v.outside_text:
        out["effective_penalty"] = None
        out["ruling_label"] = RULING_LABEL
    if v.decision is not None:
        out["decision"]["level"] = v.decision.new_level
    return out


def export_json(db: Database, policy: Policy, event: Event) -> dict:
    """The event, its staff (names, roles, grants: no passcode or token), players with their tables, every
    record with its void, appeal and decision, the appeals, and each player's standing."""
    staff = list_staff(db, event.id)
    players = find_players(db, event.id, "", limit=100000)
    seats: dict[int, dict[str, str]] = {}
    with db.reader() as s:
        for seat in s.scalars(select(Seat).where(Seat.event_id == event.id)):
            seats.setdefault(seat.player_id, {})[str(seat.round)] = seat.table_no
    views = event_records(db, event.id)
    standings = []
    for p in players:
        rec = player_record(db, policy, p)
        standings.append({"player": p.id, "number": p.number, **standing_json(rec.standing)})
    return {
        "format": FORMAT,
        "event": {**event_json(event), "current_round": event.current_round},
        "staff": [staff_json(st) for st in staff],
        "players": [
            {"id": p.id, "number": p.number, "name": p.name, "tables": seats.get(p.id, {})} for p in players
        ],
        "records": [_record(v) for v in views],
        "appeals": [
            {
                "id": v.appeal.id,
                "record": v.penalty.id,
                "grounds": v.appeal.grounds,
                "recorded_by": v.appeal.recorded_by_id,
                "at": iso(v.appeal.created_at),
                "decision": _record(v)["decision"],
            }
            for v in views
            if v.appeal
        ],
        "standings": standings,
    }


def _when(value: object) -> datetime | None:
    try:
        return datetime.fromisoformat(str(value)) if value else None
    except ValueError:
        return None


def import_json(db: Database, policies: Policies, data: object, organizer_passcode: object) -> Event:
    """Read an export into this database as a new event (new ids; every record, void, appeal and decision as
    it was). Staff keep names, roles and grants; the first organizer signs in with the passcode given here,
    the others get passcodes from the organizer. All or nothing."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise JudgeappError(f"judgeapp の書き出し（{FORMAT}）ではありません。", 400, "bad_import")
    passcode = parse_passcode(organizer_passcode, "organizer")
    ev_in = data.get("event") or {}
    game = str(ev_in.get("game") or "")
    if game not in policies.games:
        raise JudgeappError("このゲームの規定がありません。", 400, "unknown_game")
    policy = policies.games[game]

    def do(s: Session) -> Event:
        try:
            ev = Event(
                name=clean_text(ev_in.get("name"), "大会名", 120),
                game=game,
                held_on=datetime.fromisoformat(str(ev_in["date"])).date(),
                level=str(ev_in["level"]),
                tier=ev_in.get("tier"),
                rounds=int(ev_in["rounds"]),
                current_round=ev_in.get("current_round"),
            )
            s.add(ev)
            s.flush()
            staff_ids, player_ids, record_ids = {}, {}, {}
            first_org = True
            for st in data.get("staff") or []:
                if st.get("role") not in ROLES:
                    raise ValueError(f"role {str(st.get('role'))[:20]}")
                code = passcode if st["role"] == "organizer" and first_org else secrets.token_urlsafe(24)
                first_org = first_org and st["role"] != "organizer"
                row = Staff(
                    event_id=ev.id,
                    name=str(st["name"]),
                    role=str(st["role"]),
                    passcode_hash=hash_passcode(code),
                    grants=list(st.get("grants") or []),
                    active=bool(st.get("active", True)),
                )
                s.add(row)
                s.flush()
                staff_ids[st["id"]] = row.id
            for pl in data.get("players") or []:
                row = Player(event_id=ev.id, number=str(pl["number"]), name=str(pl["name"]))
                s.add(row)
                s.flush()
                player_ids[pl["id"]] = row.id
                for rnd, table in (pl.get("tables") or {}).items():
                    s.add(Seat(event_id=ev.id, player_id=row.id, round=int(rnd), table_no=str(table)))
            for r in sorted(data.get("records") or [], key=lambda r: r["id"]):
                item = resolve_level(policy, r["level"])
                p = Penalty(
                    event_id=ev.id,
                    player_id=player_ids[r["player"]["id"]],
                    seq=int(r["seq"]),
                    round=int(r["round"]),
                    infraction=r.get("infraction"),
                    level=item.id,
                    level_label=str(r["penalty"]),
                    facts=str(r["facts"]),
                    notes=str(r.get("notes") or ""),
                    citations=list(r.get("citations") or []),
                    corpus_version=str(r["corpus_version"]),
                    answers=dict(r.get("answers") or {}),
                    judge_id=staff_ids[r["judge"]["id"]],
                    ruling=r.get("ruling"),
                    created_at=_when(r.get("recorded_at")),
                )
                s.add(p)
                s.flush()
                record_ids[r["id"]] = p.id
                if r.get("void"):
                    s.add(
                        Void(
                            penalty_id=p.id,
                            reason=str(r["void"]["reason"]),
                            by_id=staff_ids[r["void"]["by"]],
                            created_at=_when(r["void"].get("at")),
                        )
                    )
                if r.get("appeal"):
                    a = Appeal(
                        event_id=ev.id,
                        penalty_id=p.id,
                        grounds=str(r["appeal"]["grounds"]),
                        recorded_by_id=staff_ids[r["appeal"]["recorded_by"]],
                        created_at=_when(r["appeal"].get("at")),
                    )
                    s.add(a)
                    s.flush()
                    dec = r.get("decision")
                    if dec:
                        new = resolve_level(policy, dec["level"]) if dec.get("level") else None
                        s.add(
                            Decision(
                                appeal_id=a.id,
                                outcome=str(dec["outcome"]),
                                new_level=new.id if new else None,
                                new_level_label=dec.get("penalty"),
                                reason=str(dec["reason"]),
                                by_id=staff_ids[dec["by"]],
                                created_at=_when(dec.get("at")),
                            )
                        )
            # Each player's count is their last record's number, so that the next recording follows on (it
            # was left at 0, and the next record's number collided with the first imported one).
            last: dict[int, int] = {}
            for r in data.get("records") or []:
                pid = player_ids[r["player"]["id"]]
                last[pid] = max(last.get(pid, 0), int(r["seq"]))
            for pid, seq in last.items():
                s.get(Player, pid).penalty_count = seq
            s.flush()
        except JudgeappError:
            raise
        except (KeyError, TypeError, ValueError) as exc:
            raise JudgeappError(
                f"書き出しの形が正しくありません（{type(exc).__name__}: {str(exc)[:60]}）。",
                400,
                "bad_import",
            ) from None
        organizer = s.scalar(select(Staff).where(Staff.event_id == ev.id, Staff.role == "organizer"))
        audit(
            s,
            ev.id,
            organizer,
            "event.import",
            f"event:{ev.id}",
            source=ev_in.get("id"),
            records=len(record_ids),
            players=len(player_ids),
        )
        return ev

    try:
        return db.write(do)
    except IntegrityError:
        raise JudgeappError(
            "書き出しの中身が矛盾しています（重複した番号や名前）。何も登録していません。", 400, "bad_import"
        ) from None
