"""The head judge's desk and the floor: the current round, tables, finding a player in one field, notices of
removal-status changes (acknowledged, never deleted), a head judge's ruling where the text is silent, and the
desk's live data.

Built on the events modules (permissions, parsing, audit, records and its standing engine): nothing here
decides a standing on its own.
"""

from __future__ import annotations

import csv
import unicodedata
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from ..errors import JudgeappError
from ..policy import Infraction, Policies, Policy
from . import records
from .audit import audit
from .db import Database
from .live import announce
from .models import Event, Notice, NoticeAck, Player, Seat, Staff
from .parsing import clean_text, parse_id, parse_int
from .permissions import require
from .players import MAX_PLAYERS_IMPORT, find_players, get_player
from .staff import get_event

RULING_LABEL = records.HJ_RULING.label
MAX_TABLE = 20


# --- live announcements and notices ------------------------------------------------------------------------


@dataclass
class NoticeView:
    notice: Notice
    ack: NoticeAck | None

    @property
    def sentence(self) -> str:
        n = self.notice
        who = f"{n.player.number} {n.player.name}"
        cause = {
            "penalty.record": "記録",
            "ruling.record": "記録",
            "penalty.void": "記録の無効",
            "appeal.decide": "上告の裁定",
        }.get(n.cause, n.cause)
        what = (
            "以後の対戦に出られなくなりました"
            if n.change == "removed"  # each game's own word is on the player page
            else "以後の対戦に出られる状態に戻りました"
        )
        return f"{who}が{cause}（記録 #{n.penalty_id}）で{what}。"


def notices(db: Database, event_id: int, limit: int = 50) -> list[NoticeView]:
    """The newest notices first, each with its acknowledgement if any."""
    with db.reader() as s:
        rows = list(
            s.scalars(
                select(Notice).where(Notice.event_id == event_id).order_by(Notice.id.desc()).limit(limit)
            )
        )
        acks = (
            {
                a.notice_id: a
                for a in s.scalars(select(NoticeAck).where(NoticeAck.notice_id.in_([n.id for n in rows])))
            }
            if rows
            else {}
        )
        return [NoticeView(n, acks.get(n.id)) for n in rows]


def ack_notice(db: Database, actor: Staff, notice_id: object) -> NoticeAck:
    """The head judge (or the organizer) has seen the notice. Once; audited."""
    require(actor, "acknowledge")
    nid = parse_id(notice_id)

    def do(s: Session):
        n = s.get(Notice, nid)
        if n is None or n.event_id != actor.event_id:
            raise JudgeappError("その通知はありません。", 404, "unknown_notice")
        if s.scalar(select(NoticeAck.id).where(NoticeAck.notice_id == nid)):
            raise JudgeappError("この通知はすでに確認済みです。", 409, "already_acknowledged")
        a = NoticeAck(notice_id=nid, by_id=actor.id)
        s.add(a)
        s.flush()
        audit(s, actor.event_id, actor, "notice.ack", f"notice:{nid}", player=n.player_id)
        announce(s, actor.event_id, "ack", notice=nid)
        return a

    try:
        return db.write(do)
    except IntegrityError:
        raise JudgeappError("この通知はすでに確認済みです。", 409, "already_acknowledged") from None


# --- the round and the tables -------------------------------------------------------------------------------


def set_round(db: Database, actor: Staff, value: object) -> Event:
    """The head judge or the scorekeeper sets the round being played (shown on every page, used by forms)."""
    require(actor, "round")
    ev = get_event(db, actor.event_id)
    rnd = parse_int(value, "ラウンド", 1, ev.rounds)

    def do(s: Session):
        row = s.get(Event, ev.id, with_for_update=True)
        before = row.current_round
        row.current_round = rnd
        audit(s, ev.id, actor, "event.round", f"event:{ev.id}", before=before, after=rnd)
        announce(s, ev.id, "round", round=rnd)
        return row

    return db.write(do)


