"""Penalty records, appeals, decisions and standings.

Records are never changed or deleted: a void, an appeal and its decision are new rows, and a player's standing
is computed from the rows by the policy's standing engine (judgeapp.policy.standing).

Every change reads the state it depends on inside the write transaction that makes the change, holding the
record: the player's row (recording: the UPDATE that bumps their count takes the row lock FOR UPDATE would,
first in the transaction) or the penalty's row (void, appeal, decision: FOR UPDATE) is locked on PostgreSQL,
and on SQLite the transaction began with BEGIN IMMEDIATE. Two conflicting requests are
therefore taken one after the other, and the second is refused with 409 and a Japanese message: a decision
stays final.

Each player's row also keeps the standing engine's tally of their records (`players.standing_tally`, see
`TALLY`): recording adds the new penalty to it instead of reading the whole history, and writes the new tally
with the count. A void or a decision clears it (under the player's row lock), and a recording that finds
none, or one of another count, policy or code version or number of corrections, reads the history as before; tests/test_records_tally.py
checks the answers against the engine over the whole history, for every game.
"""

from __future__ import annotations

import hashlib
import unicodedata
from dataclasses import dataclass, field, fields
from pathlib import Path

from sqlalchemy import (
    Integer,
    String,
    Text,
    bindparam,
    cast,
    func,
    insert,
    literal,
    literal_column,
    select,
    update,
)
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session, lazyload
from sqlalchemy.sql import Select

from ..errors import ConflictError, JudgeappError
from ..policy import ENGINE_VERSION, Consequence, Level, Policies, Policy, Standing, Step, Tally, standing
from . import live
from .audit import audit, audit_row
from .db import Database, commit, commit_with, run, transient
from .models import Appeal, AuditEntry, Decision, Event, Penalty, Player, Staff, Void, utcnow
from .parsing import clean_text, parse_id, parse_int
from .permissions import check_grant, require


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
_PLAYERS = Player.__table__
_PENALTIES = Penalty.__table__
# Built once: recording runs them on the transaction's connection, without the ORM.
# How many of the player's records have been voided or decided (rows never deleted, so the count only grows):
# part of the kept tally, so that a void or a decision that did not clear it (written by a process still on
# the code before 0005, in a rolling deploy) still sends the next recording to the history. (Not the newest
# ids: on PostgreSQL a lower id can commit after a higher one.) Written out: inside UPDATE … RETURNING,
# SQLAlchemy renders a subquery's columns without their tables, which SQLite then reads as the updated table's.
_CORRECTIONS = literal_column(
    "(SELECT count(*) FROM voids AS cv JOIN penalties AS cp ON cv.penalty_id = cp.id"
    " WHERE cp.player_id = players.id)"
    " + (SELECT count(*) FROM decisions AS cd JOIN appeals AS ca ON cd.appeal_id = ca.id"
    " JOIN penalties AS cp ON ca.penalty_id = cp.id WHERE cp.player_id = players.id)",
    Integer,
)
# The code that keeps the tally is part of its version, with the engine's (policy.ENGINE_VERSION).
_TALLY_CODE = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12]
_BUMP = (
    update(_PLAYERS)
    .where(_PLAYERS.c.id == bindparam("pid"), _PLAYERS.c.event_id == bindparam("eid"))
    .values(penalty_count=func.coalesce(_PLAYERS.c.penalty_count, 0) + 1)
    .returning(
        _PLAYERS.c.penalty_count,
        _PLAYERS.c.number,
        _PLAYERS.c.name,
        _PLAYERS.c.standing_tally,
        _CORRECTIONS,
    )
)
# The player's kept tally (see `TALLY`), written in the recording's transaction (SQLite; PostgreSQL: in the
# statement that inserts the record), and cleared by a void or a decision (the next recording reads the history).
_KEEP = (
    update(_PLAYERS)
    .where(_PLAYERS.c.id == bindparam("tally_player"))
    .values(standing_tally=bindparam("tally", type_=_PLAYERS.c.standing_tally.type))
)
_FORGET = update(_PLAYERS).where(_PLAYERS.c.id == bindparam("pid")).values(standing_tally=None)
_BY_KEY = select(_PENALTIES.c.id).where(
    _PENALTIES.c.judge_id == bindparam("judge"), _PENALTIES.c.idempotency_key == bindparam("key")
)
_INSERT = insert(_PENALTIES).returning(_PENALTIES.c.id)


