"""Event records, on SQLite and on PostgreSQL: the judge's flows through the API, every refusal, appeals,
the accumulation at every step, concurrent recording, bad input, export and the audit log."""

from __future__ import annotations

import csv
import io
import json
import threading
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest
from sqlalchemy import select

from judgeapp.events.models import Staff

from .conftest import form_post, make_app

EVENT = {
    "name": "テスト大会",
    "game": "lycee",
    "date": "2026-12-01",
    "level": "competitive",
    "rounds": 5,
    "organizer": "主催者A",
    "passcode": "org-passcode-1",
}


class Api:
    """A staff member's view of the API (their token on every request)."""

    def __init__(self, client, event_id: int, token: str | None):
        self.c, self.event_id, self.token = client, event_id, token

    def _h(self):
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    def get(self, path, **params):
        return self.c.get(
            f"/api/events/{self.event_id}{path}", query_string=params or None, headers=self._h()
        )

    def post(self, path, body=None, method="post"):
        return getattr(self.c, method)(f"/api/events/{self.event_id}{path}", json=body, headers=self._h())


def make_event(client, **changes) -> Api:
    resp = client.post("/api/events", json={**EVENT, **changes})
    assert resp.status_code == 201, resp.get_json()
    data = resp.get_json()
    return Api(client, data["event"]["id"], data["token"])


def add_staff(org: Api, name: str, role: str, grants=()) -> Api:
    resp = org.post(
        "/staff", {"name": name, "role": role, "passcode": f"{name}-passcode-1", "grants": list(grants)}
    )
    assert resp.status_code == 201, resp.get_json()
    # The member signs in through the API with their passcode and gets their own token.
    resp = org.c.post(
        f"/api/events/{org.event_id}/token", json={"name": name, "passcode": f"{name}-passcode-1"}
    )
    assert resp.status_code == 201, resp.get_json()
    return Api(org.c, org.event_id, resp.get_json()["token"])


def add_player(org: Api, number="001", name="山田太郎") -> int:
    resp = org.post("/players", {"number": number, "name": name})
    assert resp.status_code == 201, resp.get_json()
    return resp.get_json()["results"][0]["id"]


def record(api: Api, player: int, level: str, **extra):
    return api.post("/penalties", {"player": player, "round": 1, "level": level, "facts": "事実", **extra})


@pytest.fixture
def client(db_app):
    return db_app.test_client()


@pytest.fixture
def event(client):
    org = make_event(client)
    return {
        "org": org,
        "hj": add_staff(org, "HJ", "head_judge"),
        "fj": add_staff(org, "FJ", "floor_judge"),
        "sk": add_staff(org, "SK", "scorekeeper"),
        "player": add_player(org),
    }


# --- accumulation through the API ---------------------------------------------------------------------------


def test_lycee_n_w_n_removes_at_the_third_record(event):
    fj, player = event["fj"], event["player"]
    removed = []
    for level in ("N", "W", "N"):
        resp = record(fj, player, level)
        assert resp.status_code == 201, resp.get_json()
        removed.append(resp.get_json()["player"]["removed"])
    assert removed == [False, False, True]
    data = fj.get(f"/players/{player}").get_json()
    assert data["standing"]["effective"] == {"警告": 2} and data["removed"] is True
    # The head judge sees it.
    over = event["hj"].get("").get_json()["players_over_the_line"]
    assert [p["id"] for p in over] == [player] and over[0]["removed"]


def test_ijinden_repeats_offer_an_upgrade_and_defeat_needs_the_grant(client):
    org = make_event(client, game="ijinden")
    fj = add_staff(org, "FJ", "floor_judge")
    granted = add_staff(org, "FJ2", "floor_judge", grants=["ijinden-defeat"])
    player = add_player(org)
    assert record(fj, player, "警告").status_code == 201
    data = record(fj, player, "警告").get_json()["player"]
    assert data["removed"] is False and data["standing"]["effective"] == {"警告": 2}
    assert data["standing"]["upgrades"] and data["standing"]["upgrades"][0]["automatic"] is False
    refused = record(fj, player, "敗北")
    assert refused.status_code == 403 and refused.get_json()["error"]["code"] == "not_granted"
    assert "主催者" in refused.get_json()["error"]["message"]
    assert record(granted, player, "敗北").status_code == 201
    assert record(org, player, "敗北").status_code == 201  # the organizer may
    assert len(fj.get(f"/players/{player}").get_json()["records"]) == 4  # the refusal wrote nothing


