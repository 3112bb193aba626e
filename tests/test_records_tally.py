"""The standing tally kept with each player (players.standing_tally): recording adds one penalty to it instead
of reading the player's history, and what it answers is always what the standing engine says over the whole
history — for every game's policy (Lycee's 2 注意 = 1 警告 and 2 警告 = removal included), through voids, appeals
and decisions (upheld, changed, overturned), uncounted records, upgrades on offer, a new policy version and a
player from before the tally — on SQLite and PostgreSQL."""

from __future__ import annotations

import contextlib
import random

import pytest
from sqlalchemy import select, update

from judgeapp.events.models import Player
from judgeapp.policy import standing

from .test_events import EVENT, Api, add_player, add_staff, record
from .test_records_trust import _watch


@pytest.fixture
def client(db_app):
    return db_app.test_client()


def _event(client, game: str) -> dict:
    resp = client.post("/api/events", json={**EVENT, "game": game})
    assert resp.status_code == 201, resp.get_json()
    data = resp.get_json()
    org = Api(client, data["event"]["id"], data["token"])
    ids = [x.id for x in client.application.extensions["judgeapp.library"].policies.games[game].recordable]
    grants = sorted({g for g in (getattr(x, "grant", None) for x in _items(client, game)) if g})
    return {
        "org": org,
        "hj": add_staff(org, "HJ", "head_judge", grants=grants),
        "fj": add_staff(org, "FJ", "floor_judge"),
        "players": [add_player(org, f"{i:03d}", f"選手{i}") for i in range(1, 4)],
        "ids": ids,
    }


def _items(client, game):
    return client.application.extensions["judgeapp.library"].policies.games[game].recordable


def _history_standing(client, ev, game, pid) -> dict:
    """The engine over the player's whole history, as the player's page reads it."""
    data = ev["org"].get(f"/players/{pid}").get_json()
    policy = client.application.extensions["judgeapp.library"].policies.games[game]
    levels = []
    for r in sorted(data["records"], key=lambda r: r["seq"]):
        if r["effective_penalty"] is not None:
            levels.append(
                r["level"] if r["state"] != "changed" else policy.resolve(r["effective_penalty"]).id
            )
    whole = standing(policy, levels)
    assert data["standing"]["effective"] == whole.effective and data["removed"] == whole.removed
    return data["standing"]


def _same_as_history(answer: dict, history: dict) -> None:
    got = answer["player"]["standing"]
    for key in ("counts", "effective", "removed", "removed_text", "notes"):
        assert got[key] == history[key], key
    assert got["steps"] == history["steps"][-1:]
    assert got["upgrades"] == (history["steps"][-1]["upgrades"] if history["steps"] else [])
    assert answer["player"]["removed"] == history["removed"]


def _history_reads(seen: dict) -> int:
    """The statements that read a player's records with their voids (the history), among those seen."""
    return sum(1 for s in seen["statements"] if s.lstrip().upper().startswith("SELECT") and "voids" in s)


GAMES = ["lycee", "ijinden", "dm-senshu", "tcg-taikai"]


@pytest.mark.parametrize("game", GAMES)
def test_the_kept_tally_answers_what_the_whole_history_comes_to(client, db_app, game):
    ev = _event(client, game)
    if not ev["ids"]:
        pytest.skip("nothing to record in this game")
    rng = random.Random(f"tally-{game}")
    records: dict[int, list[int]] = {p: [] for p in ev["players"]}
    appealed: list[int] = []
    for _ in range(60):
        pid = rng.choice(ev["players"])
        op = rng.random()
        if op < 0.12 and records[pid]:
            resp = ev["hj"].post(f"/penalties/{rng.choice(records[pid])}/void", {"reason": "誤記"})
            assert resp.status_code in (201, 409)
            continue
        if op < 0.22 and records[pid]:
            rid = rng.choice(records[pid])
            resp = ev["fj"].post(f"/penalties/{rid}/appeal", {"grounds": "異議"})
            assert resp.status_code in (201, 409)
            if resp.status_code == 201:
                appealed.append(resp.get_json()["appeal"]["id"])
            continue
        if op < 0.32 and appealed:
            outcome = rng.choice(["uphold", "change", "overturn"])
            body = {"outcome": outcome, "reason": "裁定"}
            if outcome == "change":
                body["level"] = rng.choice(ev["ids"])
            resp = ev["hj"].post(f"/appeals/{appealed.pop(rng.randrange(len(appealed)))}/decision", body)
            assert resp.status_code in (201, 403, 409), resp.get_json()
            continue
        level = rng.choice(ev["ids"] + ["no-penalty"])
        resp = record(ev["hj"], pid, level)
        if resp.status_code == 403:  # a level the head judge may not give (the text names who may)
            continue
        assert resp.status_code == 201, resp.get_json()
        records[pid].append(resp.get_json()["record"]["id"])
        _same_as_history(resp.get_json(), _history_standing(client, ev, game, pid))