def _insert_with_audit_and_notify() -> Select:
    """PostgreSQL: the record, its audit row, the player's kept tally and the desks' NOTIFY in one statement
    (one round trip, not four): `WITH p AS (INSERT INTO penalties … RETURNING …), a AS (INSERT INTO audit …
    SELECT … FROM p), t AS (UPDATE players SET standing_tally = … WHERE id = …)
    SELECT p.id, pg_notify(:channel, '{"event": …, "kind": "record", "record": <p.id>}') FROM p`."""
    # bound as r_<column>: an UPDATE in the statement would take a parameter named as a column of its
    # table (players.event_id, created_at) for a SET of its own
    cols = [c for c in _PENALTIES.c if c.name != "id"]
    returned = (_PENALTIES.c.id, _PENALTIES.c.event_id, _PENALTIES.c.judge_id, _PENALTIES.c.created_at)
    p = (
        insert(_PENALTIES)
        .values({c.name: bindparam(f"r_{c.name}", type_=c.type) for c in cols})
        .returning(*returned)
        .cte("p")
    )
    audit_cols = ["event_id", "staff_id", "action", "target", "detail", "created_at"]
    a = (
        insert(AuditEntry.__table__)
        .from_select(
            audit_cols,
            select(
                p.c.event_id,
                p.c.judge_id,
                bindparam("action", type_=String),
                literal("penalty:") + cast(p.c.id, String),
                bindparam("detail", type_=AuditEntry.__table__.c.detail.type),
                p.c.created_at,
            ),
        )
        .cte("a")
    )
    payload = func.json_build_object("event", p.c.event_id, "kind", "record", "record", p.c.id)
    out = select(p.c.id, func.pg_notify(bindparam("channel", type_=String), cast(payload, Text)))
    return out.add_cte(a, _KEEP.returning(_PLAYERS.c.id).cte("t"))


_INSERT_AUDITED = _insert_with_audit_and_notify()


@dataclass(frozen=True)
class HeadJudgeRuling:
    """What the head judge ruled where the text prescribes nothing (a consequence the policies know, such as
    ゲームの敗北, or the head judge's own words, kept in Penalty.ruling): recorded and shown as outside the text,
    never counted as a level (the standing engine never sees it). Only the organizer, or a head judge the
    organizer allowed (grant head-judge-ruling), records one."""

    id: str = "head-judge-ruling"
    label: str = "ヘッドジャッジの判断（規定にない）"
    mark: str = "判"
    description: str = "規定にないヘッドジャッジの判断。累積には数えません。"
    restricted_to: str = "主催者と、主催者が許可したヘッドジャッジ"
    grant: str = "head-judge-ruling"
    citations: tuple = ()


HJ_RULING = HeadJudgeRuling()
UNCOUNTED = (NO_PENALTY.id, HJ_RULING.id)


def effective_level(level: str, void: bool, outcome: str | None, new_level: str | None) -> str | None:
    """The level a record counts with now, or None when it does not count (void, overturned, no penalty)."""
    if void or outcome == "overturn":
        return None
    now = new_level if outcome == "change" else level
    return None if now in UNCOUNTED else now


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
        return self._effective() is not None

    def _effective(self) -> str | None:
        d = self.decision
        return effective_level(
            self.penalty.level, self.void is not None, d.outcome if d else None, d.new_level if d else None
        )

    @property
    def level(self) -> str:
        return self.decision.new_level if self.state == "changed" else self.penalty.level

    @property
    def outside_text(self) -> bool:
        """A head judge's ruling where the text is silent (shown as such, never counted)."""
        return self.level == HJ_RULING.id

    @property
    def level_label(self) -> str:
        return self.decision.new_level_label if self.state == "changed" else self.penalty.level_label

    @property
    def state_label(self) -> str:
        return {
            "void": "無効",
            "overturned": "上告で取消",
            "changed": "上告で変更",
            "appealed": "上告中",
            "active": "有効",
        }[self.state]