# --- appeals and voids ------------------------------------------------------------------------------------


def test_appeal_is_decided_only_by_the_head_judge_and_only_once(event):
    fj, hj, player = event["fj"], event["hj"], event["player"]
    rid = record(fj, player, "W").get_json()["record"]["id"]
    appeal = fj.post(f"/penalties/{rid}/appeal", {"grounds": "相手が先に間違えた"})
    assert appeal.status_code == 201
    appeal_id = appeal.get_json()["appeal"]["id"]
    second = fj.post(f"/penalties/{rid}/appeal", {"grounds": "もう一度"})
    assert second.status_code == 409 and second.get_json()["error"]["code"] == "already_appealed"
    assert [r["id"] for r in hj.get("/appeals").get_json()["results"]] == [rid]
    refused = fj.post(f"/appeals/{appeal_id}/decision", {"outcome": "overturn", "reason": "x"})
    assert refused.status_code == 403 and "ヘッドジャッジ" in refused.get_json()["error"]["message"]
    refused = event["org"].post(f"/appeals/{appeal_id}/decision", {"outcome": "overturn", "reason": "x"})
    assert refused.status_code == 403
    done = hj.post(f"/appeals/{appeal_id}/decision", {"outcome": "change", "level": "N", "reason": "軽微"})
    assert done.status_code == 201
    rec = done.get_json()
    assert rec["penalty"] == "警告" and rec["effective_penalty"] == "注意" and rec["state"] == "changed"
    again = hj.post(f"/appeals/{appeal_id}/decision", {"outcome": "uphold", "reason": "やはり"})
    assert again.status_code == 409 and again.get_json()["error"]["code"] == "already_decided"
    assert hj.get(f"/players/{player}").get_json()["standing"]["effective"] == {"注意": 1}
    assert hj.get("/appeals").get_json()["results"] == []


def test_overturn_and_void_keep_the_record_and_change_the_standing(event):
    fj, hj, player = event["fj"], event["hj"], event["player"]
    first = record(fj, player, "W").get_json()["record"]["id"]
    second = record(fj, player, "W").get_json()["record"]["id"]
    assert hj.get(f"/players/{player}").get_json()["removed"] is True
    assert fj.post(f"/penalties/{second}/void", {"reason": "別の選手"}).status_code == 403
    assert hj.post(f"/penalties/{second}/void", {"reason": "別の選手に記録した"}).status_code == 201
    assert hj.post(f"/penalties/{second}/void", {"reason": "again"}).status_code == 409
    appeal_id = fj.post(f"/penalties/{first}/appeal", {"grounds": "不服"}).get_json()["appeal"]["id"]
    hj.post(f"/appeals/{appeal_id}/decision", {"outcome": "overturn", "reason": "違反ではなかった"})
    data = hj.get(f"/players/{player}").get_json()
    assert data["removed"] is False and data["standing"]["effective"] == {}
    assert [r["state"] for r in data["records"]] == ["overturned", "void"]
    assert [r["penalty"] for r in data["records"]] == ["警告", "警告"]  # the original rulings stay


# --- permissions and sign-in ---------------------------------------------------------------------------------


def test_passcodes_are_stored_as_scrypt_hashes_unless_set_otherwise(index_dir, tmp_path):
    """The app's default (the test apps set a cheap method: tests/conftest.py): an organizer and a member
    added later are stored as scrypt hashes, and sign-in checks them (an unknown name is refused alike)."""
    app = make_app(index_dir, f"sqlite:///{tmp_path / 'scrypt.db'}", PASSCODE_HASH=None)
    try:
        assert app.config["PASSCODE_HASH"] == "scrypt"
        client = app.test_client()
        org = make_event(client)
        add_staff(org, "FJ", "floor_judge")  # signs in with the passcode (201)
        with app.extensions["judgeapp.db"].reader() as s:
            stored = [row.passcode_hash for row in s.scalars(select(Staff).order_by(Staff.id))]
        assert len(stored) == 2 and all(h.startswith("scrypt:") for h in stored), stored
        for name, passcode in (("FJ", "FJ-passcode-2"), ("誰か", "FJ-passcode-1")):
            resp = client.post(f"/api/events/{org.event_id}/token", json={"name": name, "passcode": passcode})
            assert resp.status_code == 401 and resp.get_json()["error"]["code"] == "bad_signin"
    finally:
        app.extensions["judgeapp.db"].dispose()


