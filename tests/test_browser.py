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
