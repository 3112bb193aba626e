"""What staff can do with an event's records. Pages and the JSON API both call these functions, so the
permissions, the validation (a Japanese message, nothing written) and the audit are in one place.

Records are never changed or deleted: a void, an appeal and its decision are new rows, and a player's
standing is computed from the rows by the policy's standing engine (judgeapp.policy.standing).
"""

from __future__ import annotations

import csv
import hashlib
import io
import secrets
import unicodedata
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone

from sqlalchemy import func, or_, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session
from werkzeug.security import check_password_hash, generate_password_hash

from ..errors import JudgeappError
from ..policy import Policies, Policy, Standing, standing
from .db import Database
from .models import LEVELS, ROLES, Appeal, AuditEntry, Decision, Event, Penalty, Player, Staff, Void, utcnow

ALL = set(ROLES)
PERMISSIONS = {
    "read": ALL,
    "players": ALL,
    "record": {"organizer", "head_judge", "floor_judge"},
    "appeal": {"organizer", "head_judge", "floor_judge"},
    "decide": {"head_judge"},
    "void": {"head_judge"},
    "staff": {"organizer"},
    "export": {"organizer", "head_judge", "scorekeeper"},
}
REFUSALS = {
    "read": "この大会の記録を見るにはサインインが必要です。",
    "players": "選手を登録する権限がありません。",
    "record": "ペナルティを記録できるのは主催者とジャッジです。",
    "appeal": "上告を記録できるのは主催者とジャッジです。",
    "decide": "上告を裁定できるのはヘッドジャッジだけです。",
    "void": "記録を無効にできるのはヘッドジャッジだけです。",
    "staff": "スタッフを管理できるのは主催者だけです。",
    "export": "記録を書き出せるのは主催者・ヘッドジャッジ・スコアキーパーです。",
}
MIN_PASSCODE = 6
LOCK_AFTER = 3  # failed sign-ins before each further try waits
MAX_PLAYERS_IMPORT = 2000


MAX_ID = 2**31 - 1


def _id(value: object) -> int:
    """A row id from a URL or a body: 1 … 2³¹−1, else -1 (which no row has)."""
    try:
        n = int(str(value).strip())
    except (TypeError, ValueError):
        return -1
    return n if 1 <= n <= MAX_ID else -1


def _clean(text: object, what: str, max_len: int, required: bool = True) -> str:
    if text is not None and not isinstance(text, (str, int)) or isinstance(text, bool):
        raise JudgeappError(f"{what}は文字で入力してください。", 400, "bad_type")
    s = unicodedata.normalize("NFKC", str(text if text is not None else "")).strip()
    s = s.encode("utf-8", "replace").decode("utf-8")
    s = "".join(ch for ch in s if ch in "\n\t" or unicodedata.category(ch)[0] != "C")
    if required and not s:
        raise JudgeappError(f"{what}を入力してください。", 400, "missing_field")
    if len(s) > max_len:
        raise JudgeappError(f"{what}は {max_len} 文字までです。", 400, "too_long")
    return s


def _int(value: object, what: str, lo: int, hi: int) -> int:
    try:
        n = int(str(value).strip())
    except (TypeError, ValueError):
        raise JudgeappError(f"{what}は {lo} から {hi} の数字で入力してください。", 400, "bad_number") from None
    if not lo <= n <= hi:
        raise JudgeappError(f"{what}は {lo} から {hi} の数字で入力してください。", 400, "bad_number")
    return n


def require(staff: Staff | None, permission: str, event_id: int | None = None) -> Staff:
    if staff is None:
        raise JudgeappError(REFUSALS["read"], 401, "signin_required")
    if event_id is not None and staff.event_id != event_id:
        raise JudgeappError("この大会のスタッフとしてサインインしていません。", 403, "other_event")
    if staff.role not in PERMISSIONS[permission]:
        raise JudgeappError(REFUSALS[permission], 403, "forbidden")
    return staff


def audit(s: Session, event_id: int, staff: Staff | None, action: str, target: str, **detail) -> None:
    s.add(AuditEntry(event_id=event_id, staff_id=staff.id if staff else None, action=action, target=target,
                     detail=detail))


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


# --- events and staff -----------------------------------------------------------------------------------