@dataclass
class PlayerRecord:
    """A player's records (possibly left out, for a small answer) and the standing they come to."""

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
    decisions = (
        {
            d.appeal_id: d
            for d in s.scalars(
                select(Decision).where(Decision.appeal_id.in_([a.id for a in appeals.values()]))
            )
        }
        if appeals
        else {}
    )
    out = []
    for p in penalties:
        a = appeals.get(p.id)
        out.append(
            RecordView(penalty=p, void=voids.get(p.id), appeal=a, decision=decisions.get(a.id) if a else None)
        )
    return out


_COUNTING = (
    select(Penalty.level, Void.id, Decision.outcome, Decision.new_level)
    .outerjoin(Void, Void.penalty_id == Penalty.id)
    .outerjoin(Appeal, Appeal.penalty_id == Penalty.id)
    .outerjoin(Decision, Decision.appeal_id == Appeal.id)
    .where(Penalty.player_id == bindparam("player_id"))
    .order_by(Penalty.seq)
)


def counting_levels(s: Session, player_id: int) -> list[str]:
    """The levels a player's records count with now, in order: one statement, no record objects."""
    conn = s.connection() if isinstance(s, Session) else s
    rows = conn.execute(_COUNTING, {"player_id": player_id})
    return [lv for lv in (effective_level(a, b is not None, c, d) for a, b, c, d in rows) if lv is not None]


# The tally kept in players.standing_tally: {"v": the policies' and the engine's version, "n": how many of the
# player's records it covers (their count when it was written), "x": how many of them had been voided or
# decided then (`_CORRECTIONS`), "counts", "removed", "removed_text" (policy.Tally), "last": the step of the
# last counted record (what an uncounted record answers, as the history would)}. It is used only when `n` is
# the count before this record, `x` the corrections now and `v` the running version; else the history is read.
TALLY = ("v", "n", "x", "counts", "removed", "removed_text", "last")
_STEP_FIELDS = tuple(f.name for f in fields(Step))


def _kept_tally(kept: object, version: str, n: int, corrections: int) -> tuple[Tally, Step | None] | None:
    if (
        not isinstance(kept, dict)
        or kept.get("v") != version
        or kept.get("n") != n
        or kept.get("x") != corrections
    ):
        return None
    try:
        last = kept.get("last")
        return (
            Tally(
                counts=dict(kept["counts"]), removed=bool(kept["removed"]), removed_text=kept["removed_text"]
            ),
            Step(**last) if last else None,
        )
    except (KeyError, TypeError, ValueError):  # a tally another version of the code wrote: read the history
        return None


def _tally_json(st: Standing, version: str, n: int, last: Step | None, corrections: int) -> dict:
    return {
        "v": version,
        "n": n,
        "x": corrections,
        "counts": st.counts,
        "removed": st.removed,
        "removed_text": st.removed_text,
        # the step's fields as they are (asdict's deep copy is not needed: the tally is written as JSON)
        "last": {k: getattr(last, k) for k in _STEP_FIELDS} if last is not None else None,
    }


def _added(policy: Policy, start: tuple[Tally, Step | None], level: str | None) -> tuple[Standing, bool]:
    """The standing once `level` (None: an uncounted record) is added to a kept tally, and whether the player
    was removed before it. An uncounted record answers the last counted record's step, as the history would."""
    tally, last = start
    st = standing(policy, [level] if level is not None else [], last_steps=1, start=tally)
    if level is None and last is not None:
        st.steps = [last]
    return st, tally.removed


def _record_of(player: Player, views: list[RecordView], st: Standing) -> PlayerRecord:
    return PlayerRecord(
        player=player, records=views, standing=st, upgrades=st.steps[-1].upgrades if st.steps else []
    )


# A record with its void, appeal and decision (each at most one), in one statement.
_WITH_STATE = (
    select(Penalty, Void, Appeal, Decision)
    .outerjoin(Void, Void.penalty_id == Penalty.id)
    .outerjoin(Appeal, Appeal.penalty_id == Penalty.id)
    .outerjoin(Decision, Decision.appeal_id == Appeal.id)
    .options(lazyload(Appeal.penalty))  # the penalty of the same row, from the session
)