def test_a_passcode_hash_werkzeug_does_not_know_stops_the_start(index_dir, tmp_path):
    with pytest.raises(RuntimeError, match="PASSCODE_HASH='scrypt:x'"):
        make_app(index_dir, f"sqlite:///{tmp_path / 'bad.db'}", PASSCODE_HASH="scrypt:x")


def test_the_test_apps_store_the_cheap_method(client, db_app):
    org = make_event(client)
    with db_app.extensions["judgeapp.db"].reader() as s:
        stored = s.scalar(select(Staff.passcode_hash).where(Staff.event_id == org.event_id))
    assert stored.startswith("pbkdf2:sha256:1000$")


def test_nothing_is_visible_without_a_token(event, client):
    anon = Api(client, event["org"].event_id, None)
    for path in (
        "",
        "/players",
        f"/players/{event['player']}",
        "/penalties",
        "/appeals",
        "/audit",
        "/export.json",
    ):
        resp = anon.get(path)
        assert resp.status_code == 401 and resp.get_json()["error"]["message"], path
    bad = Api(client, event["org"].event_id, "not-a-token")
    assert bad.get("/penalties").status_code == 401


def test_roles_are_refused_in_japanese(event):
    sk, fj = event["sk"], event["fj"]
    cases = [
        (record(sk, event["player"], "N"), "ジャッジ"),
        (fj.post("/staff", {"name": "X", "role": "floor_judge", "passcode": "xxxxxxxxxxxxxx"}), "主催者"),
        (fj.get("/audit"), "書き出せる"),
        (fj.get("/export.json"), "書き出せる"),
    ]
    for resp, words in cases:
        assert resp.status_code == 403
        assert words in resp.get_json()["error"]["message"]


def test_a_token_of_another_event_is_refused(client, event):
    other = make_event(client, name="別の大会")
    resp = Api(client, event["org"].event_id, other.token).get("/penalties")
    assert resp.status_code == 403 and resp.get_json()["error"]["code"] == "other_event"


# --- bad input writes nothing --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body,code",
    [
        ({"player": 999999, "round": 1, "level": "N", "facts": "x"}, "unknown_player"),
        ({"player": None, "round": 1, "level": "N", "facts": "x"}, "bad_field"),
        ({"round": 0, "level": "N", "facts": "x"}, "bad_number"),
        ({"round": 6, "level": "N", "facts": "x"}, "bad_number"),
        ({"round": "一", "level": "N", "facts": "x"}, "bad_number"),
        ({"round": 1, "level": "イエロー", "facts": "x"}, "bad_level"),
        ({"round": 1, "level": "N", "facts": ""}, "missing_field"),
        ({"round": 1, "level": "N", "facts": "x" * 2001}, "too_long"),
        ({"round": 1, "level": "N", "facts": "x", "infraction": "lycee/nope"}, "unknown_infraction"),
    ],
)
def test_bad_penalty_input(event, body, code):
    fj = event["fj"]
    body = {"player": event["player"], **body}
    resp = fj.post("/penalties", body)
    assert 400 <= resp.status_code < 500
    err = resp.get_json()["error"]
    assert err["code"] == code and err["message"]
    assert fj.get("/penalties").get_json()["results"] == []


@pytest.mark.parametrize(
    "body",
    [
        {**EVENT, "name": ""},
        {**EVENT, "game": "mtg"},
        {**EVENT, "date": "12/1"},
        {**EVENT, "level": "pro"},
        {**EVENT, "rounds": 0},
        {**EVENT, "tier": 9},
        {**EVENT, "passcode": "123"},
        {**EVENT, "organizer": ""},
    ],
)
def test_bad_event_input(client, body):
    resp = client.post("/api/events", json=body)
    assert resp.status_code == 400 and resp.get_json()["error"]["message"]