def create_event(db: Database, policies: Policies, form: dict) -> tuple[Event, Staff, str]:
    """A new event with its organizer (who signs in with the passcode given here). Returns an API token."""
    name = _clean(form.get("name"), "大会名", 120)
    game = str(form.get("game") or "")
    if game not in policies.games:
        raise JudgeappError("ゲームを選んでください。", 400, "unknown_game")
    try:
        held_on = date.fromisoformat(str(form.get("date") or "").strip())
    except ValueError:
        raise JudgeappError("開催日は 2026-12-01 の形で入力してください。", 400, "bad_date") from None
    level = str(form.get("level") or "")
    if level not in LEVELS:
        raise JudgeappError("競技か一般かを選んでください。", 400, "bad_level")
    tier_raw = str(form.get("tier") or "").strip()
    tier = _int(tier_raw, "トーナメント階層レベル", 1, 5) if tier_raw else None
    _check_tier(policies, game, level, tier)
    rounds = _int(form.get("rounds", ""), "ラウンド数", 1, 30)
    organizer = _clean(form.get("organizer"), "主催者の名前", 60)
    passcode = _passcode(form.get("passcode"))
    token = secrets.token_urlsafe(32)

    def do(s: Session):
        ev = Event(name=name, game=game, held_on=held_on, level=level, tier=tier, rounds=rounds)
        s.add(ev)
        s.flush()
        org = Staff(event_id=ev.id, name=organizer, role="organizer", passcode_hash=generate_password_hash(passcode),
                    token_hash=_token_hash(token), grants=[])
        s.add(org)
        s.flush()
        audit(s, ev.id, org, "event.create", f"event:{ev.id}", name=name, game=game, level=level, tier=tier,
              rounds=rounds)
        return ev, org

    ev, org = db.write(do)
    return ev, org, token


def _check_tier(policies: Policies, game: str, level: str, tier: int | None) -> None:
    """The 階層レベル belongs to the TCG 大会規定 only, where 1c-ii ties it to 競技/一般 (1 → 一般, 2+ → 競技)."""
    if tier is None:
        return
    if not policies.games[game].file.competitive_question:
        raise JudgeappError("トーナメント階層レベルは TCG 大会規定の大会でだけ使います。空のままにしてください。", 400,
                            "bad_tier")
    if (tier == 1) != (level == "casual"):
        raise JudgeappError("大会規定 1c-ii では、階層レベル 1 は一般、2 以上は競技です。レベルか階層を直してください。",
                            400, "bad_tier")


def update_event(db: Database, policies: Policies, actor: Staff, form: dict) -> Event:
    """The organizer corrects the event (name, date, level, tier, rounds: a top cut adds rounds). Audited."""
    require(actor, "staff")
    ev = get_event(db, actor.event_id)
    name = _clean(form.get("name", ev.name), "大会名", 120)
    try:
        held_on = date.fromisoformat(str(form.get("date") or ev.held_on.isoformat()).strip())
    except ValueError:
        raise JudgeappError("開催日は 2026-12-01 の形で入力してください。", 400, "bad_date") from None
    level = str(form.get("level") or ev.level)
    if level not in LEVELS:
        raise JudgeappError("競技か一般かを選んでください。", 400, "bad_level")
    tier_raw = str(form.get("tier") if form.get("tier") is not None else (ev.tier or "")).strip()
    tier = _int(tier_raw, "トーナメント階層レベル", 1, 5) if tier_raw else None
    _check_tier(policies, ev.game, level, tier)
    rounds = _int(form.get("rounds", ev.rounds), "ラウンド数", 1, 30)

    def do(s: Session):
        row = s.get(Event, ev.id)
        played = s.scalar(select(func.max(Penalty.round)).where(Penalty.event_id == ev.id)) or 0
        if rounds < played:
            raise JudgeappError(f"第 {played} ラウンドの記録があるので、ラウンド数は {played} 以上にしてください。",
                                409, "rounds_in_use")
        before = event_json(row)
        row.name, row.held_on, row.level, row.tier, row.rounds = name, held_on, level, tier, rounds
        audit(s, ev.id, actor, "event.update", f"event:{ev.id}", before=before, after=event_json(row))
        return row

    return db.write(do)


def _passcode(value: object) -> str:
    p = str(value or "")
    if len(p) < MIN_PASSCODE or len(p) > 200:
        raise JudgeappError(f"パスコードは {MIN_PASSCODE} 文字以上にしてください。", 400, "weak_passcode")
    return p


def add_staff(db: Database, actor: Staff, form: dict, allowed_grants: set[str] = frozenset()) -> Staff:
    require(actor, "staff")
    name = _clean(form.get("name"), "スタッフの名前", 60)
    role = str(form.get("role") or "")
    if role not in ROLES:
        raise JudgeappError("役割を選んでください（主催者・ヘッドジャッジ・フロアジャッジ・スコアキーパー）。", 400, "bad_role")
    passcode = _passcode(form.get("passcode"))
    grants = _grants(form.get("grants"), allowed_grants)

    def do(s: Session):
        if s.scalar(select(Staff.id).where(Staff.event_id == actor.event_id, Staff.name == name)):
            raise JudgeappError(f"「{name}」はすでに登録されています。", 409, "duplicate_staff")
        st = Staff(event_id=actor.event_id, name=name, role=role, passcode_hash=generate_password_hash(passcode),
                   grants=grants)
        s.add(st)
        s.flush()
        audit(s, actor.event_id, actor, "staff.add", f"staff:{st.id}", name=name, role=role, grants=grants)
        return st

    return db.write(do)