# The player page's statement: the player (of the event) with every record and its void, appeal and decision.
# Built once, not at every request (building it and its cache key cost about a fifth of the page's CPU).
_PLAYER_PAGE = (
    select(Player, Penalty, Void, Appeal, Decision)
    .outerjoin(Penalty, Penalty.player_id == Player.id)
    .outerjoin(Void, Void.penalty_id == Penalty.id)
    .outerjoin(Appeal, Appeal.penalty_id == Penalty.id)
    .outerjoin(Decision, Decision.appeal_id == Appeal.id)
    .options(lazyload(Appeal.penalty), lazyload(Penalty.player))  # both come from this row
    .where(Player.id == bindparam("player_id"), Player.event_id == bindparam("event_id"))
    .order_by(Penalty.seq)
)


def player_page_record(db: Database, policy: Policy, event_id: int, player_id: object) -> PlayerRecord:
    """The player (of this event, else 404) with every record as it stands now: one statement."""
    with db.reader() as s:
        rows = s.execute(_PLAYER_PAGE, {"player_id": parse_id(player_id), "event_id": event_id}).all()
        if not rows:
            raise JudgeappError("その選手はこの大会に登録されていません。", 404, "unknown_player")
        player = rows[0][0]
        views = [
            RecordView(penalty=p, void=v, appeal=a, decision=d) for _, p, v, a, d in rows if p is not None
        ]
        for v in views:
            _ = v.penalty.player  # the same Player, from the session (no statement)
    return _record_of(player, views, standing(policy, [v.level for v in views if v.counts]))


def player_record(db: Database, policy: Policy, player: Player) -> PlayerRecord:
    """Every record of the player as it stands now, and the standing (one statement)."""
    with db.reader() as s:
        rows = s.execute(_WITH_STATE.where(Penalty.player_id == player.id).order_by(Penalty.seq))
        views = [RecordView(penalty=p, void=v, appeal=a, decision=d) for p, v, a, d in rows]
    return _record_of(player, views, standing(policy, [v.level for v in views if v.counts]))


def preview(db: Database, policy: Policy, player: Player, level: object) -> tuple[PlayerRecord, Standing]:
    """The player's record now, and the standing once this penalty is added (nothing written)."""
    current = player_record(db, policy, player)
    item = resolve_level(policy, level)
    after = standing(
        policy, [v.level for v in current.records if v.counts] + ([] if item.id in UNCOUNTED else [item.id])
    )
    return current, after


def resolve_level(policy: Policy, level: object) -> Level | Consequence | NoPenalty | HeadJudgeRuling:
    """A level or consequence of the policy (by id or label), or NO_PENALTY; else 400 listing the choices."""
    if not isinstance(level, str):
        level = ""
    if level in (NO_PENALTY.id, NO_PENALTY.label):
        return NO_PENALTY
    if level in (HJ_RULING.id, HJ_RULING.label):
        return HJ_RULING
    item = policy.resolve(level) if level else None
    if item is None:
        names = "、".join([x.label for x in policy.recordable] + [NO_PENALTY.label])
        raise JudgeappError(f"ペナルティを選んでください（{names}）。", 400, "bad_level")
    return item


@dataclass
class NewRecord:
    """What recording answers: the record, and the player's standing after it (not the earlier
    records)."""

    view: RecordView
    player: PlayerRecord
    created: bool = True


def _same_request(
    p: Penalty, player_id: int, rnd: int, level: str, infraction: str | None, facts: str, notes: str
) -> bool:
    def same_text(a: str | None, b: str | None) -> bool:
        # folded: a record saved before facts were kept as written (NFKC then) is the same text
        return unicodedata.normalize("NFKC", a or "") == unicodedata.normalize("NFKC", b or "")

    return (
        (p.player_id, p.round, p.level, p.infraction) == (player_id, rnd, level, infraction)
        and same_text(p.facts, facts)
        and same_text(p.notes, notes)
    )