def test_after_a_void_the_history_is_read_once_then_the_tally_again(client, db_app):
    ev = _event(client, "lycee")
    pid, hj = ev["players"][0], ev["hj"]
    first = record(hj, pid, "W").get_json()["record"]["id"]
    record(hj, pid, "N")
    assert hj.post(f"/penalties/{first}/void", {"reason": "誤記"}).status_code == 201

    def statements(level):
        seen = _watch(db_app)
        resp = record(hj, pid, level)
        assert resp.status_code == 201
        return resp.get_json(), _history_reads(seen)

    answer, reads = statements("N")  # the void cleared the tally: the history (W void, N, N) is read
    assert reads == 1 and answer["player"]["standing"]["effective"] == {"警告": 1}
    answer, reads = statements("W")  # kept again: no history read, and removal at 2 警告
    assert reads == 0 and answer["player"]["removed"] is True
    _same_as_history(answer, _history_standing(client, ev, "lycee", pid))


@pytest.mark.parametrize(
    "stale", ["other-version", "other-count", "none", "void-not-cleared", "unreadable", "before-x"]
)
def test_a_tally_of_another_policy_version_or_count_is_not_used(client, db_app, stale):
    """A new policy version or engine (a deploy), a count that does not match, a player from before 0005 (no
    tally), a void that left the tally as it was (written by a process still on the code before 0005, in a
    rolling deploy), a tally another version of the code wrote: the history is read, and the answer is still
    the engine's over it."""
    from judgeapp.events.models import Penalty, Staff, Void

    ev = _event(client, "lycee")
    pid, hj = ev["players"][0], ev["hj"]
    for level in ("N", "N", "W"):
        record(hj, pid, level)
    db = db_app.extensions["judgeapp.db"]
    with db.writing() as s:
        kept = s.scalar(select(Player.standing_tally).where(Player.id == pid))
        assert kept["n"] == 3 and kept["counts"] == {"注意": 2, "警告": 1} and "x" in kept
        if stale == "other-version":
            kept = {**kept, "v": "old", "counts": {"注意": 0}}
        elif stale == "other-count":
            kept = {**kept, "n": 2, "counts": {"注意": 0}}
        elif stale == "void-not-cleared":  # the 警告 voided as the code before 0005 voids: the tally stays
            w = s.scalar(select(Penalty.id).where(Penalty.player_id == pid, Penalty.seq == 3))
            by = s.scalar(select(Staff.id).where(Staff.event_id == hj.event_id, Staff.name == "HJ"))
            s.add(Void(penalty_id=w, reason="別の選手", by_id=by))
        elif stale == "unreadable":
            kept = {**kept, "last": {"no such field": 1}}
        elif stale == "before-x":
            kept = {k: v for k, v in kept.items() if k != "x"}
        else:
            kept = None
        s.execute(update(Player).where(Player.id == pid).values(standing_tally=kept))
    seen = _watch(db_app)
    resp = record(hj, pid, "N")
    assert resp.status_code == 201
    assert _history_reads(seen) == 1
    answer = resp.get_json()
    if stale == "void-not-cleared":  # 注意 3 = 警告 1 (+ 注意 1): not removed
        assert answer["player"]["removed"] is False
    else:
        assert answer["player"]["removed"] is True  # 注意 3 + 警告 1 = 警告 2 (+ 注意 1)
    _same_as_history(answer, _history_standing(client, ev, "lycee", pid))


@pytest.mark.parametrize("in_request", [False, True])
def test_a_statement_sent_with_its_commit_that_fails_leaves_nothing_and_the_connection_usable(
    client, db_app, in_request
):
    """`commit_with` (PostgreSQL: the statement and COMMIT in one round trip): a statement that fails rolls
    the whole transaction back, the error is SQLAlchemy's, and the next recording works."""
    from sqlalchemy import func, insert
    from sqlalchemy.exc import IntegrityError

    from judgeapp.events.db import commit_with

    ev = _event(client, "lycee")
    db = db_app.extensions["judgeapp.db"]
    eid = ev["org"].event_id

    def two_players_of_one_number(conn):
        conn.execute(insert(Player).values(event_id=eid, number="X1", name="a", penalty_count=0))
        return commit_with(
            conn,
            insert(Player).values(event_id=eid, number="X1", name="b", penalty_count=0).returning(Player.id),
            {},
        )

    with db_app.test_request_context(), db.unit() if in_request else contextlib.nullcontext():
        with pytest.raises(IntegrityError):
            db.write_core(two_players_of_one_number, commits=True)
        with db.reader() as s:
            assert s.scalar(select(func.count()).select_from(Player).where(Player.number == "X1")) == 0
    resp = record(ev["hj"], ev["players"][0], "N")
    assert resp.status_code == 201 and resp.get_json()["record"]["seq"] == 1