def _grants(value: object, allowed: set[str]) -> list[str]:
    """Only what the game's policy restricts can be granted (イジンデン: ijinden-defeat)."""
    if value in (None, ""):
        return []
    items = value if isinstance(value, list) else [value]
    out = sorted({str(x) for x in items if str(x)})
    unknown = [g for g in out if g not in allowed]
    if unknown:
        names = "、".join(sorted(allowed)) or "（このゲームにはありません）"
        raise JudgeappError(f"「{unknown[0][:40]}」は与えられる権限ではありません。使えるのは {names} です。", 400,
                            "bad_grant")
    return out


def grants_of(policies: Policies, event: Event) -> set[str]:
    """What the organizer can grant: what the game's policy restricts, and (every game) a head judge's
    ruling where the text is silent."""
    from .desk import RULING_GRANT

    return {lv.grant for lv in policies.games[event.game].levels.values() if lv.grant} | {RULING_GRANT}


def set_grants(db: Database, actor: Staff, staff_id: int, grants: object, allowed_grants: set[str] = frozenset()) -> Staff:
    """The organizer grants (or withdraws) what a policy restricts, e.g. イジンデン 【敗北】."""
    require(actor, "staff")
    new = _grants(grants, allowed_grants)

    def do(s: Session):
        st = s.get(Staff, _id(staff_id))
        if st is None or st.event_id != actor.event_id:
            raise JudgeappError("そのスタッフはいません。", 404, "unknown_staff")
        old = list(st.grants or [])
        st.grants = new
        audit(s, actor.event_id, actor, "staff.grants", f"staff:{st.id}", before=old, after=new)
        return st

    return db.write(do)


def set_staff(db: Database, actor: Staff, staff_id: object, form: dict) -> Staff:
    """The organizer resets a passcode or disables (re-enables) a staff member; nobody is deleted."""
    require(actor, "staff")
    passcode = _passcode(form["passcode"]) if form.get("passcode") else None
    active = form.get("active")

    def do(s: Session):
        st = s.get(Staff, _id(staff_id))
        if st is None or st.event_id != actor.event_id:
            raise JudgeappError("そのスタッフはいません。", 404, "unknown_staff")
        changes = {}
        if passcode is not None:
            st.passcode_hash = generate_password_hash(passcode)
            st.failed_signins, st.locked_until = 0, None
            changes["passcode"] = "reset"
        if active is not None:
            on = str(active).lower() in ("1", "true", "on", "yes")
            if st.id == actor.id and not on:
                raise JudgeappError("自分自身は無効にできません。", 409, "self_disable")
            st.active = on
            if not on:
                st.token_hash = None
            changes["active"] = on
        audit(s, actor.event_id, actor, "staff.update", f"staff:{st.id}", **changes)
        return st

    return db.write(do)


def issue_token(db: Database, actor: Staff, staff_id: int) -> str:
    """A new API token for the staff member themself (the old one stops working). Shown once; stored hashed.
    Nobody can mint another member's token: what a token does is audited under its owner's name."""
    if actor.id != _id(staff_id):
        raise JudgeappError("API トークンは本人だけが発行できます。", 403, "forbidden")
    token = secrets.token_urlsafe(32)

    def do(s: Session):
        st = s.get(Staff, actor.id)
        st.token_hash = _token_hash(token)
        audit(s, actor.event_id, actor, "staff.token", f"staff:{st.id}")

    db.write(do)
    return token


def token_by_passcode(db: Database, event_id: int, name: object, passcode: object) -> tuple[Staff, str]:
    """Sign in through the API: a staff member's name and passcode give them a new token."""
    staff = sign_in(db, event_id, name, passcode)
    return staff, issue_token(db, staff, staff.id)


def staff_by_token(db: Database, token: str) -> Staff | None:
    if not token or len(token) > 200:
        return None
    with db.reader() as s:
        return s.scalar(select(Staff).where(Staff.token_hash == _token_hash(token), Staff.active.is_(True)))


def sign_in(db: Database, event_id: int, name: object, passcode: object) -> Staff:
    """Check a staff member's passcode. After three failures each further try waits (5 s, 10 s, … 5 min).

    The lock, the check and the count happen in one write transaction (the staff row locked), so parallel
    guesses queue behind each other instead of all being checked against the same snapshot."""
    name = _clean(name, "名前", 60)
    passcode = str(passcode or "")[:200] if isinstance(passcode, (str, int)) else ""

    def do(s: Session):
        now = utcnow()
        row = s.scalar(select(Staff).where(Staff.event_id == event_id, Staff.name == name, Staff.active.is_(True))
                       .with_for_update())
        if row is None:
            return None, "unknown", 0
        locked = _aware(row.locked_until)
        if locked and locked > now:
            return row, "locked", int((locked - now).total_seconds()) + 1
        if check_password_hash(row.passcode_hash, passcode):
            row.failed_signins = 0
            row.locked_until = None
            audit(s, event_id, row, "signin", f"staff:{row.id}")
            return row, "ok", 0
        row.failed_signins = (row.failed_signins or 0) + 1
        if row.failed_signins >= LOCK_AFTER:
            row.locked_until = now + timedelta(seconds=min(5 * 2 ** (row.failed_signins - LOCK_AFTER), 300))
        audit(s, event_id, None, "signin.failed", f"staff:{row.id}", failures=row.failed_signins)
        return row, "bad", 0

    row, outcome, wait = db.write(do)
    if outcome == "locked":
        raise JudgeappError(f"失敗が続いたため、{wait} 秒待ってからもう一度試してください。", 429, "signin_throttled")
    if outcome != "ok":
        raise JudgeappError("名前かパスコードが違います。", 401, "bad_signin")
    return row


