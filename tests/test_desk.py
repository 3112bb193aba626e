"""The head judge's desk and the floor (issue 13): the round set once, tables from a roster, finding a player
by table, notices of removal-status changes, a head judge's ruling where the text is silent, readable records,
exports (CSV for a Japanese spreadsheet, JSON that round-trips) and live updates (in-process on SQLite)."""

from __future__ import annotations

import csv
import io
import re

import pytest

from judgeapp.events import audittext
from judgeapp.events.desk import parse_roster

from .conftest import form_post
from .test_events import EVENT, Api, add_player, add_staff, make_event, record

# --- the roster: number, name, table ------------------------------------------------------------------------

ROSTERS = [  # (text, rows expected)
    (
        "number,name,table\n001,山田太郎,1\n002,佐藤花子,1\n",
        [("001", "山田太郎", "1"), ("002", "佐藤花子", "1")],
    ),
    ("番号\t名前\t卓\n７\t鈴木\t１２\n", [("7", "鈴木", "12")]),  # tab separated, full-width digits
    ("003 高橋 一郎 4\n", [("003", "高橋 一郎", "4")]),  # spaces: the last word is the table when a number
    ("004 田中 花子\n", [("004", "田中 花子", "")]),  # no table
    ('005,"Smith, John",9\n', [("005", "Smith, John", "9")]),  # CSV quoting
]


@pytest.mark.parametrize("text,rows", ROSTERS)
def test_roster_lines_as_tournament_software_exports_them(text, rows):
    assert parse_roster(text) == rows


@pytest.mark.parametrize("text", ["", "001\n", "a\x00b,c\n"])
def test_a_bad_roster_is_refused_in_japanese(text):
    from judgeapp.errors import JudgeappError

    with pytest.raises(JudgeappError) as exc:
        parse_roster(text)
    assert re.search(r"[ぁ-んァ-ン一-龥]", exc.value.message)


# --- audit sentences: a pure function of the rows -------------------------------------------------------------

NAMES = audittext.Names(players={1: "001 山田太郎"}, staff={2: "HJ（ヘッドジャッジ）"})
SENTENCES = [  # (action, target, detail, actor, sentence expected)
    (
        "penalty.record",
        "penalty:5",
        {"player": 1, "level": "警告", "round": 2, "infraction_name": "遅刻"},
        "FJ",
        "FJが001 山田太郎に違反「遅刻」で【警告】を記録しました（第 2 ラウンド、記録 #5）。",
    ),
    (
        "penalty.record",
        "penalty:6",
        {"player": 1, "level": "注意", "round": 3, "removed_now": True},
        "FJ",
        "FJが001 山田太郎に【注意】を記録しました（第 3 ラウンド、記録 #6）。この記録で選手は以後の対戦に出られなくなりました。",
    ),
    ("penalty.void", "penalty:5", {"reason": "重複"}, "HJ", "HJが記録 #5 を無効にしました。理由：「重複」"),
    (
        "appeal.decide",
        "penalty:5",
        {"outcome": "change", "level": "注意", "reason": "軽微"},
        "HJ",
        "HJが記録 #5 への上告を裁定しました：変更（【注意】に）。理由：「軽微」",
    ),
    (
        "staff.grants",
        "staff:2",
        {"after": ["head-judge-ruling"]},
        "主催者",
        "主催者がHJ（ヘッドジャッジ）の権限を「head-judge-ruling」にしました。",
    ),
    (
        "ruling.record",
        "penalty:9",
        {"player": 1, "ruling": "ゲームの敗北", "round": 1},
        "HJ",
        "HJが001 山田太郎にヘッドジャッジの判断（規定にない）として「ゲームの敗北」を記録しました（第 1 ラウンド、記録 #9）。",
    ),
    (
        "event.round",
        "event:1",
        {"before": None, "after": 3},
        "SK",
        "SKが現在のラウンドを第 3 ラウンドにしました（前：なし）。",
    ),
    ("notice.ack", "notice:4", {}, "HJ", "HJが通知 #4 を確認しました。"),
    ("something.new", "x:1", {}, "HJ", "HJ：something.new x:1"),  # unknown: shown, never hidden
]


@pytest.mark.parametrize("action,target,detail,actor,expected", SENTENCES)
def test_audit_rows_read_as_japanese_sentences(action, target, detail, actor, expected):
    assert audittext.sentence(action, target, detail, actor, NAMES) == expected


# --- the floor: round once, table, one field, the preview from the record -------------------------------------


def sign_in(client, event_id, name, passcode):
    resp = form_post(client, f"/events/{event_id}/signin", {"name": name, "passcode": passcode})
    assert resp.status_code == 302, resp.get_data(as_text=True)[:500]