def parse_record_form(policy: Policy, ev: Event, form: dict) -> dict:
    """The fields of a recording, checked (the page's preview calls it too, so both say the same)."""
    rnd = parse_int(form.get("round"), "ラウンド", 1, ev.rounds)
    item = resolve_level(policy, form.get("level"))
    facts = clean_text(form.get("facts"), "事実（何が起きたか）", 2000, multiline=True)
    notes = clean_text(form.get("notes"), "メモ", 2000, required=False, multiline=True)
    infraction_id = clean_text(form.get("infraction"), "違反", 120, required=False)
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
    if (
        not isinstance(answers, dict)
        or len(answers) > 20
        or not all(isinstance(k, str) and isinstance(v, str) for k, v in answers.items())
    ):
        raise JudgeappError(
            'answers は {"質問": "答え"} の形（20 件まで）で送ってください。', 400, "bad_answers"
        )
    answers = {clean_text(k, "answers", 60): clean_text(v, "answers", 60) for k, v in answers.items()}
    key = form.get("idempotency_key")
    key = clean_text(key, "Idempotency-Key", 80) if key not in (None, "") else None
    ruling = None
    if item is HJ_RULING:  # what the head judge ruled: a consequence's label, or their own words
        raw = form.get("ruling") or form.get("ruling_text")
        ruling = clean_text(raw, "ヘッドジャッジの判断の内容", 300)
        known = policy.consequences.get(ruling)
        ruling = known.label if known is not None else ruling
    return {
        "round": rnd,
        "item": item,
        "facts": facts,
        "notes": notes,
        "infraction": infraction_id or None,
        "citations": citations,
        "answers": answers,
        "key": key,
        "ruling": ruling,
    }


def record_penalty(
    db: Database,
    policies: Policies,
    actor: Staff,
    form: dict,
    corpus_version: str,
    event: Event | None = None,
) -> NewRecord:
    """Record one penalty in one write transaction: lock the player and bump their record count (which gives
    their kept tally; without one, read the levels their records count with), insert the record and its audit
    entry, keep the new tally. A repeated Idempotency-Key with the same fields answers the earlier record;
    with other fields, 422 and nothing written."""
    require(actor, "record")
    ev = event if event is not None and event.id == actor.event_id else _event(db, actor.event_id)
    policy = policies.games[ev.game]
    pid = parse_id(form.get("player"))
    f = parse_record_form(policy, ev, form)
    item = f["item"]
    check_grant(actor, item)
    if item is HJ_RULING:
        require(actor, "ruling")

    channel = live.notify_channel()
    version = f"{policies.version}:{ENGINE_VERSION}:{_TALLY_CODE}"  # the kept tally's: the rules and the code
    counted = item.id not in UNCOUNTED
    action = "ruling.record" if item is HJ_RULING else "penalty.record"
    inf = policy.infractions.get((f["infraction"] or "").rpartition("/")[2])
    # Everything that does not depend on the player's row is made before the transaction: the player's row
    # stays locked for as short a time as the statements allow.
    detail = dict(
        player=pid,
        level=item.label,
        round=f["round"],
        infraction=f["infraction"],
        infraction_name=inf.name if inf else None,
        ruling=f["ruling"],
    )
    fields = dict(
        event_id=ev.id,
        player_id=pid,
        round=f["round"],
        infraction=f["infraction"],
        level=item.id,
        level_label=item.label,
        facts=f["facts"],
        notes=f["notes"],
        citations=f["citations"],
        corpus_version=corpus_version,
        answers=f["answers"],
        judge_id=actor.id,
        idempotency_key=f["key"],
        ruling=f["ruling"],
    )

    def made(rid: int, values: dict, number: str, name: str, st: Standing) -> NewRecord:
        # the answer's objects, never added to a session: made without the ORM's attribute events
        pl = transient(Player, id=pid, event_id=ev.id, number=number, name=name, penalty_count=values["seq"])
        p = transient(Penalty, id=rid, **values, player=pl, judge=actor)
        return NewRecord(RecordView(penalty=p), _record_of(pl, [], st))

    def do(conn: Connection) -> tuple[NewRecord, list]:
        pending: list = []  # the desks' announcements (SQLite: handed over after commit)
        # Lock the player's row and bump their count in one statement (FOR UPDATE's lock, taken by UPDATE on
        # PostgreSQL; on SQLite the transaction began with BEGIN IMMEDIATE); it gives the kept tally too.
        rows = run(conn, _BUMP, {"pid": pid, "eid": ev.id})
        if not rows:
            raise JudgeappError("その選手はこの大会に登録されていません。", 404, "unknown_player")
        seq, number, name, kept, corrections = rows[0]
        if f["key"]:
            done = run(conn, _BY_KEY, {"judge": actor.id, "key": f["key"]})
            if done:
                raise _Replay(done[0][0])  # rolls back the bump; the earlier record is answered below
        start = _kept_tally(kept, version, seq - 1, corrections)
        if start is not None:  # this record added to the tally of the earlier ones (no history read)
            st, before = _added(policy, start, item.id if counted else None)
        else:  # no tally kept (a void, a decision, a new policy, a player from before 0005): the history
            levels = counting_levels(conn, pid)
            st = standing(
                policy, levels + [item.id] if counted else levels, last_steps=2
            )  # this step, the one before
            # The standing before this record is the one after its previous step (removal never comes back by
            # a later step), so the engine runs once.
            before = (st.steps[-2].removed if len(st.steps) > 1 else False) if counted else st.removed
            st.steps = st.steps[-1:]
        tally = _tally_json(st, version, seq, st.steps[-1] if st.steps else None, corrections)
        audited = {**detail, "removed": st.removed, "removed_now": st.removed and not before}
        values = {**fields, "seq": seq, "created_at": utcnow()}
        if channel is not None:  # PostgreSQL: record, audit row, tally and NOTIFY in one statement
            params = {
                **{f"r_{k}": v for k, v in values.items()},
                "action": action,
                "detail": audited,
                "channel": channel,
                "tally_player": pid,
                "tally": tally,
            }
            if before == st.removed:  # no notice to write: the statement goes with the COMMIT
                rid, _ = commit_with(conn, _INSERT_AUDITED, params)
                return made(rid, values, number, name, st), pending
            rid = conn.execute(_INSERT_AUDITED, params).scalar_one()
        else:
            rid = run(conn, _INSERT, values)[0][0]
            audit_row(conn, ev.id, actor, action, f"penalty:{rid}", **audited)
            run(conn, _KEEP, {"tally_player": pid, "tally": tally})
            live.announce_core(conn, pending, ev.id, "record", record=rid)
        live.note_status(conn, ev.id, actor, pid, before, st.removed, action, rid, pending)
        if channel is not None:
            commit(conn)  # see write_core(commits=True) below
        return made(rid, values, number, name, st), pending

    try:
        new, pending = db.write_core(do, commits=channel is not None, replays=bool(f["key"]))
    except _Replay as replay:
        return _replayed(db, policy, replay.penalty_id, pid, f, item)
    live.dispatch_pending(pending)
    return new


