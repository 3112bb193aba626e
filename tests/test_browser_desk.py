"""The head judge's desk in a real Chromium (390×844): a removal and an appeal appear without a reload."""

import pytest

pytestmark = pytest.mark.browser


def _desk_open(app, phone, live_server):
    """An event with a head judge signed in on the phone, their desk's stream open; (floor judge, player)."""
    from .test_events import add_player, add_staff, make_event

    org = make_event(app.test_client())
    add_staff(org, "HJ", "head_judge")
    fj = add_staff(org, "FJ", "floor_judge")
    player = add_player(org)
    eid = org.event_id
    phone.goto(f"{live_server}/events/{eid}/signin")
    phone.fill("input[name=name]", "HJ")
    phone.fill("input[name=passcode]", "HJ-passcode-1")
    phone.click("form.stack button[type=submit]")
    phone.wait_for_url(f"**/events/{eid}")
    phone.wait_for_selector("#desk-live[data-live=on]", state="attached", timeout=5000)  # the stream is open
    return fj, player


def test_the_desk_shows_a_removal_and_an_appeal_without_reload(app, phone, live_server):
    from .test_events import record

    fj, player = _desk_open(app, phone, live_server)
    phone.evaluate("window.__notReloaded = true")
    first = record(fj, player, "W").get_json()["record"]["id"]
    record(fj, player, "W")  # Lycee: the second 警告 removes the player
    fj.post(f"/penalties/{first}/appeal", {"grounds": "見ていない"})
    phone.wait_for_selector("text=以後の対戦に出られなくなりました", timeout=2000)
    phone.wait_for_selector("text=裁定を待つ上告（1）", timeout=2000)
    assert phone.evaluate("window.__notReloaded") is True  # the same page: no reload
    assert phone.evaluate("document.documentElement.scrollWidth") <= 390


def test_a_change_made_while_the_desk_reconnects_shows_when_it_is_back(app, phone, live_server):
    """The stream ends now and then (here after 1 s) and the browser reconnects 2 s later: a removal recorded
    in between, announced to no stream, shows once the desk is back (it fetches its live part on `hello`)."""
    from .test_events import record

    app.config["LIVE_STREAM_SECONDS"] = 1
    fj, player = _desk_open(app, phone, live_server)
    # the stream has ended: the browser reconnects in 2 s
    phone.wait_for_selector("#desk-live[data-live=off]", state="attached", timeout=5000)
    record(fj, player, "W")
    record(fj, player, "W")  # Lycee: the second 警告 removes the player
    phone.wait_for_selector("text=以後の対戦に出られなくなりました", timeout=5000)