def _aware(dt: datetime | None) -> datetime | None:
    """SQLite gives back naive datetimes: they were written in UTC."""
    return dt.replace(tzinfo=timezone.utc) if dt is not None and dt.tzinfo is None else dt


def iso(dt: datetime | None) -> str | None:
    return _aware(dt).isoformat() if dt is not None else None


def get_event(db: Database, event_id: object) -> Event:
    with db.reader() as s:
        ev = s.get(Event, _id(event_id))
    if ev is None:
        raise JudgeappError("その大会はありません。", 404, "unknown_event")
    return ev


def list_events(db: Database) -> list[Event]:
    with db.reader() as s:
        return list(s.scalars(select(Event).order_by(Event.held_on.desc(), Event.id.desc())))


def list_staff(db: Database, event_id: int, active_only: bool = False) -> list[Staff]:
    with db.reader() as s:
        stmt = select(Staff).where(Staff.event_id == event_id)
        if active_only:
            stmt = stmt.where(Staff.active.is_(True))
        return list(s.scalars(stmt.order_by(Staff.id)))


# --- players --------------------------------------------------------------------------------------------


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
            raise JudgeappError(f"{i} 行目「{line[:40]}」: 「番号,名前」の形で書いてください。", 400, "bad_list")
        rows.append((parts[0], parts[1]))
    if not rows:
        raise JudgeappError("選手がいません。1 行に「番号,名前」で書いてください。", 400, "bad_list")
    return rows


def import_players(db: Database, actor: Staff, rows: list[tuple[object, object]]) -> list[Player]:
    """All or nothing: one bad row and nothing is written."""
    require(actor, "players")
    clean = []
    seen: set[str] = set()
    for i, (number, name) in enumerate(rows, 1):
        where = f"{i} 人目: " if len(rows) > 1 else ""
        try:
            num = _clean(number, "選手番号", 40)
            nm = _clean(name, "選手名", 80)
        except JudgeappError as exc:
            raise JudgeappError(where + exc.message, exc.status, exc.code) from None
        if num in seen:
            raise JudgeappError(f"{where}選手番号 {num} が重複しています。", 409, "duplicate_player")
        seen.add(num)
        clean.append((num, nm))

    def do(s: Session):
        taken = set(s.scalars(select(Player.number).where(Player.event_id == actor.event_id,
                                                            Player.number.in_([n for n, _ in clean]))))
        if taken:
            raise JudgeappError(f"選手番号 {'、'.join(sorted(taken)[:5])} はすでに登録されています。", 409,
                                "duplicate_player")
        players = [Player(event_id=actor.event_id, number=n, name=nm) for n, nm in clean]
        s.add_all(players)
        s.flush()
        audit(s, actor.event_id, actor, "player.add", f"players:{len(players)}",
              players=[{"id": p.id, "number": p.number, "name": p.name} for p in players])
        return players

    try:
        return db.write(do)
    except IntegrityError:
        raise JudgeappError("選手番号が重複しています。", 409, "duplicate_player") from None


def find_players(db: Database, event_id: int, q: str = "", limit: int = 200) -> list[Player]:
    q = unicodedata.normalize("NFKC", q or "").strip()[:80]
    with db.reader() as s:
        stmt = select(Player).where(Player.event_id == event_id)
        if q:
            stmt = stmt.where(or_(Player.number == q, Player.number.like(f"{q}%"), Player.name.like(f"%{q}%")))
        return list(s.scalars(stmt.order_by(Player.number).limit(limit)))


def get_player(db: Database, event_id: int, player_id: object) -> Player:
    with db.reader() as s:
        p = s.get(Player, _id(player_id))
    if p is None or p.event_id != event_id:
        raise JudgeappError("その選手はこの大会に登録されていません。", 404, "unknown_player")
    return p


# --- penalty records ------------------------------------------------------------------------------------