class _Replay(Exception):  # noqa: N818 — not an error: the key's record exists
    def __init__(self, penalty_id: int):
        self.penalty_id = penalty_id


def _replayed(
    db: Database,
    policy: Policy,
    penalty_id: int,
    pid: int,
    f: dict,
    item: Level | Consequence | NoPenalty | HeadJudgeRuling,
) -> NewRecord:
    """The record an Idempotency-Key already made, if the request is the same; else 422."""
    db.end_read()
    with db.reader() as s:
        done = s.get(Penalty, penalty_id)
        if not _same_request(done, pid, f["round"], item.id, f["infraction"], f["facts"], f["notes"]):
            raise JudgeappError(
                "この Idempotency-Key は別の内容の記録にすでに使われています。"
                "新しい記録には新しいキーを使ってください。",
                422,
                "idempotency_mismatch",
            )
        view = _views(s, [done])[0]
        levels = counting_levels(s, done.player_id)
        return NewRecord(view, _record_of(done.player, [], standing(policy, levels)), created=False)


def _event(db: Database, event_id: int) -> Event:
    with db.reader() as s:
        ev = s.get(Event, event_id)
    if ev is None:
        raise JudgeappError("その大会はありません。", 404, "unknown_event")
    return ev


def get_record(db: Database, event_id: int, penalty_id: object) -> RecordView:
    with db.reader() as s:
        p = s.get(Penalty, parse_id(penalty_id))
        if p is None or p.event_id != event_id:
            raise JudgeappError("その記録はありません。", 404, "unknown_record")
        return _views(s, [p])[0]


def _hold(s: Session, event_id: int, penalty_id: int) -> RecordView:
    """Lock the record's row for this transaction, then read its state (fresh, after any earlier holder)."""
    if s.scalar(select(Penalty.event_id).where(Penalty.id == penalty_id).with_for_update()) != event_id:
        raise JudgeappError("その記録はありません。", 404, "unknown_record")
    return _views(s, [s.get(Penalty, penalty_id)])[0]


