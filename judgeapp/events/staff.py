"""An event and its staff: creating and correcting the event, adding staff, grants, passcodes, roles, sign-in
(throttled per name and client address, with a ceiling), sign-out, API tokens (expiring, revocable), join
links shown as QR codes, and the one check of who is acting.

Acting: a session cookie carries the member's id and their session version; a token is looked up by its hash.
Either way `acting_staff_*` answers only for a member who exists, is active, and whose session version
(cookie) or token expiry (API) is still good. Sign-out, disabling, a passcode reset and a role change bump
the version and drop the token, so every copy of an old cookie or token stops working at once.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import date, timedelta

from sqlalchemy import bindparam, func, select
from sqlalchemy.orm import Session
from werkzeug.security import check_password_hash, generate_password_hash

from ..errors import JudgeappError
from ..policy import Policies
from .audit import audit
from .db import Database, attach
from .models import LEVELS, ROLES, Event, JoinLink, Penalty, SigninThrottle, Staff, utcnow
from .parsing import clean_text, parse_bool, parse_id, parse_int, parse_passcode
from .permissions import require
from .serialize import aware, event_json

TOKEN_LIFETIME = timedelta(hours=16)  # an event day
JOIN_LINK_LIFETIME = timedelta(minutes=10)
JOIN_ROLES = ("head_judge", "floor_judge", "scorekeeper")  # the organizer is made with the event
THROTTLE_FREE_TRIES = 5  # failures from one address for one name before each further try waits
THROTTLE_CEILING = 30  # seconds: the longest anyone waits, so anonymous guesses cannot lock a judge out
PASSCODE_HASH = (
    "scrypt"  # werkzeug's method for stored passcodes, unless the setting PASSCODE_HASH names another
)
# Checked against when the name is unknown, so that an unknown name costs the same work as a wrong passcode
# (one per method: the same method as the stored passcodes).
_DUMMY_HASHES: dict[str, str] = {}


def _hash_method() -> str:
    from flask import current_app, has_app_context

    return (
        str(current_app.config.get("PASSCODE_HASH") or PASSCODE_HASH) if has_app_context() else PASSCODE_HASH
    )


def hash_passcode(passcode: str) -> str:
    """A passcode's stored form: werkzeug's salted hash by the app's PASSCODE_HASH method (scrypt unless set).
    The test suite sets a cheap method (tests/conftest.py), as Django's docs advise for tests: the hashing is
    werkzeug's, and scrypt's cost is most of the time of a test that signs staff in."""
    return generate_password_hash(passcode, method=_hash_method())


def _dummy_hash() -> str:
    method = _hash_method()
    if method not in _DUMMY_HASHES:
        _DUMMY_HASHES[method] = generate_password_hash(secrets.token_urlsafe(16), method=method)
    return _DUMMY_HASHES[method]


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


# --- the acting member --------------------------------------------------------------------------------


# Built once (the acting check runs on every request): the member with their event, by id or by token hash,
# one row read without the ORM's load (`db.run`) and made into the session's Staff and Event (`db.attach`).
_STAFF, _EVENTS = Staff.__table__, Event.__table__
_STAFF_KEYS = [Staff.__mapper__.get_property_by_column(c).key for c in _STAFF.c]
_EVENT_KEYS = [Event.__mapper__.get_property_by_column(c).key for c in _EVENTS.c]
_MEMBER = select(*_STAFF.c, *_EVENTS.c).select_from(
    _STAFF.outerjoin(_EVENTS, _STAFF.c.event_id == _EVENTS.c.id)
)
_BY_ID = _MEMBER.where(_STAFF.c.id == bindparam("id"))
_BY_TOKEN = _MEMBER.where(_STAFF.c.token_hash == bindparam("hash"))


def _acting_row(s: Session, rows: list[tuple]) -> Staff | None:
    if not rows:
        return None
    row, n = rows[0], len(_STAFF_KEYS)
    ev_values = dict(zip(_EVENT_KEYS, row[n:], strict=True))
    ev = attach(s, Event, ev_values) if ev_values["id"] is not None else None
    return attach(s, Staff, dict(zip(_STAFF_KEYS, row[:n], strict=True)), {"event": ev})


def _may_act(row: Staff | None) -> bool:
    return row is not None and bool(row.active)


def acting_staff_by_session(db: Database, staff_id: object, version: object) -> Staff | None:
    """The member a session cookie names, if they are active and the cookie's session version is current."""
    sid = parse_id(staff_id)
    if sid < 0 or isinstance(version, bool) or not isinstance(version, int):
        return None
    # the member and their event (the page reads the event next)
    row = db.first_rows(_BY_ID, {"id": sid}, _acting_row)
    return row if _may_act(row) and row.session_version == version else None


