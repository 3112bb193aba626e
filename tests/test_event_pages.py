"""The judge's flows through the pages (SQLite): a new event, sign-in with CSRF and throttling, players by
hand, paste and CSV, recording from a wizard outcome with the preview, appeal and decision, refusals,
the page weights, the migration from an empty database, and a server killed mid-request."""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

from sqlalchemy import create_engine, inspect

from judgeapp import ROOT
from judgeapp.events.db import upgrade

from .conftest import form_post

PAGE_LIMIT = 30 * 1024


def new_event(client, game="lycee", **changes):
    data = {
        "name": "ページの大会",
        "game": game,
        "date": "2026-12-01",
        "level": "casual",
        "rounds": "5",
        "organizer": "主催者",
        "passcode": "org-passcode-1",
        **changes,
    }
    resp = form_post(client, "/events/new", data)
    return resp


def event_id_of(client) -> int:
    html = client.get("/events").get_data(as_text=True)
    return int(re.findall(r'href="/events/(\d+)"', html)[0])


def sign_in(client, event_id, name, passcode):
    return form_post(client, f"/events/{event_id}/signin", {"name": name, "passcode": passcode})


def test_empty_event_list_and_new_event_flow(client):
    html = client.get("/events").get_data(as_text=True)
    assert "まだ大会がありません" in html and 'href="/events/new"' in html
    resp = new_event(client)
    eid = event_id_of(client)
    # Post/Redirect/Get: to the event's page, which shows the API token once (and is not kept: no-store)
    assert resp.status_code == 303 and resp.headers["Location"] == f"/events/{eid}"
    first = client.get(f"/events/{eid}")
    html = first.get_data(as_text=True)
    assert "を作りました" in html and 'class="token"' in html and first.headers["Cache-Control"] == "no-store"
    page = client.get(f"/events/{eid}")
    html = page.get_data(as_text=True)
    assert page.status_code == 200 and "ページの大会" in html and 'class="token"' not in html
    assert "を作りました" not in html and page.headers["Cache-Control"] != "no-store"


def test_new_event_bad_input_shows_the_form_again(client):
    resp = new_event(client, rounds="0", name="")
    assert resp.status_code == 400
    html = resp.get_data(as_text=True)
    assert "大会名を入力してください" in html and "Traceback" not in html
    assert "まだ大会がありません" in client.get("/events").get_data(as_text=True)


def test_forms_refuse_a_missing_csrf_token(client):
    resp = client.post("/events/new", data={"name": "x"})
    assert resp.status_code == 400 and "Traceback" not in resp.get_data(as_text=True)


def test_records_are_not_visible_without_sign_in(client):
    new_event(client)
    eid = event_id_of(client)
    client.post(
        "/events/signout",
        data={
            "csrf_token": re.search(
                r'name="csrf_token" value="([^"]+)"', client.get(f"/events/{eid}").get_data(as_text=True)
            ).group(1)
        },
    )
    for url in (
        f"/events/{eid}",
        f"/events/{eid}/players",
        f"/events/{eid}/record",
        f"/events/{eid}/export.csv",
    ):
        resp = client.get(url)
        assert resp.status_code == 302 and "/signin" in resp.headers["Location"], url


def test_sign_in_is_slowed_after_failures(client):
    new_event(client)
    eid = event_id_of(client)
    client.cookie_jar.clear() if hasattr(client, "cookie_jar") else None
    for _ in range(5):  # five free tries from one address
        resp = sign_in(client, eid, "主催者", "wrong-pass")
        assert resp.status_code == 401 and "名前かパスコードが違います" in resp.get_data(as_text=True)
    resp = sign_in(client, eid, "主催者", "org-passcode-1")  # even the right passcode waits now, from here
    assert resp.status_code == 429 and "秒待ってから" in resp.get_data(as_text=True)