@pytest.fixture
def lycee(app):
    client = app.test_client()
    org = make_event(client)
    hj = add_staff(org, "HJ", "head_judge")
    fj = add_staff(org, "FJ", "floor_judge")
    return client, org, hj, fj


def test_round_and_table_are_entered_once_and_the_record_form_finds_the_player_by_table(lycee):
    client, org, hj, fj = lycee
    eid = org.event_id
    sign_in(client, eid, "HJ", "HJ-passcode-1")
    assert form_post(client, f"/events/{eid}/round", {"round": "3"}, page=f"/events/{eid}").status_code == 302
    resp = form_post(
        client,
        f"/events/{eid}/players",
        {
            "mode": "list",
            "list": "number,name,table\n001,山田太郎,7\n002,佐藤花子,7\n003,鈴木,8",
            "round": "3",
        },
        page=f"/events/{eid}/players",
    )
    assert resp.status_code == 302
    html = client.get(f"/events/{eid}/players").get_data(as_text=True)
    assert "第 3 ラウンド" in html and "卓 7" in html  # the round is shown on every event page
    # A floor judge: the table finds both players at it; a number finds one and goes straight to the form.
    sign_in(client, eid, "FJ", "FJ-passcode-1")
    html = client.get(f"/events/{eid}/record?q=8").get_data(as_text=True)
    assert "003 鈴木" in html and 'name="round"' in html and 'value="3"' in html  # round filled, not typed
    html = client.get(f"/events/{eid}/record?q=7").get_data(as_text=True)
    assert "001 山田太郎" in html and "002 佐藤花子" in html and "003 鈴木" not in html
    html = client.get(f"/events/{eid}/record?q=佐藤").get_data(as_text=True)
    assert "卓 7・002 佐藤花子" in html


def test_a_new_event_is_in_round_1_on_the_floor_before_the_desk_sets_a_round(lycee):
    """An event whose round the desk never set is in round 1, as its page says: the record form's table
    search finds the players seated for round 1 and the round is filled in (found by a judge on a phone)."""
    client, org, hj, fj = lycee
    eid = org.event_id
    sign_in(client, eid, "HJ", "HJ-passcode-1")
    resp = form_post(
        client,
        f"/events/{eid}/players",
        {"mode": "list", "list": "number,name,table\n001,山田太郎,1\n002,佐藤花子,2", "round": "1"},
        page=f"/events/{eid}/players",
    )
    assert resp.status_code == 302
    sign_in(client, eid, "FJ", "FJ-passcode-1")
    for q in ("1", "卓2"):
        html = client.get(f"/events/{eid}/record", query_string={"q": q}).get_data(as_text=True)
        assert "選手が見つかりません" not in html, q
        assert 'name="round"' in html and 'value="1"' in html


def test_a_judges_account_is_kept_as_written(lycee):
    """Facts, notes and reasons keep the judge's characters (a full-width colon stays one); names and numbers
    are folded to be found again."""
    client, org, hj, fj = lycee
    pid = add_player(org, "００１", "ﾀﾅｶ")
    resp = record(fj, pid, "N", facts="オフラインで記録：カードを見せた（２枚）", notes="ﾒﾓ：確認済み")
    assert resp.status_code == 201, resp.get_json()
    rec = resp.get_json()["record"]
    assert rec["facts"] == "オフラインで記録：カードを見せた（２枚）" and rec["notes"] == "ﾒﾓ：確認済み"
    player = fj.get(f"/players/{pid}").get_json()
    assert player["number"] == "001" and player["name"] == "タナカ", player


def test_a_resend_of_a_record_kept_before_facts_were_kept_as_written_is_its_replay(lycee, app):
    """A record saved by the code that folded facts (NFKC), resent with its key after the deploy, is the same
    request: answered by the record, not refused as another body (a review found the 422)."""
    import unicodedata

    from sqlalchemy import update

    from judgeapp.events.models import Penalty

    client, org, hj, fj = lycee
    pid = add_player(org)
    body = {"player": pid, "round": 1, "level": "N", "facts": "ﾃﾞｯｷを１枚落とした（２枚目）"}
    h = {"Authorization": f"Bearer {fj.token}", "Idempotency-Key": "before-nfc"}
    first = client.post(f"/api/events/{org.event_id}/penalties", json=body, headers=h)
    assert first.status_code == 201
    with app.extensions["judgeapp.db"].writing() as s:  # as the code before kept it
        s.execute(update(Penalty).values(facts=unicodedata.normalize("NFKC", body["facts"])))
    again = client.post(f"/api/events/{org.event_id}/penalties", json=body, headers=h)
    assert again.status_code == 200, again.get_json()
    assert again.get_json()["record"]["id"] == first.get_json()["record"]["id"]