def acting_staff_by_token(db: Database, token: object) -> Staff | None:
    """The owner of an API token, if they are active and the token has neither expired nor been revoked."""
    if not isinstance(token, str) or not token or len(token) > 200:
        return None
    row = db.first_rows(_BY_TOKEN, {"hash": token_hash(token)}, _acting_row)
    if not _may_act(row):
        return None
    expires = aware(row.token_expires_at)
    return row if expires is not None and expires > utcnow() else None


def _end_sessions(st: Staff) -> None:
    """Every cookie and token of this member stops working (in the caller's write transaction)."""
    st.session_version = (st.session_version or 0) + 1
    st.token_hash = None
    st.token_expires_at = None


def sign_out(db: Database, actor: Staff) -> None:
    """End the member's sessions everywhere (cookies and API token)."""

    def do(s: Session):
        st = s.get(Staff, actor.id)
        _end_sessions(st)
        audit(s, st.event_id, st, "signout", f"staff:{st.id}")

    db.write(do)


# --- events ---------------------------------------------------------------------------------------------


def _parse_event_fields(policies: Policies, game: str, form: dict, ev: Event | None) -> dict:
    name = clean_text(form.get("name", ev.name if ev else None), "大会名", 120)
    raw_date = form.get("date", ev.held_on.isoformat() if ev else None)
    try:
        if not isinstance(raw_date, str):
            raise ValueError
        held_on = date.fromisoformat(raw_date.strip())
    except ValueError:
        raise JudgeappError("開催日は 2026-12-01 の形で入力してください。", 400, "bad_date") from None
    level = form.get("level", ev.level if ev else None)
    if level not in LEVELS:
        raise JudgeappError("競技か一般かを選んでください。", 400, "bad_level")
    tier_raw = form.get("tier", ev.tier if ev else None)
    tier = None if tier_raw in (None, "") else tier_raw
    tier = check_tier(policies, game, level, tier)
    rounds = parse_int(form.get("rounds", ev.rounds if ev else None), "ラウンド数", 1, 30)
    return {"name": name, "held_on": held_on, "level": level, "tier": tier, "rounds": rounds}


def check_tier(policies: Policies, game: str, level: str, tier: object) -> int | None:
    """The tier belongs only to games whose policy defines tiers, and must agree with the level of play the
    text ties it to (tcg-taikai 1c-ii: 1 → 一般, 2 and above → 競技)."""
    tiers = policies.games[game].file.tiers
    if tier is None:
        return None
    if tiers is None:
        raise JudgeappError(
            f"{policies.games[game].name}の大会には階層レベルがありません。空のままにしてください。",
            400,
            "bad_tier",
        )
    n = parse_int(tier, tiers.label, tiers.lowest, tiers.highest)
    if tiers.level_of(n) != level:
        raise JudgeappError(
            f"{tiers.citation.section.rsplit('/', 1)[-1]} では、{tiers.label} {n} は"
            f"{LEVELS[tiers.level_of(n)]}です。レベルか階層を直してください。",
            400,
            "bad_tier",
        )
    return n


def create_event(db: Database, policies: Policies, form: dict) -> tuple[Event, Staff, str]:
    """A new event with its organizer (who signs in with the passcode given here). Returns an API token."""
    game = form.get("game")
    if not isinstance(game, str) or game not in policies.games:
        raise JudgeappError("ゲームを選んでください。", 400, "unknown_game")
    fields = _parse_event_fields(policies, game, form, None)
    organizer = clean_text(form.get("organizer"), "主催者の名前", 60)
    passcode = parse_passcode(form.get("passcode"), "organizer")
    token = secrets.token_urlsafe(32)
    hashed = hash_passcode(passcode)  # before the write transaction: no writer waits for the hashing

    def do(s: Session):
        ev = Event(game=game, **fields)
        s.add(ev)
        s.flush()
        org = Staff(
            event_id=ev.id,
            name=organizer,
            role="organizer",
            passcode_hash=hashed,
            token_hash=token_hash(token),
            token_expires_at=utcnow() + TOKEN_LIFETIME,
            grants=[],
        )
        s.add(org)
        s.flush()
        audit(
            s,
            ev.id,
            org,
            "event.create",
            f"event:{ev.id}",
            name=ev.name,
            game=game,
            level=ev.level,
            tier=ev.tier,
            rounds=ev.rounds,
        )
        return ev, org

    ev, org = db.write(do)
    return ev, org, token