def test_record_from_the_wizard_outcome_with_preview_appeal_and_decision(client):
    new_event(client)
    eid = event_id_of(client)
    # The organizer adds a head judge and a floor judge, and a player.
    for name, role in (("主審", "head_judge"), ("フロア", "floor_judge")):
        resp = form_post(
            client,
            f"/events/{eid}/staff",
            {"action": "add", "name": name, "role": role, "passcode": f"{role}-passcode-1"},
        )
        assert resp.status_code == 302
    assert form_post(client, f"/events/{eid}/players", {"number": "007", "name": "鈴木"}).status_code == 302
    # The floor judge signs in, walks the wizard, opens the outcome and records it.
    sign_in(client, eid, "フロア", "floor_judge-passcode-1")
    html = client.get("/wizard/lycee/late-seat").get_data(as_text=True)
    link = re.search(r'href="(/events/\d+/record\?[^"]+)"', html)
    assert link, "the outcome page offers to record it"
    url = link.group(1).replace("&amp;", "&")
    page = client.get(url).get_data(as_text=True)
    pid = re.search(r"player=(\d+)", page).group(1)
    form_url = f"{url}&player={pid}"
    resp = form_post(
        client,
        f"/events/{eid}/record",
        {
            "player": pid,
            "infraction": "lycee/late-seat",
            "round": "2",
            "level": "match-loss",
            "facts": "開始 7 分後に着席",
            "action": "preview",
        },
        page=form_url,
    )
    html = resp.get_data(as_text=True)
    assert resp.status_code == 200 and "記録すると" in html and "この内容で記録する" in html
    resp = form_post(
        client,
        f"/events/{eid}/record",
        {
            "player": pid,
            "infraction": "lycee/late-seat",
            "round": "2",
            "level": "match-loss",
            "facts": "開始 7 分後に着席",
            "action": "confirm",
        },
        page=form_url,
    )
    assert resp.status_code == 302
    player_page = client.get(resp.headers["Location"]).get_data(as_text=True)
    assert "試合の敗北" in player_page and "記録しました" in player_page
    rid = re.search(r'href="/events/\d+/records/(\d+)"', player_page).group(1)
    # The player appeals; the floor judge records it and cannot decide it.
    resp = form_post(
        client,
        f"/events/{eid}/records/{rid}/appeal",
        {"grounds": "時計が違っていた"},
        page=f"/events/{eid}/records/{rid}",
    )
    assert resp.status_code == 302
    resp = form_post(
        client,
        f"/events/{eid}/records/{rid}/decide",
        {"outcome": "overturn", "reason": "x"},
        page=f"/events/{eid}/records/{rid}",
    )
    assert resp.status_code == 403 and "ヘッドジャッジだけ" in resp.get_data(as_text=True)
    # The head judge sees the appeal waiting and decides it.
    sign_in(client, eid, "主審", "head_judge-passcode-1")
    assert "裁定を待つ上告" in client.get(f"/events/{eid}").get_data(as_text=True)
    resp = form_post(
        client,
        f"/events/{eid}/records/{rid}/decide",
        {"outcome": "overturn", "reason": "時計の誤り"},
        page=f"/events/{eid}/records/{rid}",
    )
    assert resp.status_code == 302
    html = client.get(f"/events/{eid}/records/{rid}").get_data(as_text=True)
    assert "取消" in html and "時計の誤り" in html and "試合の敗北" in html  # the original ruling stays
    assert "選手の上告を記録する" not in html  # no second appeal


def test_players_by_paste_and_csv_all_or_nothing(client):
    new_event(client)
    eid = event_id_of(client)
    resp = form_post(
        client, f"/events/{eid}/players", {"mode": "list", "list": "番号,名前\n001,山田\n002,佐藤"}
    )
    assert resp.status_code == 302
    resp = form_post(client, f"/events/{eid}/players", {"mode": "list", "list": "003,田中\n001,重複"})
    assert resp.status_code == 409 and "001" in resp.get_data(as_text=True)
    import io

    csv_bytes = "\ufeff番号,名前\n010,高橋\n011,伊藤\n".encode()
    resp = form_post(
        client,
        f"/events/{eid}/players",
        {"mode": "list", "file": (io.BytesIO(csv_bytes), "p.csv")},
        content_type="multipart/form-data",
    )
    assert resp.status_code == 302
    html = client.get(f"/events/{eid}/players?q=高橋").get_data(as_text=True)
    assert "010 高橋" in html and "田中" not in client.get(f"/events/{eid}/players").get_data(as_text=True)


