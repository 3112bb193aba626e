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