def update_event(db: Database, policies: Policies, actor: Staff, form: dict) -> Event:
    """The organizer corrects the event (name, date, level, tier, rounds: a top cut adds rounds). Audited."""
    require(actor, "staff")
    if not any(k in form for k in ("name", "date", "level", "tier", "rounds")):
        raise JudgeappError(
            "変更する項目（name・date・level・tier・rounds）を送ってください。", 400, "no_change"
        )
    ev = get_event(db, actor.event_id)
    fields = _parse_event_fields(policies, ev.game, form, ev)

    def do(s: Session):
        row = s.scalar(select(Event).where(Event.id == ev.id).with_for_update())
        played = s.scalar(select(func.max(Penalty.round)).where(Penalty.event_id == ev.id)) or 0
        if fields["rounds"] < played:
            raise JudgeappError(
                f"第 {played} ラウンドの記録があるので、ラウンド数は {played} 以上にしてください。",
                409,
                "rounds_in_use",
            )
        before = event_json(row)
        for k, v in fields.items():
            setattr(row, k, v)
        audit(s, ev.id, actor, "event.update", f"event:{ev.id}", before=before, after=event_json(row))
        return row

    return db.write(do)


def get_event(db: Database, event_id: object) -> Event:
    with db.reader() as s:
        ev = s.get(Event, parse_id(event_id))
    if ev is None:
        raise JudgeappError("その大会はありません。", 404, "unknown_event")
    return ev


def list_events(db: Database) -> list[Event]:
    with db.reader() as s:
        return list(s.scalars(select(Event).order_by(Event.held_on.desc(), Event.id.desc())))


def grants_of(policies: Policies, event: Event) -> set[str]:
    """What the organizer can grant: what the game's policy restricts (イジンデン: ijinden-defeat), and in every
    game a head judge's ruling where the text is silent (head-judge-ruling)."""
    from .records import HJ_RULING

    return {lv.grant for lv in policies.games[event.game].levels.values() if lv.grant} | {HJ_RULING.grant}


# --- staff ----------------------------------------------------------------------------------------------


def list_staff(db: Database, event_id: int, active_only: bool = False) -> list[Staff]:
    with db.reader() as s:
        stmt = select(Staff).where(Staff.event_id == event_id)
        if active_only:
            stmt = stmt.where(Staff.active.is_(True))
        return list(s.scalars(stmt.order_by(Staff.id)))


def _role(value: object) -> str:
    if not isinstance(value, str) or value not in ROLES:
        raise JudgeappError(
            "役割を選んでください（主催者・ヘッドジャッジ・フロアジャッジ・スコアキーパー）。",
            400,
            "bad_role",
        )
    return value


def _grants(value: object, allowed: set[str]) -> list[str]:
    """Only what the game's policy restricts can be granted (イジンデン: ijinden-defeat)."""
    if value in (None, ""):
        return []
    items = value if isinstance(value, list) else [value]
    if not all(isinstance(x, str) for x in items):
        raise JudgeappError("権限は文字の一覧で指定してください。", 400, "bad_type")
    out = sorted({x for x in items if x})
    unknown = [g for g in out if g not in allowed]
    if unknown:
        names = "、".join(sorted(allowed)) or "（このゲームにはありません）"
        raise JudgeappError(
            f"「{unknown[0][:40]}」は与えられる権限ではありません。使えるのは {names} です。",
            400,
            "bad_grant",
        )
    return out


def add_staff(db: Database, actor: Staff, form: dict, allowed_grants: set[str] = frozenset()) -> Staff:
    require(actor, "staff")
    name = clean_text(form.get("name"), "スタッフの名前", 60)
    role = _role(form.get("role"))
    passcode = parse_passcode(form.get("passcode"), role)
    grants = _grants(form.get("grants"), allowed_grants)
    hashed = hash_passcode(passcode)  # before the write transaction: no writer waits for the hashing

    def do(s: Session):
        if s.scalar(select(Staff.id).where(Staff.event_id == actor.event_id, Staff.name == name)):
            raise JudgeappError(f"「{name}」はすでに登録されています。", 409, "duplicate_staff")
        st = Staff(
            event_id=actor.event_id,
            name=name,
            role=role,
            passcode_hash=hashed,
            grants=grants,
        )
        s.add(st)
        s.flush()
        audit(s, actor.event_id, actor, "staff.add", f"staff:{st.id}", name=name, role=role, grants=grants)
        return st

    return db.write(do)


def _member(s: Session, actor: Staff, staff_id: object) -> Staff:
    st = s.scalar(select(Staff).where(Staff.id == parse_id(staff_id)).with_for_update())
    if st is None or st.event_id != actor.event_id:
        raise JudgeappError("そのスタッフはいません。", 404, "unknown_staff")
    return st