def parse_roster(text: str) -> list[tuple[str, str, str]]:
    """A player list as tournament software exports it: `number,name,table` (table optional), comma or tab
    separated, an optional header line (番号/number…). Rows are (number, name, table)."""
    if "\x00" in text:
        raise JudgeappError("選手リストとして読めません（文字以外のデータです）。", 400, "bad_list")
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if len(lines) > MAX_PLAYERS_IMPORT:
        raise JudgeappError(f"一度に登録できるのは {MAX_PLAYERS_IMPORT} 人までです。", 400, "too_many")
    rows = []
    for i, line in enumerate(lines, 1):
        line = unicodedata.normalize("NFKC", line).strip()
        if "," in line or "\t" in line:
            parts = next(csv.reader([line], delimiter="," if "," in line else "\t"))
        else:
            parts = line.split()  # "001 山田 太郎 12": the last word is the table only when it is a number
            if len(parts) >= 3 and parts[-1].isdigit():
                parts = [parts[0], " ".join(parts[1:-1]), parts[-1]]
            elif len(parts) >= 2:
                parts = [parts[0], " ".join(parts[1:])]
        parts = [p.strip() for p in parts]
        if i == 1 and parts and parts[0].lower() in ("番号", "選手番号", "number", "no", "no.", "id"):
            continue
        if len(parts) < 2 or not parts[0] or not parts[1]:
            raise JudgeappError(
                f"{i} 行目「{line[:40]}」: 「番号,名前,卓番号」の形で書いてください。", 400, "bad_list"
            )
        table = parts[2] if len(parts) > 2 else ""
        if len(table) > MAX_TABLE:
            raise JudgeappError(f"{i} 行目: 卓番号は {MAX_TABLE} 文字までです。", 400, "too_long")
        rows.append((parts[0], parts[1], table))
    if not rows:
        raise JudgeappError("選手がいません。1 行に「番号,名前,卓番号」で書いてください。", 400, "bad_list")
    return rows


def import_roster(db: Database, actor: Staff, rows: list[tuple[str, str, str]], rnd: object = None) -> dict:
    """New players are registered; every row with a table gets that table for the round (the current round
    unless given). A player already registered keeps their name (a different name is refused, not changed).
    All or nothing: one bad row and nothing is written."""
    require(actor, "players")
    ev = get_event(db, actor.event_id)
    rnd = parse_int(rnd if rnd not in (None, "") else (ev.current_round or 1), "ラウンド", 1, ev.rounds)
    clean, seen = [], set()
    for i, (number, name, table) in enumerate(rows, 1):
        try:
            num = clean_text(number, "選手番号", 40)
            nm = clean_text(name, "選手名", 80)
            tb = clean_text(table, "卓番号", MAX_TABLE, required=False)
        except JudgeappError as exc:
            raise JudgeappError(f"{i} 人目: {exc.message}", exc.status, exc.code) from None
        if num in seen:
            raise JudgeappError(f"{i} 人目: 選手番号 {num} が重複しています。", 409, "duplicate_player")
        seen.add(num)
        clean.append((num, nm, tb))

    def do(s: Session):
        existing = {
            p.number: p
            for p in s.scalars(
                select(Player).where(Player.event_id == ev.id, Player.number.in_([n for n, _, _ in clean]))
            )
        }
        added, seated = [], 0
        for num, nm, tb in clean:
            p = existing.get(num)
            if p is not None and p.name != nm:
                raise JudgeappError(
                    f"選手番号 {num} は「{p.name}」として登録済みです（リストでは「{nm}」）。"
                    "番号か名前を確かめてください。",
                    409,
                    "duplicate_player",
                )
            if p is None:
                p = Player(event_id=ev.id, number=num, name=nm)
                s.add(p)
                s.flush()
                added.append(p)
            if tb:
                seat = s.scalar(select(Seat).where(Seat.player_id == p.id, Seat.round == rnd))
                if seat is None:
                    s.add(Seat(event_id=ev.id, player_id=p.id, round=rnd, table_no=tb))
                else:
                    seat.table_no = tb
                seated += 1
        if added:
            audit(
                s,
                ev.id,
                actor,
                "player.add",
                f"players:{len(added)}",
                players=[{"id": p.id, "number": p.number, "name": p.name} for p in added],
            )
        if seated:
            audit(s, ev.id, actor, "seats.set", f"event:{ev.id}", round=rnd, count=seated)
            announce(s, ev.id, "seats", round=rnd)
        return {"added": len(added), "seated": seated, "round": rnd}

    try:
        return db.write(do)
    except IntegrityError:
        raise JudgeappError("選手番号が重複しています。", 409, "duplicate_player") from None