def test_from_a_wizard_outcome_the_preview_comes_from_the_players_real_record(lycee):
    client, org, hj, fj = lycee
    eid = org.event_id
    player = add_player(org, "001", "山田太郎")
    record(fj, player, "W")  # an earlier 警告 in this event
    sign_in(client, eid, "HJ", "HJ-passcode-1")
    form_post(client, f"/events/{eid}/round", {"round": "2"}, page=f"/events/{eid}")
    sign_in(client, eid, "FJ", "FJ-passcode-1")
    from .test_wizard import path_to

    policy = client.application.extensions["judgeapp.library"].policies.games["lycee"]
    outcome = client.get("/wizard/lycee/late-seat", query_string=path_to(policy, "late-seat")).get_data(
        as_text=True
    )
    assert 'name="q"' in outcome and f'action="/events/{eid}/record"' in outcome
    # The outcome page's one field → the record page already showing the standing (one tap: confirm).
    hidden = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', outcome))
    html = client.get(f"/events/{eid}/record", query_string={**hidden, "q": "001"}).get_data(as_text=True)
    assert "記録すると" in html and 'value="confirm"' in html
    assert "これまでの記録" in html and "警告" in html  # the earlier record, from the database
    facts = re.search(r'<textarea name="facts"[^>]*>([^<]*)</textarea>', html).group(1)
    assert "→" in facts and "判定：" in facts  # the wizard's path, editable
    assert re.search(r'name="round"[^>]*value="2"', html)


def test_recording_for_a_removed_player_warns_before_saving(lycee):
    client, org, hj, fj = lycee
    eid = org.event_id
    player = add_player(org)
    record(fj, player, "W")
    record(fj, player, "W")  # Lycee: two 警告 remove the player
    sign_in(client, eid, "FJ", "FJ-passcode-1")
    html = client.get(
        f"/events/{eid}/record",
        query_string={"player": player, "round": "3", "level": "caution", "facts": "また"},
    ).get_data(as_text=True)
    assert "すでに以後の対戦に出られない状態です" in html and 'value="confirm"' in html
    assert len(fj.get("/penalties", player=player).get_json()["results"]) == 2  # nothing saved yet


# --- notices: a record, a void and a decision change who is out ------------------------------------------------


def test_every_change_of_removal_status_is_a_notice_the_head_judge_acknowledges(lycee):
    client, org, hj, fj = lycee
    eid = org.event_id
    player = add_player(org)
    record(fj, player, "W")
    second = record(fj, player, "W").get_json()["record"]["id"]  # removed
    sign_in(client, eid, "HJ", "HJ-passcode-1")
    desk = client.get(f"/events/{eid}/desk").get_data(as_text=True)
    assert f"001 山田太郎が記録（記録 #{second}）で以後の対戦に出られなくなりました。" in desk
    assert hj.post(f"/penalties/{second}/void", {"reason": "記録の誤り"}).status_code == 201  # back in
    fj.post(f"/penalties/{second - 1}/appeal", {"grounds": "見ていない"})
    desk = client.get(f"/events/{eid}/desk").get_data(as_text=True)
    assert f"記録の無効（記録 #{second}）で以後の対戦に出られる状態に戻りました" in desk
    assert "裁定を待つ上告（1）" in desk
    notice_ids = re.findall(r"/notices/(\d+)/ack", desk)
    assert len(notice_ids) == 2
    resp = form_post(client, f"/events/{eid}/notices/{notice_ids[0]}/ack", {}, page=f"/events/{eid}")
    assert resp.status_code == 302
    desk = client.get(f"/events/{eid}/desk").get_data(as_text=True)
    assert "確認を待つ通知（1）" in desk and "確認済みの通知（1）" in desk  # acknowledged, not deleted
    # A floor judge cannot acknowledge.
    sign_in(client, eid, "FJ", "FJ-passcode-1")
    resp = form_post(client, f"/events/{eid}/notices/{notice_ids[1]}/ack", {}, page=f"/events/{eid}")
    assert "確認を待つ通知（1）" in client.get(f"/events/{eid}/desk").get_data(as_text=True)
    audit = [e["action"] for e in org.get("/audit").get_json()["results"]]
    assert audit.count("notice.ack") == 1


# --- a head judge's ruling where the text is silent (Duel Masters) --------------------------------------------


