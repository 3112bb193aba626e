"""A judge at a table with a phone: real headless Chromium at 390×844."""

import pytest

pytestmark = pytest.mark.browser


def test_search_tardiness_and_open_the_lycee_hit(phone, live_server, tmp_path):
    phone.goto(live_server + "/")
    assert phone.locator("h1").inner_text() == "どのゲームですか？"
    phone.fill("input[name=q]", "遅刻")
    phone.click("form.search button[type=submit]")
    phone.wait_for_url("**/search?**")
    lycee_hit = phone.locator("ol.results a.title[href='/rules/lycee/guideline/tardiness']")
    assert lycee_hit.count() == 1
    assert "遅刻" in phone.locator("ol.results mark").first.inner_text()
    lycee_hit.click()
    phone.wait_for_url("**/rules/lycee/guideline/tardiness")
    assert phone.locator("h1").inner_text() == "遅刻に関して"
    assert "試合開始後５分以内に着席しないプレイヤー" in phone.locator(".body").inner_text()
    # Nothing sticks out sideways on a phone.
    assert phone.evaluate("document.documentElement.scrollWidth") <= 390
    phone.screenshot(path=str(tmp_path / "section.png"))


def test_wizard_to_an_outcome_in_four_taps_and_open_its_citation(phone, live_server, tmp_path):
    phone.goto(live_server + "/")
    taps = 0
    phone.click("a[href='/wizard/ijinden']")
    taps += 1
    while "/wizard/ijinden/" not in phone.url:
        phone.locator("ul.answers a").first.click()
        taps += 1
        phone.wait_for_load_state()
    assert taps <= 4
    assert phone.locator(".verdict .penalty").inner_text()
    assert phone.evaluate("document.documentElement.scrollWidth") <= 390
    phone.screenshot(path=str(tmp_path / "outcome.png"), full_page=True)
    cite = phone.locator("ul.cites a").first
    href = cite.get_attribute("href")
    cite.click()
    phone.wait_for_url("**" + href)
    assert phone.locator("h1").inner_text()


def test_record_a_penalty_from_the_wizard_on_a_phone(app, phone, live_server, tmp_path):
    """An organizer starts an event, walks the wizard to an outcome, records it against a player and sees the
    standing."""
    from .test_wizard import path_to

    policy = app.extensions["judgeapp.library"].policies.games["lycee"]
    answers = path_to(policy, "late-seat")
    phone.goto(live_server + "/events/new")
    phone.fill("input[name=name]", "ブラウザ大会")
    phone.select_option("select[name=game]", "lycee")
    phone.fill("input[name=date]", "2026-12-01")
    phone.fill("input[name=organizer]", "主催")
    phone.fill("input[name=passcode]", "browser-passcode")
    phone.click("form.stack button[type=submit]")
    phone.wait_for_selector("text=を作りました")
    phone.click("text=選手を登録する")
    phone.fill("input[name=number]", "001")
    phone.fill("input[name=name]", "山田太郎")
    phone.click("form.stack button[type=submit] >> nth=0")
    phone.wait_for_selector("text=1 人を登録しました")
    # The wizard, as the judge would use it: home → Lycee → answers → outcome.
    phone.goto(live_server + "/")
    phone.click("a[href='/wizard/lycee']")
    node = policy.wizard.start
    while node:
        phone.click(f"ul.answers a[href*='{node}={answers[node]}']")
        phone.wait_for_load_state()
        answer = next(a for a in policy.nodes[node].answers if a.id == answers[node])
        node = answer.next
    assert "/wizard/lycee/late-seat" in phone.url
    phone.click("text=この違反を選手に記録する")
    phone.click("ul.choices a >> text=001 山田太郎")
    phone.fill("input[name=round]", "2")
    # The head judge's ruling fields show only once that level is chosen (not on every record).
    ruling, level = phone.locator("fieldset.ruling"), phone.locator("select[name=level]").input_value()
    assert ruling.count() == 1 and not ruling.is_visible()
    phone.select_option("select[name=level]", phone.locator("option.hj-ruling").get_attribute("value"))
    assert ruling.is_visible() and phone.locator("select[name=ruling]").is_visible()
    phone.select_option("select[name=level]", level)
    assert not ruling.is_visible()
    phone.fill("textarea[name=facts]", "開始から 7 分後に着席")
    phone.click("button[value=preview]")
    phone.wait_for_selector("text=記録すると")
    assert phone.evaluate("document.documentElement.scrollWidth") <= 390
    phone.screenshot(path=str(tmp_path / "preview.png"), full_page=True)
    phone.click("button[value=confirm]")
    phone.wait_for_selector("text=記録しました")
    assert "試合の敗北" in phone.locator("ol.records").inner_text()
    phone.screenshot(path=str(tmp_path / "player.png"), full_page=True)


