"""An event's players: one at a time or a pasted list / CSV (all or nothing), search by number or name."""

from __future__ import annotations

import csv
import unicodedata

from sqlalchemy import or_, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from ..errors import JudgeappError
from .audit import audit
from .db import Database
from .models import Player, Staff
from .parsing import clean_text, parse_id, refuse_bad_chars
from .permissions import require

MAX_PLAYERS_IMPORT = 2000


def add_player(db: Database, actor: Staff, number: object, name: object) -> Player:
    require(actor, "players")
    return import_players(db, actor, [(number, name)])[0]


def parse_player_list(text: str) -> list[tuple[str, str]]:
    """Pasted lines or CSV: `番号,名前` (or tab / spaces between); a header line is skipped."""
    if "\x00" in text:
        raise JudgeappError("選手リストとして読めません（文字以外のデータです）。", 400, "bad_list")
    rows = []
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if len(lines) > MAX_PLAYERS_IMPORT:
        raise JudgeappError(f"一度に登録できるのは {MAX_PLAYERS_IMPORT} 人までです。", 400, "too_many")
    for i, line in enumerate(lines, 1):
        line = unicodedata.normalize("NFKC", line).strip()
        if "," in line or "\t" in line:
            parts = next(csv.reader([line], delimiter="\t" if "\t" in line and "," not in line else ","))
        else:
            parts = line.split(None, 1)
        parts = [p.strip() for p in parts if p.strip()]
        if i == 1 and parts and parts[0] in ("番号", "選手番号", "number", "No", "No."):
            continue
        if len(parts) < 2:
            raise JudgeappError(
                f"{i} 行目「{line[:40]}」: 「番号,名前」の形で書いてください。", 400, "bad_list"
            )
        rows.append((parts[0], parts[1]))
    if not rows:
        raise JudgeappError("選手がいません。1 行に「番号,名前」で書いてください。", 400, "bad_list")
    return rows


def import_players(db: Database, actor: Staff, rows: list[tuple[object, object]]) -> list[Player]:
    """All or nothing: one bad row and nothing is written."""
    require(actor, "players")
    if len(rows) > MAX_PLAYERS_IMPORT:
        raise JudgeappError(f"一度に登録できるのは {MAX_PLAYERS_IMPORT} 人までです。", 400, "too_many")
    clean = []
    seen: set[str] = set()
    for i, (number, name) in enumerate(rows, 1):
        where = f"{i} 人目: " if len(rows) > 1 else ""
        try:
            num = clean_text(number, "選手番号", 40)
            nm = clean_text(name, "選手名", 80)
        except JudgeappError as exc:
            raise JudgeappError(where + exc.message, exc.status, exc.code) from None
        if num in seen:
            raise JudgeappError(f"{where}選手番号 {num} が重複しています。", 409, "duplicate_player")
        seen.add(num)
        clean.append((num, nm))

    def do(s: Session):
        taken = set(
            s.scalars(
                select(Player.number).where(
                    Player.event_id == actor.event_id, Player.number.in_([n for n, _ in clean])
                )
            )
        )
        if taken:
            raise JudgeappError(
                f"選手番号 {'、'.join(sorted(taken)[:5])} はすでに登録されています。", 409, "duplicate_player"
            )
        players = [Player(event_id=actor.event_id, number=n, name=nm) for n, nm in clean]
        s.add_all(players)
        s.flush()
        audit(
            s,
            actor.event_id,
            actor,
            "player.add",
            f"players:{len(players)}",
            players=[{"id": p.id, "number": p.number, "name": p.name} for p in players],
        )
        return players

    try:
        return db.write(do)
    except IntegrityError:
        raise JudgeappError("選手番号が重複しています。", 409, "duplicate_player") from None


def find_players(db: Database, event_id: int, q: object = "", limit: int = 200) -> list[Player]:
    """Players whose number is (or starts with) `q`, or whose name holds it; control
    characters are refused."""
    if not isinstance(q, str):
        q = ""
    q = unicodedata.normalize("NFKC", q).strip()[:80]
    refuse_bad_chars(q, "検索語")
    with db.reader() as s:
        stmt = select(Player).where(Player.event_id == event_id)
        if q:
            like = q.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            stmt = stmt.where(
                or_(
                    Player.number == q,
                    Player.number.like(f"{like}%", escape="\\"),
                    Player.name.like(f"%{like}%", escape="\\"),
                )
            )
        return list(s.scalars(stmt.order_by(Player.number).limit(limit)))


def get_player(db: Database, event_id: int, player_id: object) -> Player:
    with db.reader() as s:
        p = s.get(Player, parse_id(player_id))
    if p is None or p.event_id != event_id:
        raise JudgeappError("その選手はこの大会に登録されていません。", 404, "unknown_player")
    return p