def _lost_commit_setup(client, db_app):
    """A PostgreSQL Lycee event whose first player has one 警告, and a hook that drops the connection right after
    the next COMMIT landed (as a statement, or with its statement in a pipeline): (event, player, db, armed,
    lost_pipeline, lost_commit)."""
    import psycopg

    db = db_app.extensions["judgeapp.db"]
    if db.is_sqlite:
        pytest.skip("PostgreSQL: the COMMIT sent by the recording itself")
    e = _event(client, "lycee")
    pid = e["players"][0]
    assert record(e["hj"], pid, "W").status_code == 201
    armed = {"on": True}
    real = psycopg.Connection.pipeline

    @contextlib.contextmanager
    def lost_pipeline(self):
        with real(self) as p:
            yield p
        if armed["on"]:  # the statement and COMMIT were sent and answered: the connection goes now
            armed["on"] = False
            self.close()
            raise psycopg.OperationalError("server closed the connection unexpectedly")

    def lost_commit(conn, cursor, statement, params, context, executemany):
        if armed["on"] and statement.strip().upper() == "COMMIT":
            armed["on"] = False
            conn.connection.dbapi_connection.close()
            raise psycopg.OperationalError("server closed the connection unexpectedly")

    return e, pid, db, armed, lost_pipeline, lost_commit


def _records_of(db, pid) -> int:
    from sqlalchemy import func

    from judgeapp.events.models import Penalty

    with db.writing() as s:
        return s.scalar(select(func.count()).select_from(Penalty).where(Penalty.player_id == pid))


@pytest.mark.parametrize("level", ["W", "N"])
def test_a_connection_lost_after_its_commit_is_never_recorded_twice(client, db_app, level):
    """A recording whose COMMIT went out (PostgreSQL: sent by the transaction's own code, `commit` or
    `commit_with`) and whose connection is then lost is not retried: the commit may have landed, and a retry
    would record the penalty a second time. The second 警告 of a Lycee player is the removal (the COMMIT as its
    own statement), the 注意 goes with its statement in one round trip."""
    import psycopg
    from sqlalchemy import event

    e, pid, db, armed, lost_pipeline, lost_commit = _lost_commit_setup(client, db_app)
    real = psycopg.Connection.pipeline
    event.listen(db.engine, "after_cursor_execute", lost_commit)
    psycopg.Connection.pipeline = lost_pipeline
    try:
        resp = record(e["hj"], pid, level)
    finally:
        psycopg.Connection.pipeline = real
        event.remove(db.engine, "after_cursor_execute", lost_commit)
    assert not armed["on"], "the connection was not lost where the test meant"
    assert resp.status_code >= 500
    assert _records_of(db, pid) == 2, "2 records for 2 recordings"
    assert record(e["hj"], pid, "N").status_code == 201  # the next recording goes on


def test_a_connection_lost_during_a_keyed_commit_is_answered_by_the_record_that_landed(client, db_app):
    """With an Idempotency-Key (the record form always sends one) the retry is safe: it finds the record that
    landed by its key and answers it, once (a review found the judge got a 500 there)."""
    from sqlalchemy import event

    e, pid, db, armed, _, lost_commit = _lost_commit_setup(client, db_app)
    event.listen(db.engine, "after_cursor_execute", lost_commit)
    try:  # the second 警告: removal, the COMMIT as its own statement
        resp = client.post(
            f"/api/events/{e['hj'].event_id}/penalties",
            json={"player": pid, "round": 1, "level": "W", "facts": "二度目"},
            headers={"Authorization": f"Bearer {e['hj'].token}", "Idempotency-Key": "lost-1"},
        )
    finally:
        event.remove(db.engine, "after_cursor_execute", lost_commit)
    assert not armed["on"]
    assert resp.status_code == 200, resp.get_json()  # the replay of the record that landed
    assert resp.get_json()["player"]["removed"] is True
    assert _records_of(db, pid) == 2