def _forget_tally(s: Session, view: RecordView) -> None:
    """A void or a decision changes what the player's earlier records count with: their kept tally is cleared
    (the next recording reads their history). The UPDATE locks the player's row, so a recording of the same
    player runs wholly before this change (and its tally is cleared here) or wholly after it (and finds none),
    and the standing before and after the change is read with no recording in between."""
    s.execute(_FORGET, {"pid": view.penalty.player_id})


def _removed(s: Session, policy: Policy, player_id: int) -> bool:
    """Whether the player is out of the tournament by their records as this transaction sees them."""
    return standing(policy, counting_levels(s, player_id), last_steps=0).removed


def _note_change(
    s: Session, policy: Policy, actor: Staff, view: RecordView, before: bool, cause: str
) -> None:
    """The head judge's notice when a change to a record (a void, a decision) puts its player out of the
    tournament or back in, written in the change's transaction."""
    player = view.penalty.player_id
    live.note_status(
        s, actor.event_id, actor, player, before, _removed(s, policy, player), cause, view.penalty.id
    )


def _policy_of(event_id: int) -> Policy | None:
    """The event's policy from the running app (None outside one: then no notice is written)."""
    from flask import current_app, has_app_context

    if not has_app_context():
        return None
    with current_app.extensions["judgeapp.db"].reader() as s:
        game = s.scalar(select(Event.game).where(Event.id == event_id))
    return current_app.extensions["judgeapp.library"].policies.games.get(game)


def void_record(db: Database, actor: Staff, penalty_id: object, reason: object) -> Void:
    """The head judge voids a record (the record stays, marked void). Not once it is appealed: the appeal is
    decided instead (overturning it has the same effect), so a void and an appeal can never both land."""
    require(actor, "void")
    pid = parse_id(penalty_id)
    why = clean_text(reason, "無効にする理由", 1000, multiline=True)
    policy = _policy_of(actor.event_id)

    def do(s: Session):
        view = _hold(s, actor.event_id, pid)
        _forget_tally(s, view)
        before = _removed(s, policy, view.penalty.player_id) if policy else False
        if view.void is not None:
            raise ConflictError("この記録はすでに無効です。", code="already_void")
        if view.decision is not None:
            raise ConflictError(
                "上告が裁定された記録です。ヘッドジャッジの裁定は最終決定なので、無効にはできません。",
                code="decided",
            )
        if view.appeal is not None:
            raise ConflictError(
                "上告中の記録です。無効にするのではなく、上告を裁定してください（取消も選べます）。",
                code="appealed",
            )
        v = Void(penalty_id=pid, reason=why, by_id=actor.id)
        s.add(v)
        s.flush()
        audit(s, actor.event_id, actor, "penalty.void", f"penalty:{pid}", reason=why)
        if policy is not None:
            _note_change(s, policy, actor, view, before, "penalty.void")
        live.announce(s, actor.event_id, "void", record=pid)
        return v

    return db.write(do)


def file_appeal(db: Database, actor: Staff, penalty_id: object, grounds: object) -> Appeal:
    """A player's appeal of a floor judge's ruling, as a judge records it. One per ruling; not of a
    void one."""
    require(actor, "appeal")
    pid = parse_id(penalty_id)
    text = clean_text(grounds, "上告の理由", 1000, multiline=True)

    def do(s: Session):
        view = _hold(s, actor.event_id, pid)
        if view.void is not None:
            raise ConflictError("無効になった記録には上告できません。", code="record_void")
        if view.appeal is not None:
            raise ConflictError(
                "この裁定にはすでに上告があります。ヘッドジャッジの裁定は最終決定で、"
                "再度の上告はできません。",
                code="already_appealed",
            )
        a = Appeal(event_id=actor.event_id, penalty_id=pid, grounds=text, recorded_by_id=actor.id)
        s.add(a)
        s.flush()
        audit(s, actor.event_id, actor, "appeal.file", f"penalty:{pid}", appeal=a.id, grounds=text)
        live.announce(s, actor.event_id, "appeal", record=pid)
        return a

    return db.write(do)