def test_duel_masters_game_loss_as_a_head_judges_ruling_outside_the_text(app):
    client = app.test_client()
    org = make_event(client, game="dm-senshu", level="casual")
    hj = add_staff(org, "HJ", "head_judge")
    player = add_player(org)
    body = {
        "player": player,
        "round": 1,
        "level": "head-judge-ruling",
        "facts": "マナゾーンの操作",
        "ruling": "ゲームの敗北",
    }
    refused = hj.post("/penalties", body)
    assert refused.status_code == 403 and "主催者" in refused.get_json()["error"]["message"]
    staff = org.get("").get_json()["staff"]
    hj_id = next(s["id"] for s in staff if s["name"] == "HJ")
    assert (
        org.post(f"/staff/{hj_id}/grants", {"grants": ["head-judge-ruling"]}, method="put").status_code == 200
    )
    made = hj.post("/penalties", body)
    assert made.status_code == 201, made.get_json()
    rid = made.get_json()["record"]["id"]
    assert made.get_json()["player"]["standing"]["effective"] == {}  # never counted as a level
    sign_in(client, org.event_id, "HJ", "HJ-passcode-1")
    for url in (
        f"/events/{org.event_id}/players/{player}",
        f"/events/{org.event_id}/desk",
        f"/events/{org.event_id}/records/{rid}",
    ):
        html = client.get(url).get_data(as_text=True)
        assert "ヘッドジャッジの判断（規定にない）" in html and "ゲームの敗北" in html, url
    rows = list(
        csv.DictReader(io.StringIO(client.get(f"/events/{org.event_id}/export.csv").data.decode("utf-8-sig")))
    )
    assert rows[0]["ペナルティ（記録時）"] == "ヘッドジャッジの判断（規定にない）"
    assert rows[0]["規定にない判断"] == "ゲームの敗北" and rows[0]["記録後の累積"] == "なし"
    data = org.get("/export.json").get_json()
    assert data["records"][0]["outside_text"] is True and data["records"][0]["ruling"] == "ゲームの敗北"


# --- exports ------------------------------------------------------------------------------------------------


def test_csv_opens_in_a_japanese_spreadsheet(lycee):
    client, org, hj, fj = lycee
    player = add_player(org)
    first = record(fj, player, "N", infraction="lycee/double-sleeves").get_json()["record"]["id"]
    record(fj, player, "W")
    fj.post(f"/penalties/{first}/appeal", {"grounds": "=1+1 見間違い"})
    sign_in(client, org.event_id, "HJ", "HJ-passcode-1")
    resp = client.get(f"/events/{org.event_id}/export.csv")
    assert resp.headers["Content-Type"] == "text/csv; charset=utf-8"  # charset once
    assert resp.data.startswith(b"\xef\xbb\xbf")
    text = resp.data.decode("utf-8-sig")
    assert text.count("\r\n") == 3 and "\n" not in text.replace("\r\n", "")  # CRLF, header + 2 rows
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert [r[0] for r in rows].count("記録ID") == 1
    for col in ("違反", "ペナルティ（記録時）", "記録後の累積", "状態", "上告の結果", "根拠（条項）"):
        assert col in rows[0]
    one, two = (dict(zip(rows[0], r, strict=False)) for r in rows[1:])
    assert one["違反"] == "二重スリーブ・不適切なスリーブ"  # the name in infractions/lycee/policy.yaml
    assert one["記録後の累積"] == "注意 1" and one["状態"] == "上告中" and one["上告の結果"] == "裁定待ち"
    assert two["記録後の累積"] == "注意 1・警告 1"
    assert one["根拠（条項）"].count("lycee/guideline/double-sleeves") == 1  # one citation
    assert one["上告"].startswith("'=")  # a formula is neutralised


def _standings(api: Api) -> dict:
    data = api.get("/export.json").get_json()
    return {s["number"]: (s["effective"], s["removed"]) for s in data["standings"]}