def set_grants(
    db: Database, actor: Staff, staff_id: object, grants: object, allowed_grants: set[str] = frozenset()
) -> Staff:
    """The organizer grants (or withdraws) what a policy restricts, e.g. イジンデン 【敗北】."""
    require(actor, "staff")
    new = _grants(grants, allowed_grants)

    def do(s: Session):
        st = _member(s, actor, staff_id)
        old = list(st.grants or [])
        st.grants = new
        audit(s, actor.event_id, actor, "staff.grants", f"staff:{st.id}", before=old, after=new)
        return st

    return db.write(do)


def set_staff(db: Database, actor: Staff, staff_id: object, form: dict) -> Staff:
    """The organizer resets a passcode, changes a role, or disables (re-enables) a member; nobody is deleted.
    Each of these ends the member's sessions and token."""
    require(actor, "staff")
    if not any(form.get(k) not in (None, "") for k in ("active", "role", "passcode")):
        raise JudgeappError("変更する項目（passcode・role・active）を送ってください。", 400, "no_change")
    active = parse_bool(form["active"], "active") if form.get("active") is not None else None
    role = _role(form["role"]) if form.get("role") is not None else None
    passcode_raw = form.get("passcode")

    def do(s: Session):
        st = _member(s, actor, staff_id)
        changes = {}
        if role is not None and role != st.role:
            if st.id == actor.id:
                raise JudgeappError("自分自身の役割は変えられません。", 409, "self_role")
            st.role = role
            changes["role"] = role
        if passcode_raw not in (None, ""):
            st.passcode_hash = hash_passcode(parse_passcode(passcode_raw, st.role))
            changes["passcode"] = "reset"
        if active is not None and active != st.active:
            if st.id == actor.id and not active:
                raise JudgeappError("自分自身は無効にできません。", 409, "self_disable")
            st.active = active
            changes["active"] = active
        if changes:
            _end_sessions(st)
        audit(s, actor.event_id, actor, "staff.update", f"staff:{st.id}", **changes)
        return st

    return db.write(do)


def issue_token(db: Database, actor: Staff, staff_id: object) -> str:
    """A new API token for the member themself (the old one stops working), valid for TOKEN_LIFETIME. Shown
    once; stored hashed. Nobody can mint another member's token: what a token does is audited under
    its owner."""
    if actor.id != parse_id(staff_id):
        raise JudgeappError("API トークンは本人だけが発行できます。", 403, "forbidden")
    token = secrets.token_urlsafe(32)

    def do(s: Session):
        st = s.get(Staff, actor.id)
        if not _may_act(st):
            raise JudgeappError("このスタッフは無効になっています。", 403, "inactive")
        st.token_hash = token_hash(token)
        st.token_expires_at = utcnow() + TOKEN_LIFETIME
        audit(s, actor.event_id, actor, "staff.token", f"staff:{st.id}")

    db.write(do)
    return token


def revoke_token(db: Database, actor: Staff) -> None:
    """The member's API token stops working (their browser sessions stay)."""

    def do(s: Session):
        st = s.get(Staff, actor.id)
        st.token_hash = None
        st.token_expires_at = None
        audit(s, actor.event_id, actor, "staff.token_revoke", f"staff:{st.id}")

    db.write(do)


# --- sign-in ---------------------------------------------------------------------------------------------


def _throttle_key(event_id: int, name: str, address: str) -> str:
    return hashlib.sha256(f"{event_id}\0{name}\0{address}".encode()).hexdigest()


def sign_in(db: Database, event_id: int, name: object, passcode: object, address: str = "") -> Staff:
    """Check a member's passcode. Failures are counted per (name, client address): after five, each further
    try from that address waits 1, 2, 4 … seconds, never more than THROTTLE_CEILING. An unknown name costs the
    same hashing work as a wrong passcode, and gets the same answer."""
    name = clean_text(name, "名前", 60)
    passcode = passcode[:200] if isinstance(passcode, str) else ""
    key = _throttle_key(event_id, name, address or "")
    now = utcnow()
    with db.reader() as s:
        row = s.scalar(
            select(Staff).where(Staff.event_id == event_id, Staff.name == name, Staff.active.is_(True))
        )
        throttle = s.get(SigninThrottle, key)
        locked = aware(throttle.locked_until) if throttle else None
    if locked and locked > now:
        wait = int((locked - now).total_seconds()) + 1
        raise JudgeappError(
            f"失敗が続いたため、{wait} 秒待ってからもう一度試してください。", 429, "signin_throttled"
        )
    ok = check_password_hash(row.passcode_hash if row else _dummy_hash(), passcode) and row is not None

    def do(s: Session):
        t = s.get(SigninThrottle, key)
        if ok:
            if t is not None:
                s.delete(t)
            audit(s, event_id, row, "signin", f"staff:{row.id}")
            return
        if t is None:
            t = SigninThrottle(key=key, failures=0)
            s.add(t)
        t.failures += 1
        t.updated_at = now
        if t.failures >= THROTTLE_FREE_TRIES:
            t.locked_until = now + timedelta(
                seconds=min(2 ** (t.failures - THROTTLE_FREE_TRIES), THROTTLE_CEILING)
            )
        if row is not None:
            audit(s, event_id, None, "signin.failed", f"staff:{row.id}", failures=t.failures)

    db.write(do)
    if not ok:
        raise JudgeappError("名前かパスコードが違います。", 401, "bad_signin")
    return row