def test_four_taps_from_a_wizard_outcome_to_a_saved_record_on_a_phone(app, phone, live_server, tmp_path):
    """Issue 13: the head judge set the round and the tables came with the roster; on the floor a judge on a
    wizard outcome taps the field, types the table, taps search, taps the player, taps confirm: four taps,
    the round and the table never typed, the preview from the player's real record, the desk showing it."""
    from judgeapp.events import desk

    from .test_events import add_staff, make_event
    from .test_wizard import path_to

    client = app.test_client()
    org = make_event(client)
    add_staff(org, "FJ", "floor_judge")
    hj = add_staff(org, "HJ", "head_judge")
    eid = org.event_id
    db = app.extensions["judgeapp.db"]
    with app.test_request_context():
        from judgeapp.events.staff import acting_staff_by_token

        head = acting_staff_by_token(db, hj.token)
        desk.set_round(db, head, 3)
        desk.import_roster(db, head, desk.parse_roster("001,山田太郎,12\n002,佐藤花子,12\n003,鈴木一郎,13"))
    assert (
        org.post("/penalties", {"player": 1, "round": 1, "level": "W", "facts": "前のラウンド"}).status_code
        == 201
    )

    phone.goto(f"{live_server}/events/{eid}/signin")
    phone.fill("input[name=name]", "FJ")
    phone.fill("input[name=passcode]", "FJ-passcode-1")
    phone.click("form.stack button[type=submit]")
    phone.wait_for_url(f"**/events/{eid}")
    policy = app.extensions["judgeapp.library"].policies.games["lycee"]
    query = "&".join(f"{k}={v}" for k, v in path_to(policy, "late-seat").items())
    phone.goto(f"{live_server}/wizard/lycee/late-seat?{query}")

    taps = 0
    phone.tap("#record-q")
    taps += 1
    phone.keyboard.type("12")
    phone.tap("form.record-pick button[type=submit]")
    taps += 1
    phone.wait_for_url("**/record?**")
    phone.tap("ul.choices a >> text=001 山田太郎")
    taps += 1
    phone.wait_for_selector("text=記録すると")
    assert phone.input_value("input[name=round]") == "3"  # the desk's round, not typed
    standing = phone.locator("section.standing").inner_text()
    assert "これまでの記録" in standing and "警告" in standing  # the earlier record, from the database
    assert phone.evaluate("document.documentElement.scrollWidth") <= 390
    phone.screenshot(path=str(tmp_path / "four-taps-preview.png"), full_page=True)
    # Online, the record being sent is never shown as 「未送信」 on its way (a judge took that for a failure).
    shown: list = []
    phone.expose_function("judgeappQueueShown", lambda: shown.append(True))
    phone.evaluate(
        """() => new MutationObserver(() => {
            if (document.getElementById("record-queue")) window.judgeappQueueShown();
        }).observe(document.body, { childList: true, subtree: true })"""
    )
    phone.tap("button[value=confirm]")
    taps += 1
    phone.wait_for_selector("text=記録しました")
    assert not shown, "the record on its way was shown as 未送信"
    assert taps <= 4
    saved = org.get("/penalties", player=1).get_json()["results"]
    assert len(saved) == 2 and saved[-1]["round"] == 3 and saved[-1]["infraction"] == "lycee/late-seat"
    assert "判定" in saved[-1]["facts"] and "→" in saved[-1]["facts"]  # the wizard path, as filled in


def test_a_reload_after_an_event_form_never_lands_on_an_error_page(app, phone, live_server):
    """Post/Redirect/Get: a form with a mistake comes back with the message, and a reload brings it back again
    (not a bare error page); a made event is its page, which a reload shows again without making another."""
    from sqlalchemy import func, select

    from judgeapp.events.models import Event

    def events() -> int:
        with app.extensions["judgeapp.db"].reader() as s:
            return s.scalar(select(func.count()).select_from(Event))

    def fill(rounds: str) -> None:
        phone.fill("input[name=name]", "再読み込み大会")
        phone.select_option("select[name=game]", "lycee")
        phone.fill("input[name=date]", "2026-12-01")
        phone.fill("input[name=rounds]", rounds)
        phone.fill("input[name=organizer]", "主催")
        phone.fill("input[name=passcode]", "reload-passcode")
        phone.click("form.stack button[type=submit]")

    phone.goto(live_server + "/events/new")
    fill("abc")
    assert "ラウンド数" in phone.locator("main [role=alert]").inner_text()
    resp = phone.reload()
    assert phone.locator("main form.stack").count() == 1, resp.status
    assert "ラウンド数" in phone.locator("main [role=alert]").inner_text()
    assert events() == 0
    fill("5")
    phone.wait_for_selector("text=を作りました")
    assert events() == 1
    with app.extensions["judgeapp.db"].reader() as s:
        event_id = s.scalars(select(Event.id)).one()
    assert phone.url == f"{live_server}/events/{event_id}"
    assert phone.locator("input.token").input_value()
    resp = phone.reload()
    assert resp.status == 200 and phone.locator("h1").inner_text() == "再読み込み大会"
    assert phone.locator("input.token").count() == 0  # the token was shown once
    assert events() == 1