@dataclass
class RecordView:
    """A record as it stands now: the original ruling, a void, an appeal and its decision."""

    penalty: Penalty
    void: Void | None = None
    appeal: Appeal | None = None
    decision: Decision | None = None

    @property
    def state(self) -> str:
        if self.void:
            return "void"
        if self.decision and self.decision.outcome == "overturn":
            return "overturned"
        if self.decision and self.decision.outcome == "change":
            return "changed"
        if self.appeal and not self.decision:
            return "appealed"
        return "active"

    @property
    def counts(self) -> bool:
        return self.state not in ("void", "overturned") and self.level not in (NO_PENALTY.id, HJ_RULING_ID)

    @property
    def outside_text(self) -> bool:
        """A head judge's ruling where the text is silent (shown as such, never counted)."""
        return self.level == HJ_RULING_ID

    @property
    def level(self) -> str:
        return self.decision.new_level if self.state == "changed" else self.penalty.level

    @property
    def level_label(self) -> str:
        return self.decision.new_level_label if self.state == "changed" else self.penalty.level_label

    @property
    def state_label(self) -> str:
        return {"void": "無効", "overturned": "上告で取消", "changed": "上告で変更", "appealed": "上告中",
                "active": "有効"}[self.state]


@dataclass
class PlayerRecord:
    player: Player
    records: list[RecordView]
    standing: Standing
    upgrades: list[dict] = field(default_factory=list)

    @property
    def removed(self) -> bool:
        return self.standing.removed


def _views(s: Session, penalties: list[Penalty]) -> list[RecordView]:
    ids = [p.id for p in penalties]
    if not ids:
        return []
    voids = {v.penalty_id: v for v in s.scalars(select(Void).where(Void.penalty_id.in_(ids)))}
    appeals = {a.penalty_id: a for a in s.scalars(select(Appeal).where(Appeal.penalty_id.in_(ids)))}
    decisions = {d.appeal_id: d for d in s.scalars(select(Decision).where(
        Decision.appeal_id.in_([a.id for a in appeals.values()])))} if appeals else {}
    out = []
    for p in penalties:
        a = appeals.get(p.id)
        out.append(RecordView(penalty=p, void=voids.get(p.id), appeal=a, decision=decisions.get(a.id) if a else None))
    return out


def player_record(db: Database, policy: Policy, player: Player, session: Session | None = None) -> PlayerRecord:
    def load(s: Session) -> PlayerRecord:
        penalties = list(s.scalars(select(Penalty).where(Penalty.player_id == player.id).order_by(Penalty.seq)))
        for p in penalties:
            _ = p.judge  # load before the session closes
        views = _views(s, penalties)
        st = standing(policy, [v.level for v in views if v.counts])
        return PlayerRecord(player=player, records=views, standing=st,
                            upgrades=st.steps[-1].upgrades if st.steps else [])

    if session is not None:
        return load(session)
    with db.reader() as s:
        return load(s)


def preview(db: Database, policy: Policy, player: Player, level: str) -> tuple[PlayerRecord, Standing]:
    """The player's record now, and the standing once this penalty is added (nothing written)."""
    current = player_record(db, policy, player)
    item = _level(policy, level)
    new = [] if item is NO_PENALTY or item.id == HJ_RULING_ID else [item.id]
    after = standing(policy, [v.level for v in current.records if v.counts] + new)
    return current, after


@dataclass(frozen=True)
class NoPenalty:
    """A ruling recorded without a penalty (the text prescribes none, or the head judge gave none):
    kept in the record, never counted in the standing."""

    id: str = "no-penalty"
    label: str = "ペナルティなし"
    mark: str = "－"
    description: str = "記録のみ。累積には数えません。"
    restricted_to: None = None
    grant: None = None
    citations: tuple = ()


NO_PENALTY = NoPenalty()
HJ_RULING_ID = "head-judge-ruling"  # judgeapp.events.desk.HJ_RULING


def _level(policy: Policy, level: object):
    if not isinstance(level, (str, int)) or isinstance(level, bool):
        level = ""
    if str(level) in (NO_PENALTY.id, NO_PENALTY.label):
        return NO_PENALTY
    if str(level) == HJ_RULING_ID:
        from .desk import HJ_RULING

        return HJ_RULING
    item = policy.resolve(str(level or ""))
    if item is None:
        names = "、".join([x.label for x in policy.levels.values()] + [x.label for x in policy.consequences.values()]
                         + [NO_PENALTY.label])
        raise JudgeappError(f"ペナルティを選んでください（{names}）。", 400, "bad_level")
    return item


