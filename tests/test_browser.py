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
    phone.fill("textarea[name=facts]", "開始から 7 分後に着席")
    phone.click("button[value=preview]")
    phone.wait_for_selector("text=記録すると")
    assert phone.evaluate("document.documentElement.scrollWidth") <= 390
    phone.screenshot(path=str(tmp_path / "preview.png"), full_page=True)
    phone.click("button[value=confirm]")
    phone.wait_for_selector("text=記録しました")
    assert "試合の敗北" in phone.locator("ol.records").inner_text()
    phone.screenshot(path=str(tmp_path / "player.png"), full_page=True)