def token_by_passcode(
    db: Database,
    event_id: int,
    name: object,
    passcode: object,
    address: str = "",
) -> tuple[Staff, str]:
    """Sign in through the API: a member's name and passcode give them a new token."""
    staff = sign_in(db, event_id, name, passcode, address)
    return staff, issue_token(db, staff, staff.id)


# --- join links -------------------------------------------------------------------------------------------


def create_join_link(db: Database, actor: Staff, role: object) -> tuple[JoinLink, str]:
    """A one-time link (valid JOIN_LINK_LIFETIME) that lets a new member join with `role`. Returns the link
    row and its secret (shown once, as a QR code)."""
    require(actor, "staff")
    if role not in JOIN_ROLES:
        raise JudgeappError(
            "参加リンクの役割を選んでください（ヘッドジャッジ・フロアジャッジ・スコアキーパー）。",
            400,
            "bad_role",
        )
    secret = secrets.token_urlsafe(24)

    def do(s: Session):
        link = JoinLink(
            event_id=actor.event_id,
            token_hash=token_hash(secret),
            role=role,
            created_by_id=actor.id,
            expires_at=utcnow() + JOIN_LINK_LIFETIME,
        )
        s.add(link)
        s.flush()
        audit(s, actor.event_id, actor, "join.create", f"join:{link.id}", role=role)
        return link

    return db.write(do), secret


def join_link(db: Database, event_id: int, secret: object) -> JoinLink:
    """The unused, unexpired link for `secret`, else 404/410 in Japanese."""
    if not isinstance(secret, str) or not 10 <= len(secret) <= 100:
        raise JudgeappError("参加リンクが正しくありません。", 404, "unknown_join_link")
    with db.reader() as s:
        link = s.scalar(select(JoinLink).where(JoinLink.token_hash == token_hash(secret)))
    _check_link(link, event_id)
    return link


def _check_link(link: JoinLink | None, event_id: int) -> None:
    if link is None or link.event_id != event_id:
        raise JudgeappError("参加リンクが正しくありません。", 404, "unknown_join_link")
    if link.used_at is not None:
        raise JudgeappError(
            "この参加リンクはもう使われました。主催者に新しいリンクを出してもらってください。",
            410,
            "join_link_used",
        )
    if aware(link.expires_at) <= utcnow():
        raise JudgeappError(
            "この参加リンクは期限が切れました。主催者に新しいリンクを出してもらってください。",
            410,
            "join_link_expired",
        )


def join(db: Database, event_id: int, secret: object, name: object) -> Staff:
    """Use a join link: a new member with the link's role and no passcode (the organizer can set one later).
    The link is used up in the same transaction, so two phones racing for one link make one member."""
    name = clean_text(name, "名前", 60)
    join_link(db, event_id, secret)
    hashed = hash_passcode(secrets.token_urlsafe(32))  # before the write transaction (see add_staff)

    def do(s: Session):
        link = s.scalar(select(JoinLink).where(JoinLink.token_hash == token_hash(secret)).with_for_update())
        _check_link(link, event_id)
        if s.scalar(select(Staff.id).where(Staff.event_id == event_id, Staff.name == name)):
            raise JudgeappError(
                f"「{name}」はすでに登録されています。別の名前にしてください。", 409, "duplicate_staff"
            )
        st = Staff(
            event_id=event_id,
            name=name,
            role=link.role,
            grants=[],
            passcode_hash=hashed,
        )
        s.add(st)
        s.flush()
        link.used_at, link.used_by_id = utcnow(), st.id
        audit(s, event_id, st, "join.use", f"join:{link.id}", name=name, role=link.role)
        return st

    return db.write(do)