def record_penalty(db: Database, policies: Policies, actor: Staff, form: dict, corpus_version: str) -> Penalty:
    """Record one penalty. Concurrent recordings for one player are serialised (row lock or BEGIN
    IMMEDIATE) and any conflict is retried, so every record lands and the standing comes out right."""
    require(actor, "record")
    ev = get_event(db, actor.event_id)
    policy = policies.games[ev.game]
    player = get_player(db, ev.id, form.get("player"))
    rnd = _int(form.get("round", ""), "ラウンド", 1, ev.rounds)
    item = _level(policy, form.get("level"))
    ruling = None
    if item.id == HJ_RULING_ID:
        from .desk import check_ruling, ruling_text

        check_ruling(actor)
        ruling = ruling_text(policy, form)
    else:
        check_grant(actor, item)
    key = form.get("idempotency_key")
    key = _clean(key, "Idempotency-Key", 80) if key else None
    if key:
        with db.reader() as s:
            done = s.scalar(select(Penalty).where(Penalty.judge_id == actor.id, Penalty.idempotency_key == key))
        if done is not None:
            return done
    facts = _clean(form.get("facts"), "事実（何が起きたか）", 2000)
    notes = _clean(form.get("notes"), "メモ", 2000, required=False)
    infraction_id = _clean(form.get("infraction"), "違反", 120, required=False)
    citations: list[dict] = []
    if infraction_id:
        game, _, iid = infraction_id.rpartition("/")
        inf = policy.infractions.get(iid) if game in ("", ev.game) else None
        if inf is None:
            raise JudgeappError("その違反はこのゲームの規定にありません。", 400, "unknown_infraction")
        infraction_id = f"{ev.game}/{inf.id}"
        citations = [{"section": c.section, "quote": c.quote} for c in inf.citations]
    else:
        citations = [{"section": c.section, "quote": c.quote} for c in getattr(item, "citations", [])]
    answers = form.get("answers") or {}
    if not isinstance(answers, dict) or len(answers) > 20:
        answers = {}
    answers = {str(k)[:60]: str(v)[:60] for k, v in answers.items()}

    inf_name = policy.infractions[infraction_id.rpartition("/")[2]].name if infraction_id else None

    def do(s: Session):
        from . import desk

        # PostgreSQL: the player's row lock queues concurrent recordings; SQLite: BEGIN IMMEDIATE did.
        s.execute(select(Player.id).where(Player.id == player.id).with_for_update())
        seq = (s.scalar(select(func.max(Penalty.seq)).where(Penalty.player_id == player.id)) or 0) + 1
        before = player_record(db, policy, player, session=s).removed
        p = Penalty(event_id=ev.id, player_id=player.id, seq=seq, round=rnd, infraction=infraction_id or None,
                    level=item.id, level_label=item.label, facts=facts, notes=notes, citations=citations,
                    corpus_version=corpus_version, answers=answers, judge_id=actor.id, idempotency_key=key,
                    ruling=ruling)
        s.add(p)
        s.flush()
        after = player_record(db, policy, player, session=s)
        action = "ruling.record" if ruling else "penalty.record"
        audit(s, ev.id, actor, action, f"penalty:{p.id}", player=player.id, level=item.label,
              round=rnd, infraction=infraction_id or None, infraction_name=inf_name, ruling=ruling,
              removed=after.removed, removed_now=after.removed and not before)
        desk.note_status(s, ev.id, actor, player, before, after.removed, action, p.id)
        desk.announce(s, ev.id, "record", record=p.id)
        return p

    try:
        return db.write(do)
    except IntegrityError:
        if key:  # the same key arrived twice at once: the first one's record is the answer
            with db.reader() as s:
                done = s.scalar(select(Penalty).where(Penalty.judge_id == actor.id, Penalty.idempotency_key == key))
            if done is not None:
                return done
        raise


def check_grant(actor: Staff, item) -> None:
    """A level the text restricts (イジンデン 【敗北】) needs the organizer, or the organizer's grant."""
    grant = getattr(item, "grant", None)
    if grant and actor.role != "organizer" and grant not in (actor.grants or []):
        raise JudgeappError(f"【{item.label}】を与えられるのは{item.restricted_to or '主催者と許可されたジャッジ'}"
                            "です。主催者の許可がありません。", 403, "not_granted")


def get_record(db: Database, event_id: int, penalty_id: object) -> RecordView:
    rid = _id(penalty_id)
    with db.reader() as s:
        p = s.get(Penalty, rid)
        if p is None or p.event_id != event_id:
            raise JudgeappError("その記録はありません。", 404, "unknown_record")
        _ = p.judge, p.player
        view = _views(s, [p])[0]
        for x in (view.void, view.appeal, view.decision):
            if x is not None:
                _ = getattr(x, "by", None) or getattr(x, "recorded_by", None)
        return view


def void_record(db: Database, actor: Staff, penalty_id: object, reason: object) -> Void:
    require(actor, "void")
    view = get_record(db, actor.event_id, penalty_id)
    why = _clean(reason, "無効にする理由", 1000)

    if view.decision is not None:
        raise JudgeappError("上告が裁定された記録です。ヘッドジャッジの裁定は最終決定なので、無効にはできません。", 409,
                            "decided")

    def do(s: Session):
        if s.scalar(select(Void.id).where(Void.penalty_id == view.penalty.id)):
            raise JudgeappError("この記録はすでに無効です。", 409, "already_void")
        from . import desk

        policy = desk.policy_of(get_event(db, actor.event_id))
        player = view.penalty.player
        s.execute(select(Player.id).where(Player.id == player.id).with_for_update())
        before = desk.removed_now(s, policy, player)
        v = Void(penalty_id=view.penalty.id, reason=why, by_id=actor.id)
        s.add(v)
        s.flush()
        audit(s, actor.event_id, actor, "penalty.void", f"penalty:{view.penalty.id}", reason=why)
        desk.note_status(s, actor.event_id, actor, player, before, desk.removed_now(s, policy, player),
                         "penalty.void", view.penalty.id)
        desk.announce(s, actor.event_id, "void", record=view.penalty.id)
        return v

    try:
        return db.write(do)
    except IntegrityError:
        raise JudgeappError("この記録はすでに無効です。", 409, "already_void") from None