def test_bad_json_bodies(event, client):
    org = event["org"]
    resp = client.post(
        f"/api/events/{org.event_id}/penalties",
        data=b"\xff",
        content_type="application/json",
        headers=org._h(),
    )
    assert resp.status_code == 400 and resp.get_json()["error"]["code"] == "bad_json"
    assert org.post("/players", {"players": "x"}).status_code == 400


def test_player_import_is_all_or_nothing(event):
    org = event["org"]
    resp = org.post(
        "/players", {"players": [{"number": "010", "name": "A"}, {"number": "001", "name": "重複"}]}
    )
    assert resp.status_code == 409 and "001" in resp.get_json()["error"]["message"]
    assert len(org.get("/players").get_json()["results"]) == 1
    resp = org.post("/players", {"players": [{"number": "011", "name": "B"}, {"number": "", "name": "C"}]})
    assert resp.status_code == 400 and "2 人目" in resp.get_json()["error"]["message"]
    assert len(org.get("/players").get_json()["results"]) == 1
    found = org.get("/players", q="山田").get_json()["results"]
    assert [p["number"] for p in found] == ["001"]


# --- nothing lost -------------------------------------------------------------------------------------------


def test_twenty_concurrent_records_for_one_player_all_land(db_app):
    """Twenty judges' records at once, over real HTTP to a threaded server: all land, the standing is the
    sequential one (Lycee: 10 N + 10 W → 15 W, removed), and the sequence numbers are 1..20."""
    from werkzeug.serving import make_server

    client = db_app.test_client()
    org = make_event(client)
    judges = [add_staff(org, f"J{i}", "floor_judge") for i in range(20)]
    player = add_player(org)
    server = make_server("127.0.0.1", 0, db_app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{server.server_port}/api/events/{org.event_id}/penalties"
    barrier = threading.Barrier(20)

    def post(i: int) -> int:
        body = json.dumps(
            {"player": player, "round": 1 + i % 5, "level": "N" if i % 2 else "W", "facts": f"同時 {i}"}
        ).encode()
        req = urllib.request.Request(
            base,
            data=body,
            method="POST",
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {judges[i].token}"},
        )
        barrier.wait()
        with urllib.request.urlopen(req, timeout=60) as resp:
            return resp.status

    try:
        with ThreadPoolExecutor(20) as pool:
            statuses = list(pool.map(post, range(20)))
    finally:
        server.shutdown()
        thread.join(5)
    assert statuses == [201] * 20
    data = org.get(f"/players/{player}").get_json()
    assert sorted(r["seq"] for r in data["records"]) == list(range(1, 21))
    assert data["standing"]["counts"] == {"注意": 10, "警告": 10}
    sequential = client.post("/api/policies/lycee/standing", json={"penalties": ["W", "N"] * 10}).get_json()
    assert data["standing"]["effective"] == sequential["effective"] == {"警告": 15}
    assert data["removed"] is True


def test_audit_log_and_exports(event, client):
    fj, hj, org, player = event["fj"], event["hj"], event["org"], event["player"]
    rid = record(fj, player, "N", infraction="lycee/double-sleeves").get_json()["record"]["id"]
    hj.post(f"/penalties/{rid}/void", {"reason": "重複"})
    actions = [e["action"] for e in org.get("/audit").get_json()["results"]]
    for a in ("event.create", "staff.add", "player.add", "penalty.record", "penalty.void"):
        assert a in actions
    data = org.get("/export.json").get_json()
    assert data["records"][0]["citations"][0]["section"] == "lycee/guideline/double-sleeves"
    assert data["records"][0]["state"] == "void"
    form_post(client, f"/events/{org.event_id}/signin", {"name": "主催者A", "passcode": "org-passcode-1"})
    resp = client.get(f"/events/{org.event_id}/export.csv")
    assert resp.status_code == 200 and resp.data.startswith("\ufeff".encode())
    rows = list(csv.reader(io.StringIO(resp.data.decode("utf-8-sig"))))
    row = dict(zip(rows[0], rows[1], strict=False))
    assert rows[0][0] == "記録ID" and row["選手番号"] == "001" and row["状態"] == "無効"


# --- corrections after review: duplicates, grants, open cases, hostile input -----------------------------


def test_a_retry_with_the_same_idempotency_key_records_once(event):
    fj, player = event["fj"], event["player"]
    body = {"player": player, "round": 1, "level": "W", "facts": "再送"}
    first = fj.c.post(
        f"/api/events/{fj.event_id}/penalties", json=body, headers={**fj._h(), "Idempotency-Key": "tap-1"}
    ).get_json()
    again = fj.c.post(
        f"/api/events/{fj.event_id}/penalties", json=body, headers={**fj._h(), "Idempotency-Key": "tap-1"}
    ).get_json()
    assert first["record"]["id"] == again["record"]["id"]
    assert len(fj.get("/penalties").get_json()["results"]) == 1


def test_an_appeal_cannot_give_a_restricted_level_without_the_grant(client):
    org = make_event(client, game="ijinden")
    fj = add_staff(org, "FJ", "floor_judge")
    hj = add_staff(org, "HJ", "head_judge")
    player = add_player(org)
    rid = record(fj, player, "警告").get_json()["record"]["id"]
    appeal_id = fj.post(f"/penalties/{rid}/appeal", {"grounds": "x"}).get_json()["appeal"]["id"]
    resp = hj.post(f"/appeals/{appeal_id}/decision", {"outcome": "change", "level": "敗北", "reason": "悪質"})
    assert resp.status_code == 403 and resp.get_json()["error"]["code"] == "not_granted"
    assert hj.get("/appeals").get_json()["results"]  # still waiting: nothing was written


def test_a_ruling_without_penalty_is_kept_and_not_counted(client):
    org = make_event(client, game="dm-senshu")
    hj = add_staff(org, "HJ", "head_judge")
    player = add_player(org)
    resp = record(hj, player, "no-penalty", infraction="dm-senshu/premium-hall-card")
    assert resp.status_code == 201, resp.get_json()
    assert resp.get_json()["player"]["removed"] is False
    assert resp.get_json()["player"]["standing"]["effective"] == {}
    data = hj.get(f"/players/{player}").get_json()
    assert data["removed"] is False and data["standing"]["effective"] == {}
    assert data["records"][0]["penalty"] == "ペナルティなし"
    assert data["records"][0]["citations"][0]["section"] == "dm-senshu/floor-rules/305"


def test_a_decided_appeal_is_final_and_an_appealed_record_is_decided_not_voided(event):
    fj, hj, player = event["fj"], event["hj"], event["player"]
    rid = record(fj, player, "W").get_json()["record"]["id"]
    appeal_id = fj.post(f"/penalties/{rid}/appeal", {"grounds": "x"}).get_json()["appeal"]["id"]
    hj.post(f"/appeals/{appeal_id}/decision", {"outcome": "uphold", "reason": "維持"})
    resp = hj.post(f"/penalties/{rid}/void", {"reason": "やっぱり"})
    assert resp.status_code == 409 and resp.get_json()["error"]["code"] == "decided"
    rid2 = record(fj, player, "N").get_json()["record"]["id"]
    appeal2 = fj.post(f"/penalties/{rid2}/appeal", {"grounds": "y"}).get_json()["appeal"]["id"]
    # Once appealed, a record is not voided: the appeal is decided (overturning it if need be).
    resp = hj.post(f"/penalties/{rid2}/void", {"reason": "別人"})
    assert resp.status_code == 409 and resp.get_json()["error"]["code"] == "appealed"
    resp = hj.post(f"/appeals/{appeal2}/decision", {"outcome": "overturn", "reason": "z"})
    assert resp.status_code == 201 and resp.get_json()["state"] == "overturned"
    # A void record cannot be appealed, so it cannot be decided either.
    rid3 = record(fj, player, "N").get_json()["record"]["id"]
    assert hj.post(f"/penalties/{rid3}/void", {"reason": "別人"}).status_code == 201
    resp = fj.post(f"/penalties/{rid3}/appeal", {"grounds": "y"})
    assert resp.status_code == 409 and resp.get_json()["error"]["code"] == "record_void"


def test_only_the_member_issues_their_own_token(event):
    org, fj = event["org"], event["fj"]
    staff = {s["name"]: s["id"] for s in org.get("").get_json()["staff"]}
    resp = org.post(f"/staff/{staff['FJ']}/token")
    assert resp.status_code == 403 and "本人だけ" in resp.get_json()["error"]["message"]
    assert fj.post(f"/staff/{staff['FJ']}/token").status_code == 201


def test_the_organizer_corrects_the_event_and_manages_staff(event, client):
    org, fj = event["org"], event["fj"]
    record(fj, event["player"], "N", round=3)
    resp = org.post("", {"rounds": 2}, method="patch")
    assert resp.status_code == 409 and "第 3 ラウンド" in resp.get_json()["error"]["message"]
    assert (
        org.post("", {"rounds": 8, "name": "冬の大会（決勝あり）"}, method="patch").get_json()["rounds"] == 8
    )
    staff = {s["name"]: s["id"] for s in org.get("").get_json()["staff"]}
    assert org.post(f"/staff/{staff['FJ']}", {"active": False}, method="patch").status_code == 200
    assert fj.get("/penalties").status_code == 401  # the disabled member's token is gone
    resp = client.post(f"/api/events/{org.event_id}/token", json={"name": "FJ", "passcode": "FJ-passcode-1"})
    assert resp.status_code == 401
    assert "event.update" in [e["action"] for e in org.get("/audit").get_json()["results"]]


@pytest.mark.parametrize(
    "changes",
    [
        {"game": "lycee", "tier": 2},
        {"game": "tcg-taikai", "tier": 1, "level": "competitive"},
        {"game": "tcg-taikai", "tier": 3, "level": "casual"},
    ],
)
def test_tier_follows_the_text(client, changes):
    resp = client.post("/api/events", json={**EVENT, **changes})
    assert resp.status_code == 400 and resp.get_json()["error"]["code"] == "bad_tier"


def test_grants_are_only_what_the_policy_restricts(client):
    org = make_event(client)  # lycee restricts nothing
    resp = org.post(
        "/staff",
        {"name": "X", "role": "floor_judge", "passcode": "xxxxxxxxxxxxxx", "grants": ["ijinden-defeat"]},
    )
    assert resp.status_code == 400 and resp.get_json()["error"]["code"] == "bad_grant"


@pytest.mark.parametrize(
    "path, status, code",
    [
        ("/players/99999999999999999999", 404, "unknown_player"),
        ("/penalties/99999999999999999999", 404, "unknown_record"),
        ("/penalties?player=99999999999999999999", 400, "bad_filter"),  # a filter value, not a resource
    ],
)
def test_huge_ids_are_not_found_not_errors(event, path, status, code):
    resp = event["org"].get(path)
    assert resp.status_code == status and resp.get_json()["error"]["code"] == code
    assert resp.get_json()["error"]["message"]


def test_huge_ids_in_bodies_and_odd_types(event):
    fj = event["fj"]
    assert record(fj, 10**30, "N").status_code == 404
    resp = fj.post("/penalties", {"player": event["player"], "round": 1, "level": "N", "facts": ["x"]})
    assert resp.status_code == 400 and resp.get_json()["error"]["code"] == "bad_field"
    assert "事実" in resp.get_json()["error"]["message"]
    resp = event["org"].post("/players", {"number": {"a": 1}, "name": "X"})
    assert resp.status_code == 400


def test_lone_surrogates_get_a_message(client):
    body = '{"penalties": ["\\ud800"]}'
    resp = client.post("/api/policies/lycee/standing", data=body, content_type="application/json")
    assert resp.status_code == 400 and resp.get_json()["error"]["message"]
    resp = client.post(
        "/api/decks/check", data='{"game": "ijinden", "deck": "1 \\ud800x"}', content_type="application/json"
    )
    # The broken character is a name like any other: the deck is checked and the card counted.
    assert resp.status_code == 200 and resp.get_json()["cards"] == 1


def test_two_organizers_adding_one_name_at_once_get_201_and_409(db_app):
    """Both pass the name check; the loser's INSERT meets staff_name_unique and is retried, which then sees the
    other's row: 409, never a 500 (PostgreSQL answered 500 before)."""
    org = make_event(db_app.test_client())
    for i in range(6):
        barrier, out = threading.Barrier(2), []

        def add(i=i, barrier=barrier, out=out):
            api = Api(db_app.test_client(), org.event_id, org.token)
            barrier.wait()
            body = {"name": f"同名{i}", "role": "floor_judge", "passcode": "floor-passcode-1", "grants": []}
            out.append(api.post("/staff", body).status_code)

        threads = [threading.Thread(target=add) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(out) == [201, 409], out