def set_table(db: Database, actor: Staff, player_id: object, rnd: object, table: object) -> None:
    """One player's table for a round, entered by hand."""
    require(actor, "players")
    ev = get_event(db, actor.event_id)
    p = get_player(db, ev.id, player_id)
    r = parse_int(rnd if rnd not in (None, "") else (ev.current_round or 1), "ラウンド", 1, ev.rounds)
    tb = clean_text(table, "卓番号", MAX_TABLE)
    import_roster(db, actor, [(p.number, p.name, tb)], r)


def tables(db: Database, event_id: int, rnd: int | None) -> dict[int, str]:
    """{player id: table} for a round."""
    if not rnd:
        return {}
    with db.reader() as s:
        return dict(
            s.execute(
                select(Seat.player_id, Seat.table_no).where(Seat.event_id == event_id, Seat.round == rnd)
            ).all()
        )


def find(
    db: Database, event_id: int, q: object, rnd: int | None, limit: int = 50
) -> list[tuple[Player, str]]:
    """One field for the floor: a table (this round), a player number, or part of a name. Table matches first,
    then the number, then names; each with the player's table this round (or "")."""
    text = unicodedata.normalize("NFKC", str(q or "")).strip()[:80]
    seats = tables(db, event_id, rnd)
    if not text:
        return [(p, seats.get(p.id, "")) for p in find_players(db, event_id, "", limit)]
    key = text.removeprefix("卓").removesuffix("卓").strip() or text
    at_table = [pid for pid, t in seats.items() if t == key]
    out: list[tuple[Player, str]] = []
    seen: set[int] = set()
    with db.reader() as s:
        if at_table:
            for p in s.scalars(select(Player).where(Player.id.in_(at_table)).order_by(Player.number)):
                out.append((p, seats.get(p.id, "")))
                seen.add(p.id)
    for p in find_players(db, event_id, text, limit):
        if p.id not in seen:
            out.append((p, seats.get(p.id, "")))
            seen.add(p.id)
    exact = [x for x in out if x[0].id in set(at_table) or x[0].number == text]
    return (exact or out)[:limit]


# --- a head judge's ruling where the text is silent -------------------------------------------------------


HJ_RULING = records.HJ_RULING


def ruling_choices(policies: Policies, policy: Policy) -> list[str]:
    """The consequences the policies know, as the head judge picks one: this game's first, then those other
    games' texts name (a Duel Masters event has none of its own, and can still give ゲームの敗北)."""
    out = [c.label for c in policy.consequences.values()]
    for other in policies.games.values():
        out += [c.label for c in other.consequences.values() if c.label not in out]
    return out


# --- the desk ----------------------------------------------------------------------------------------------


@dataclass
class Desk:
    appeals: list
    over: list
    latest: list
    notices: list[NoticeView]

    @property
    def open_notices(self) -> list[NoticeView]:
        return [n for n in self.notices if n.ack is None]


def desk(db: Database, policy: Policy, event_id: int, views: list | None = None, latest: int = 10) -> Desk:
    """What the head judge's desk shows: appeals waiting, notices, players over the line, latest records."""
    views = views if views is not None else records.event_records(db, event_id)
    return Desk(
        appeals=[v for v in views if v.state == "appealed"],
        over=records.players_over_the_line(db, policy, event_id, views),
        latest=list(reversed(views[-latest:])),
        notices=notices(db, event_id),
    )


def wizard_path(policy: Policy, answers: dict) -> list[tuple[str, str]]:
    """The wizard's answers as (question, answer) in the tree's words; unknown ids are shown as they are."""
    out = []
    for node_id, answer_id in (answers or {}).items():
        node = policy.nodes.get(node_id)
        if node is None:
            out.append((str(node_id), str(answer_id)))
            continue
        label = next((a.label for a in node.answers if a.id == answer_id), str(answer_id))
        out.append((node.question, label))
    return out


def wizard_facts(policy: Policy, infraction: Infraction | None, answers: dict) -> str:
    """The facts as the judge chose them in the wizard (the judge edits them before saving)."""
    lines = [f"{q} → {a}" for q, a in wizard_path(policy, answers)]
    if infraction is not None:
        lines.append(f"判定：{infraction.name}")
    return "\n".join(lines)