def file_appeal(db: Database, actor: Staff, penalty_id: object, grounds: object) -> Appeal:
    """A player's appeal of a floor judge's ruling, as a judge records it. One per ruling."""
    require(actor, "appeal")
    view = get_record(db, actor.event_id, penalty_id)
    text = _clean(grounds, "上告の理由", 1000)
    if view.void:
        raise JudgeappError("無効になった記録には上告できません。", 409, "record_void")

    def do(s: Session):
        if s.scalar(select(Appeal.id).where(Appeal.penalty_id == view.penalty.id)):
            raise JudgeappError("この裁定にはすでに上告があります。ヘッドジャッジの裁定は最終決定で、"
                                "再度の上告はできません。", 409, "already_appealed")
        a = Appeal(event_id=actor.event_id, penalty_id=view.penalty.id, grounds=text, recorded_by_id=actor.id)
        s.add(a)
        s.flush()
        audit(s, actor.event_id, actor, "appeal.file", f"penalty:{view.penalty.id}", appeal=a.id, grounds=text)
        from .desk import announce

        announce(s, actor.event_id, "appeal", record=view.penalty.id)
        return a

    try:
        return db.write(do)
    except IntegrityError:
        raise JudgeappError("この裁定にはすでに上告があります。再度の上告はできません。", 409,
                            "already_appealed") from None


def decide_appeal(db: Database, policies: Policies, actor: Staff, appeal_id: object, form: dict) -> Decision:
    """The head judge's final decision: uphold, change the level, or overturn, with a reason."""
    require(actor, "decide")
    aid = _id(appeal_id)
    with db.reader() as s:
        appeal = s.get(Appeal, aid)
    if appeal is None or appeal.event_id != actor.event_id:
        raise JudgeappError("その上告はありません。", 404, "unknown_appeal")
    outcome = str(form.get("outcome") or "")
    if outcome not in ("uphold", "change", "overturn"):
        raise JudgeappError("裁定を選んでください（維持・変更・取消）。", 400, "bad_outcome")
    reason = _clean(form.get("reason"), "裁定の理由", 1000)
    new_level = new_label = None
    if outcome == "change":
        ev = get_event(db, actor.event_id)
        item = _level(policies.games[ev.game], form.get("level"))
        check_grant(actor, item)
        new_level, new_label = item.id, item.label

    def do(s: Session):
        if s.scalar(select(Void.id).where(Void.penalty_id == appeal.penalty_id)):
            raise JudgeappError("この記録は無効になっています。裁定はできません。", 409, "record_void")
        if s.scalar(select(Decision.id).where(Decision.appeal_id == aid)):
            raise JudgeappError("この上告はすでに裁定されています。裁定は最終決定です。", 409, "already_decided")
        from . import desk

        policy = policies.games[get_event(db, actor.event_id).game]
        player = appeal.penalty.player
        s.execute(select(Player.id).where(Player.id == player.id).with_for_update())
        before = desk.removed_now(s, policy, player)
        d = Decision(appeal_id=aid, outcome=outcome, new_level=new_level, new_level_label=new_label, reason=reason,
                     by_id=actor.id)
        s.add(d)
        s.flush()
        audit(s, actor.event_id, actor, "appeal.decide", f"penalty:{appeal.penalty_id}", appeal=aid,
              outcome=outcome, level=new_label, reason=reason)
        desk.note_status(s, actor.event_id, actor, player, before, desk.removed_now(s, policy, player),
                         "appeal.decide", appeal.penalty_id)
        desk.announce(s, actor.event_id, "decision", record=appeal.penalty_id)
        return d

    try:
        return db.write(do)
    except IntegrityError:
        raise JudgeappError("この上告はすでに裁定されています。", 409, "already_decided") from None


# --- the event's view -----------------------------------------------------------------------------------


def event_records(db: Database, event_id: int, player: int | None = None, round_: int | None = None,
                  judge: int | None = None, level: str | None = None) -> list[RecordView]:
    with db.reader() as s:
        stmt = select(Penalty).where(Penalty.event_id == event_id)
        if player:
            stmt = stmt.where(Penalty.player_id == player)
        if round_:
            stmt = stmt.where(Penalty.round == round_)
        if judge:
            stmt = stmt.where(Penalty.judge_id == judge)
        penalties = list(s.scalars(stmt.order_by(Penalty.id)))
        views = _views(s, penalties)
    if level:  # the level as it stands now (after an appeal's change), not as first recorded
        views = [v for v in views if v.counts and v.level == level]
    return views