def test_event_pages_are_small(client):
    new_event(client)
    eid = event_id_of(client)
    form_post(client, f"/events/{eid}/players", {"number": "001", "name": "山田"})
    for url in (
        f"/events/{eid}",
        f"/events/{eid}/players",
        f"/events/{eid}/players/1",
        f"/events/{eid}/record",
        f"/events/{eid}/record?player=1",
        f"/events/{eid}/staff",
        "/events",
        "/events/new",
    ):
        resp = client.get(url)
        assert resp.status_code == 200 and len(resp.data) < PAGE_LIMIT, url


def test_migration_from_an_empty_database(tmp_path):
    url = f"sqlite:///{tmp_path / 'empty.db'}"
    upgrade(url)
    engine = create_engine(url)
    tables = set(inspect(engine).get_table_names())
    assert {
        "events",
        "staff",
        "players",
        "penalties",
        "voids",
        "appeals",
        "decisions",
        "audit",
        "alembic_version",
    } <= tables
    upgrade(url)  # again: nothing to do
    engine.dispose()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_server_killed_mid_request_loses_no_committed_record(tmp_path, index_dir):
    """Records acknowledged (201) before a kill -9 are all there after a restart."""
    port = _free_port()
    env = {
        **os.environ,
        "JUDGEAPP_DATABASE_URL": f"sqlite:///{tmp_path / 'kill.db'}",
        "JUDGEAPP_INDEX_DIR": str(index_dir),
        "JUDGEAPP_SITUATION_INDEX_DIR": str(index_dir.with_name("situations")),
        "JUDGEAPP_SECRET_KEY": "kill-test",
    }
    cmd = [sys.executable, "-m", "judgeapp.cli", "serve", "--port", str(port)]

    def start():
        proc = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(300):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/api/games", timeout=1)
                return proc
            except OSError:
                time.sleep(0.1)
        proc.kill()
        raise AssertionError("the server did not start")

    def call(path, body, token=None):
        req = urllib.request.Request(
            f"http://127.0.0.1:{port}{path}",
            data=json.dumps(body).encode(),
            method="POST",
            headers={
                "Content-Type": "application/json",
                **({"Authorization": f"Bearer {token}"} if token else {}),
            },
        )
        with urllib.request.urlopen(req, timeout=10) as resp:
            return json.loads(resp.read())

    proc = start()
    try:
        created = call(
            "/api/events",
            {
                "name": "停電テスト",
                "game": "lycee",
                "date": "2026-12-01",
                "level": "casual",
                "rounds": 5,
                "organizer": "主催",
                "passcode": "kill-passcode-1",
            },
        )
        eid, token = created["event"]["id"], created["token"]
        player = call(f"/api/events/{eid}/players", {"number": "1", "name": "A"}, token)["results"][0]["id"]
        acknowledged: list[int] = []
        stop = threading.Event()

        def judge():
            while not stop.is_set():
                try:
                    rec = call(
                        f"/api/events/{eid}/penalties",
                        {"player": player, "round": 1, "level": "N", "facts": "連続記録"},
                        token,
                    )
                    acknowledged.append(rec["record"]["id"])
                except (OSError, urllib.error.URLError, ValueError, http.client.HTTPException):
                    return  # the kill cut the answer short (headers sent, body not): not acknowledged

        threads = [threading.Thread(target=judge) for _ in range(4)]
        for t in threads:
            t.start()
        while len(acknowledged) < 15:
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        stop.set()
        for t in threads:
            t.join(15)
    finally:
        if proc.poll() is None:
            proc.kill()
    proc = start()
    try:
        req = urllib.request.Request(
            f"http://127.0.0.1:{port}/api/events/{eid}/penalties",
            headers={"Authorization": f"Bearer {token}"},
        )
        stored = {r["id"] for r in json.loads(urllib.request.urlopen(req, timeout=10).read())["results"]}
    finally:
        proc.terminate()
        proc.wait(10)
    assert set(acknowledged) <= stored
    assert len(acknowledged) >= 15