def parse_decision(policies: Policies, actor: Staff, game: str, form: dict) -> dict:
    outcome = form.get("outcome")
    if outcome not in ("uphold", "change", "overturn"):
        raise JudgeappError("裁定を選んでください（維持・変更・取消）。", 400, "bad_outcome")
    reason = clean_text(form.get("reason"), "裁定の理由", 1000, multiline=True)
    new_level = new_label = None
    if outcome == "change":
        item = resolve_level(policies.games[game], form.get("level"))
        check_grant(actor, item)
        new_level, new_label = item.id, item.label
    return {"outcome": outcome, "reason": reason, "new_level": new_level, "new_level_label": new_label}


def decide_appeal(db: Database, policies: Policies, actor: Staff, appeal_id: object, form: dict) -> Decision:
    """The head judge's final decision on an appeal (by the appeal's id): uphold, change or overturn."""
    require(actor, "decide")
    with db.reader() as s:
        appeal = s.get(Appeal, parse_id(appeal_id))
        penalty_id = appeal.penalty_id if appeal is not None and appeal.event_id == actor.event_id else None
    if penalty_id is None:
        raise JudgeappError("その上告はありません。", 404, "unknown_appeal")
    return decide_record(db, policies, actor, penalty_id, form)


def decide_record(db: Database, policies: Policies, actor: Staff, penalty_id: object, form: dict) -> Decision:
    """The head judge's final decision on the appeal of a record (by the record's id)."""
    require(actor, "decide")
    ev = _event(db, actor.event_id)
    d = parse_decision(policies, actor, ev.game, form)
    pid = parse_id(penalty_id)

    def do(s: Session):
        view = _hold(s, actor.event_id, pid)
        if view.appeal is None:
            raise ConflictError("この記録には上告がありません。", code="no_appeal")
        if view.void is not None:
            raise ConflictError("この記録は無効になっています。裁定はできません。", code="record_void")
        if view.decision is not None:
            raise ConflictError(
                "この上告はすでに裁定されています。裁定は最終決定です。", code="already_decided"
            )
        policy = policies.games[ev.game]
        _forget_tally(s, view)
        before = _removed(s, policy, view.penalty.player_id)
        row = Decision(appeal_id=view.appeal.id, by_id=actor.id, **d)
        s.add(row)
        s.flush()
        audit(
            s,
            actor.event_id,
            actor,
            "appeal.decide",
            f"penalty:{pid}",
            appeal=view.appeal.id,
            outcome=d["outcome"],
            level=d["new_level_label"],
            reason=d["reason"],
        )
        _note_change(s, policy, actor, view, before, "appeal.decide")
        live.announce(s, actor.event_id, "decision", record=pid)
        return row

    return db.write(do)


# --- the event's view -----------------------------------------------------------------------------------


def event_records(
    db: Database,
    event_id: int,
    player: int | None = None,
    round_: int | None = None,
    judge: int | None = None,
    level: str | None = None,
) -> list[RecordView]:
    """The event's records, filtered; `level` is the level as it stands now (after an appeal's change)."""
    with db.reader() as s:
        stmt = select(Penalty).where(Penalty.event_id == event_id)
        if player:
            stmt = stmt.where(Penalty.player_id == player)
        if round_:
            stmt = stmt.where(Penalty.round == round_)
        if judge:
            stmt = stmt.where(Penalty.judge_id == judge)
        views = _views(s, list(s.scalars(stmt.order_by(Penalty.id))))
    if level:
        views = [v for v in views if v.counts and v.level == level]
    return views


def pending_appeals(db: Database, event_id: int) -> list[RecordView]:
    return [v for v in event_records(db, event_id) if v.state == "appealed"]


def players_over_the_line(
    db: Database, policy: Policy, event_id: int, views: list[RecordView] | None = None
) -> list[PlayerRecord]:
    """Players removed by the rules, or with an upgrade the judge may decide."""
    out = []
    by_player: dict[int, list[RecordView]] = {}
    for v in views if views is not None else event_records(db, event_id):
        by_player.setdefault(v.penalty.player_id, []).append(v)
    for vs in by_player.values():
        vs.sort(key=lambda v: v.penalty.seq)
        st = standing(policy, [v.level for v in vs if v.counts])
        rec = _record_of(vs[0].penalty.player, vs, st)
        if rec.removed or rec.upgrades:
            out.append(rec)
    return sorted(out, key=lambda r: r.player.number)