def test_json_export_reads_back_into_a_fresh_database_with_the_same_standings(index_dir, tmp_path):
    from judgeapp.events.exports import import_json

    from .conftest import make_app

    source = make_app(index_dir, f"sqlite:///{tmp_path / 'a.db'}")
    client = source.test_client()
    org = make_event(client)
    hj, fj = add_staff(org, "HJ", "head_judge"), add_staff(org, "FJ", "floor_judge")
    a, b, c = add_player(org, "001", "A"), add_player(org, "002", "B"), add_player(org, "003", "C")
    for p, lv in ((a, "N"), (a, "W"), (a, "N"), (b, "W"), (b, "W"), (c, "N")):
        record(fj, p, lv)
    recs = fj.get("/penalties").get_json()["results"]
    hj.post(f"/penalties/{recs[3]['id']}/void", {"reason": "重複"})  # b back under the line
    fj.post(f"/penalties/{recs[5]['id']}/appeal", {"grounds": "違う"})
    appeal_id = hj.get("/appeals").get_json()["results"][0]["appeal"]["id"]
    hj.post(f"/appeals/{appeal_id}/decision", {"outcome": "change", "level": "W", "reason": "重い"})
    data = org.get("/export.json").get_json()
    assert {"event", "staff", "players", "records", "appeals", "standings"} <= set(data)
    assert not any("passcode" in k or "token" in k for st in data["staff"] for k in st)
    expected = {"001": ({"警告": 2}, True), "002": ({"警告": 1}, False), "003": ({"警告": 1}, False)}
    assert _standings(org) == expected

    fresh = make_app(index_dir, f"sqlite:///{tmp_path / 'b.db'}")
    with fresh.app_context():
        ev = import_json(
            fresh.extensions["judgeapp.db"],
            fresh.extensions["judgeapp.library"].policies,
            data,
            "fresh-organizer-pass",
        )
    fc = fresh.test_client()
    resp = fc.post(
        f"/api/events/{ev.id}/token", json={"name": EVENT["organizer"], "passcode": "fresh-organizer-pass"}
    )
    assert resp.status_code == 201
    again = Api(fc, ev.id, resp.get_json()["token"])
    assert _standings(again) == expected
    back = again.get("/export.json").get_json()
    assert [r["state"] for r in back["records"]] == [r["state"] for r in data["records"]]
    # recording goes on after the import: each player's next record follows their last imported one
    players = {p["number"]: p["id"] for p in back["players"]}
    resp = record(again, players["001"], "N")
    assert resp.status_code == 201, resp.get_json()
    assert resp.get_json()["record"]["seq"] == 4
    source.extensions["judgeapp.db"].dispose()
    fresh.extensions["judgeapp.db"].dispose()


def test_printable_pages_show_lycee_marks_as_on_a_score_card(lycee):
    client, org, hj, fj = lycee
    player = add_player(org)
    record(fj, player, "N")
    record(fj, player, "W")
    sign_in(client, org.event_id, "HJ", "HJ-passcode-1")
    html = client.get(f"/events/{org.event_id}/print").get_data(as_text=True)
    assert "スコアカード：Ｎ Ｗ" in html
    css = re.search(r'<link rel="stylesheet" href="([^"]+)"', html).group(
        1
    )  # the print CSS is the app's stylesheet
    assert "@page{size:A4" in client.get(css).get_data(as_text=True)
    html = client.get(f"/events/{org.event_id}/players/{player}?print=1").get_data(as_text=True)
    assert "スコアカード：Ｎ Ｗ" in html and 'class="scorecard"' in html


def test_a_record_reads_as_sentences_with_the_documents_version_and_the_wizard_path(lycee):
    client, org, hj, fj = lycee
    player = add_player(org)
    from .test_wizard import path_to

    policy = client.application.extensions["judgeapp.library"].policies.games["lycee"]
    answers = path_to(policy, "late-seat")
    rid = record(fj, player, "match-loss", infraction="lycee/late-seat", answers=answers).get_json()[
        "record"
    ]["id"]
    sign_in(client, org.event_id, "HJ", "HJ-passcode-1")
    html = client.get(f"/events/{org.event_id}/records/{rid}").get_data(as_text=True)
    assert "版：" in html and "記録したときの規定は、いまの版と同じです" in html
    first = policy.nodes[policy.wizard.start]
    assert first.question in html  # the wizard path as questions and answers
    assert "FJが001 山田太郎に違反「" in html
    audit = client.get(f"/events/{org.event_id}/audit").get_data(as_text=True)
    assert "penalty.record" not in audit and "{&#34;" not in audit and "を記録しました" in audit


# --- live: the in-process hub on SQLite -----------------------------------------------------------------------


def test_on_sqlite_the_desk_stream_hears_a_record_and_an_appeal_after_commit(lycee):
    from judgeapp.events.live import hub_for

    client, org, hj, fj = lycee
    player = add_player(org)
    hub = hub_for(client.application)
    q = hub.subscribe(org.event_id)
    other = hub.subscribe(org.event_id + 1000)
    rid = record(fj, player, "W").get_json()["record"]["id"]
    fj.post(f"/penalties/{rid}/appeal", {"grounds": "見ていない"})
    record(fj, player, "bogus")  # refused: nothing written, nothing announced
    kinds = []
    while not q.empty():
        kinds.append(__import__("json").loads(q.get_nowait())["kind"])
    assert kinds == ["record", "appeal"]
    assert other.empty()
    hub.unsubscribe(org.event_id, q)