def test_a_discretionary_upgrade_is_offered_and_the_judge_decides(client):
    new_event(client, game="ijinden")
    eid = event_id_of(client)
    form_post(client, f"/events/{eid}/players", {"number": "001", "name": "山田"})
    base = {
        "player": "1",
        "infraction": "ijinden/slow-play",
        "round": "1",
        "level": "warning",
        "facts": "遅い",
    }
    page = f"/events/{eid}/record?player=1&infraction=ijinden/slow-play"
    assert (
        form_post(client, f"/events/{eid}/record", {**base, "action": "confirm"}, page=page).status_code
        == 302
    )
    html = form_post(
        client, f"/events/{eid}/record", {**base, "round": "2", "action": "preview"}, page=page
    ).get_data(as_text=True)
    assert "【敗北】に格上げして記録する" in html and "【失格】に格上げして記録する" in html
    assert "これまでの記録" in html
    # The organizer may give 敗北 (the text restricts it to the organizer and authorised judges).
    resp = form_post(client, f"/events/{eid}/record", {**base, "round": "2", "upgrade": "defeat"}, page=page)
    assert resp.status_code == 302
    html = client.get(resp.headers["Location"]).get_data(as_text=True)
    assert "敗北" in html and "警告 1" in html


def test_lycee_n_w_n_removes_the_player_through_the_pages(client):
    new_event(client, game="lycee")
    eid = event_id_of(client)
    form_post(client, f"/events/{eid}/players", {"number": "001", "name": "山田"})
    page = f"/events/{eid}/record?player=1"
    for i, level in enumerate(["caution", "warning", "caution"], 1):
        resp = form_post(
            client,
            f"/events/{eid}/record",
            {
                "player": "1",
                "round": str(i),
                "level": level,
                "facts": f"{i} 件目",
                "action": "confirm",
                "idempotency_key": f"k{i}",
            },
            page=page,
        )
        assert resp.status_code == 302
        html = client.get(f"/events/{eid}/players/1").get_data(as_text=True)
        assert ("トーナメントから除外" in html) == (i == 3)
    assert "スコアカード：Ｎ Ｗ Ｎ" in html  # Lycee writes full-width Ｎ/Ｗ on the score card
    assert "トーナメントから除外" in client.get(f"/events/{eid}").get_data(as_text=True)


def test_a_double_tapped_confirm_records_once(client):
    new_event(client)
    eid = event_id_of(client)
    form_post(client, f"/events/{eid}/players", {"number": "001", "name": "山田"})
    page = f"/events/{eid}/record?player=1"
    html = client.get(page).get_data(as_text=True)
    key = re.search(r'name="idempotency_key" value="([^"]+)"', html).group(1)
    data = {
        "player": "1",
        "round": "1",
        "level": "warning",
        "facts": "二度押し",
        "action": "confirm",
        "idempotency_key": key,
    }
    assert form_post(client, f"/events/{eid}/record", data, page=page).status_code == 302
    assert form_post(client, f"/events/{eid}/record", data, page=page).status_code == 302
    html = client.get(f"/events/{eid}/players/1").get_data(as_text=True)
    assert html.count("二度押し") == 1


def test_an_open_case_does_not_preselect_a_penalty(client):
    new_event(client, game="tcg-taikai", level="casual", tier="1")
    eid = event_id_of(client)
    form_post(client, f"/events/{eid}/players", {"number": "001", "name": "山田"})
    html = client.get(f"/events/{eid}/record?player=1&infraction=tcg-taikai/sleeves").get_data(as_text=True)
    assert re.search(r'<option value="" disabled selected>選んでください</option>', html)
    assert "ペナルティなし（記録のみ）" in html


def test_a_stale_form_gets_a_japanese_message(client):
    new_event(client)
    eid = event_id_of(client)
    resp = client.post(f"/events/{eid}/players", data={"csrf_token": "stale", "number": "1", "name": "x"})
    assert resp.status_code == 400 and "読み込み直して" in resp.get_data(as_text=True)


def test_times_are_shown_in_japan_time(client):
    new_event(client)
    eid = event_id_of(client)
    html = client.get(f"/events/{eid}/audit").get_data(as_text=True)
    from datetime import datetime, timedelta, timezone

    now = datetime.now(timezone(timedelta(hours=9))).strftime("%m/%d %H:")
    assert now in html


def test_the_organizer_edits_the_event_from_the_staff_page(client):
    new_event(client)
    eid = event_id_of(client)
    html = client.get(f"/events/{eid}/staff").get_data(as_text=True)
    assert "<title>スタッフ：ページの大会 | judgeapp</title>" in html and "大会の設定" in html
    resp = form_post(
        client,
        f"/events/{eid}/staff",
        {
            "action": "event",
            "name": "ページの大会（決勝）",
            "date": "2026-12-02",
            "level": "casual",
            "rounds": "7",
        },
    )
    assert resp.status_code == 302
    assert "7 ラウンド" in client.get(f"/events/{eid}").get_data(as_text=True)