def pending_appeals(db: Database, event_id: int) -> list[RecordView]:
    return [v for v in event_records(db, event_id) if v.state == "appealed"]


def players_over_the_line(db: Database, policy: Policy, event_id: int) -> list[PlayerRecord]:
    """Players removed by the rules, or with an upgrade the judge may decide."""
    out = []
    views = event_records(db, event_id)
    by_player: dict[int, list[RecordView]] = {}
    for v in views:
        by_player.setdefault(v.penalty.player_id, []).append(v)
    for pid, vs in by_player.items():
        vs.sort(key=lambda v: v.penalty.seq)
        st = standing(policy, [v.level for v in vs if v.counts])
        ups = st.steps[-1].upgrades if st.steps else []
        if st.removed or ups:
            out.append(PlayerRecord(player=vs[0].penalty.player, records=vs, standing=st, upgrades=ups))
    return sorted(out, key=lambda r: r.player.number)


def audit_log(db: Database, event_id: int, limit: int = 500) -> list[AuditEntry]:
    with db.reader() as s:
        entries = list(s.scalars(select(AuditEntry).where(AuditEntry.event_id == event_id)
                                 .order_by(AuditEntry.id.desc()).limit(limit)))
        for e in entries:
            _ = e.staff
        return entries


# --- JSON and export -------------------------------------------------------------------------------------


def record_json(v: RecordView) -> dict:
    p = v.penalty
    return {
        "id": p.id, "player": {"id": p.player_id, "number": p.player.number, "name": p.player.name},
        "seq": p.seq, "round": p.round, "infraction": p.infraction, "level": p.level, "penalty": p.level_label,
        "effective_penalty": v.level_label if v.counts else None, "state": v.state,
        "facts": p.facts, "notes": p.notes, "citations": p.citations, "corpus_version": p.corpus_version,
        "answers": p.answers, "judge": {"id": p.judge_id, "name": p.judge.name}, "recorded_at": iso(p.created_at),
        "void": {"reason": v.void.reason, "by": v.void.by_id, "at": iso(v.void.created_at)} if v.void else None,
        "appeal": {"id": v.appeal.id, "grounds": v.appeal.grounds, "recorded_by": v.appeal.recorded_by_id,
                   "at": iso(v.appeal.created_at)} if v.appeal else None,
        "decision": {"outcome": v.decision.outcome, "penalty": v.decision.new_level_label, "reason": v.decision.reason,
                     "by": v.decision.by_id, "at": iso(v.decision.created_at)} if v.decision else None,
    }


CSV_COLUMNS = ["記録ID", "記録日時（日本時間）", "ラウンド", "選手番号", "選手名", "違反", "ペナルティ（記録時）", "現在の扱い",
               "現在のペナルティ", "記録したジャッジ", "事実", "メモ", "根拠", "上告", "裁定", "裁定理由", "コーパス版"]


JST = timezone(timedelta(hours=9), "JST")


def jst(dt: datetime | None, fmt: str = "%Y-%m-%d %H:%M:%S") -> str:
    """A time as judges in Japan read it."""
    return _aware(dt).astimezone(JST).strftime(fmt) if dt is not None else ""


def export_csv(views: list[RecordView]) -> bytes:
    """UTF-8 with BOM, so that Excel opens the Japanese correctly."""
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(CSV_COLUMNS)
    for v in views:
        p = v.penalty
        w.writerow([
            p.id, jst(p.created_at), p.round, p.player.number, p.player.name,
            p.infraction or "", p.level_label, v.state_label, v.level_label if v.counts else "", p.judge.name,
            p.facts, p.notes, " ".join(c["section"] for c in p.citations), v.appeal.grounds if v.appeal else "",
            {"uphold": "維持", "change": "変更", "overturn": "取消"}.get(v.decision.outcome, "") if v.decision else "",
            v.decision.reason if v.decision else "", p.corpus_version,
        ])
    return ("\ufeff" + buf.getvalue()).encode("utf-8")


def event_json(ev: Event) -> dict:
    return {"id": ev.id, "name": ev.name, "game": ev.game, "date": ev.held_on.isoformat(), "level": ev.level,
            "level_label": LEVELS.get(ev.level, ev.level), "tier": ev.tier, "rounds": ev.rounds,
            "url": f"/events/{ev.id}"}


def staff_json(st: Staff) -> dict:
    return {"id": st.id, "name": st.name, "role": st.role, "role_label": st.role_label, "grants": st.grants or [],
            "active": st.active}


def standing_summary(rec: PlayerRecord) -> dict:
    from ..policy import standing_json

    out = standing_json(rec.standing)
    out["upgrades"] = rec.upgrades
    return out


def player_json(p: Player, rec: PlayerRecord | None = None) -> dict:
    out = {"id": p.id, "number": p.number, "name": p.name}
    if rec is not None:
        out["standing"] = standing_summary(rec)
        out["removed"] = rec.removed
        out["records"] = [record_json(v) for v in rec.records]
    return out