def test_migrations_run_on_a_database_full_of_records(tmp_path):
    """0001 with an event, staff, a player and penalties (foreign keys everywhere), then up to head."""
    from sqlalchemy import text

    url = f"sqlite:///{tmp_path / 'old.db'}"
    upgrade(url, revision="0001")
    engine = create_engine(url)
    with engine.begin() as c:
        c.execute(
            text(
                "INSERT INTO events (id, name, game, held_on, level, rounds, created_at) "
                "VALUES (1, 'e', 'lycee', '2026-12-01', 'casual', 5, '2026-12-01 00:00:00')"
            )
        )
        c.execute(
            text(
                "INSERT INTO staff (id, event_id, name, role, passcode_hash, grants, failed_signins, created_at) "
                "VALUES (1, 1, 'o', 'organizer', 'x', '[]', 0, '2026-12-01 00:00:00')"
            )
        )
        c.execute(
            text(
                "INSERT INTO players (id, event_id, number, name, created_at) VALUES (1, 1, '1', 'p', '2026-12-01')"
            )
        )
        c.execute(
            text(
                "INSERT INTO penalties (event_id, player_id, seq, round, level, level_label, facts, notes, "
                "citations, corpus_version, answers, judge_id, created_at) VALUES "
                "(1, 1, 1, 1, 'caution', '注意', 'f', '', '[]', 'v', '{}', 1, '2026-12-01 00:00:00')"
            )
        )
    engine.dispose()
    upgrade(url)
    engine = create_engine(url)
    with engine.begin() as c:
        assert c.execute(text("SELECT count(*) FROM penalties")).scalar() == 1
        assert c.execute(text("SELECT active FROM staff")).scalar() in (1, True)
        assert c.execute(text("SELECT penalty_count FROM players")).scalar() == 1  # 0003: from the records
        assert c.execute(text("SELECT session_version FROM staff")).scalar() == 0
        assert c.execute(text("SELECT version_num FROM alembic_version")).scalar() == "0006"
        assert c.execute(text("SELECT current_round FROM events")).scalar() is None  # 0004's new column
        assert c.execute(text("SELECT count(*) FROM notices")).scalar() == 0
        assert c.execute(text("SELECT standing_tally FROM players")).scalar() is None  # 0005: none kept yet
        assert c.execute(text("SELECT count(*) FROM live_notes")).scalar() == 0  # 0006
    engine.dispose()


def test_a_missing_page_of_an_event_leads_back_to_the_event(client):
    """A 404 under an event (a player number typed wrong) offers the event's page, not only the home page."""
    new_event(client)
    eid = event_id_of(client)
    resp = client.get(f"/events/{eid}/players/999")
    assert resp.status_code == 404
    html = resp.get_data(as_text=True)
    assert f'href="/events/{eid}">大会のページへ戻る' in html and 'href="/">ホームへ戻る' in html


def test_the_new_events_api_token_never_rides_in_the_session_cookie(app, client):
    """The session cookie is signed, not encrypted: anyone holding it (the phone's cookie store, a proxy's log)
    reads what it holds, and it lives until the event page is opened. The token shown once must not be in it,
    and the token the page shows is the one that works."""
    from judgeapp.events.models import Staff
    from judgeapp.events.staff import token_hash

    resp = new_event(client)
    assert resp.status_code == 303
    serializer = app.session_interface.get_signing_serializer(app)
    cookies = [
        c for c in resp.headers.getlist("Set-Cookie") if c.startswith(app.config["SESSION_COOKIE_NAME"] + "=")
    ]
    assert cookies
    data = serializer.loads(cookies[-1].split(";", 1)[0].split("=", 1)[1])
    html = client.get(resp.headers["Location"]).get_data(as_text=True)
    token = re.search(r'class="token"[^>]*value="([^"]+)"', html).group(1)
    assert token not in json.dumps(data)
    with app.extensions["judgeapp.db"].reader() as s:
        organizer = s.query(Staff).one()
        assert organizer.token_hash == token_hash(token)
