"""A fifth game by data alone: the made-up game of tests/fixtures/ (docs/add-a-game.md), loaded by every test
app beside the real games, through search, the reading pages, the wizard, the situation lookup, training, the
standing engine, deck check and an event record (on SQLite and PostgreSQL). The parametrized tests of the other
files cover it too (they run over GAMES); this file holds what is particular to it. Expected answers:
tests/cases/fixture_game.yaml."""

from __future__ import annotations

import csv
import io
import re

import pytest

from judgeapp import ROOT
from judgeapp.cli import main as cli

from .conftest import (
    CORPUS_DIRS,
    FIXTURE_GAMES,
    FIXTURE_SOURCES,
    FIXTURES,
    INFRACTIONS_DIRS,
    form_post,
    load_cases,
    make_app,
)
from .test_events import EVENT, add_player, add_staff, make_event, record

SHARED_APP = (
    True  # the tests only read: one app for the module (tests/conftest.py); the event test has its own
)

CASES = load_cases("fixture_game.yaml")
GAME = CASES["game"]
ALONE = ["check", "--corpus", str(CORPUS_DIRS[1]), "--infractions", str(INFRACTIONS_DIRS[1])]


def test_the_fixture_game_is_loaded_beside_the_real_games(client):
    games = [g["id"] for g in client.get("/api/games").get_json()]
    assert GAME in games and GAME in FIXTURE_GAMES and len(games) > 1


def test_no_python_or_template_names_the_fixture_game():
    """Nothing outside its data knows it: no code, template or style mentions its id or its name."""
    names = [GAME, "星屑"]
    for path in [*ROOT.glob("judgeapp/**/*"), *ROOT.glob("templates/**/*"), *ROOT.glob("static/**/*")]:
        if path.is_file() and path.suffix in (".py", ".html", ".css", ".js", ".mako"):
            text = path.read_text(encoding="utf-8")
            assert not [n for n in names if n in text], path


def test_judgeapp_check_passes_on_the_fixture_alone(runner):
    result = runner.invoke(cli, [*ALONE, "--sources", str(FIXTURE_SOURCES)])
    assert result.exit_code == 0, result.output
    assert f"✓ {GAME}:" in result.output and "✓ fidelity:" in result.output


def test_a_changed_character_in_its_source_is_reported(runner, tmp_path):
    src = tmp_path / "sources"
    src.mkdir()
    text = (FIXTURE_SOURCES / "hoshikuzu-floor-rules.txt").read_text(encoding="utf-8")
    (src / "hoshikuzu-floor-rules.txt").write_text(text.replace("10分", "15分"), encoding="utf-8")
    result = runner.invoke(cli, [*ALONE, "--sources", str(src)])
    assert result.exit_code == 1
    assert (
        "hoshikuzu/floor-rules/art3: text not in hoshikuzu-floor-rules.txt: 対戦の開始から10分"
        in result.output
    )


@pytest.mark.parametrize("case", CASES["search"], ids=lambda c: c["q"])
def test_search(library, case):
    hits = library.index.search(case["q"], game=GAME, limit=5).hits
    assert hits and hits[0].id == case["expect"], [h.id for h in hits]


def test_search_across_games_finds_its_card(client):
    data = client.get("/api/search", query_string={"q": "彗星の竜"}).get_json()
    assert data["results"][0]["id"] == "hoshikuzu/floor-rules/art2"


def test_numbers_as_typed_come_from_its_data(library):
    for sid, keys in CASES["numbers"].items():
        assert library.corpus.number_keys(library.corpus.sections[sid]) == keys


def test_a_section_number_as_typed_goes_to_its_section(library):
    hits = library.index.search("第3条", game=GAME, limit=3).hits
    assert hits[0].id == "hoshikuzu/floor-rules/art3"


def test_a_reference_in_the_text_is_linked(client):
    ref = CASES["reference"]
    html = client.get(f"/rules/{ref['from']}").get_data(as_text=True)
    assert f'<a class="xref" href="/rules/{ref["to"]}">{ref["text"]}</a>' in html


@pytest.mark.parametrize("case", CASES["situations"], ids=lambda c: c["q"])
def test_situation_lookup(client, case):
    query = {"game": GAME, "q": case["q"], "limit": 3}
    results = client.get("/api/infractions", query_string=query).get_json()["results"]
    assert results[0]["id"] == f"{GAME}/{case['infraction']}", results
    assert results[0]["penalty"] == case["penalty"], results


@pytest.mark.parametrize("case", CASES["wizard"], ids=lambda c: c["outcome"])
def test_wizard_answers_lead_to_the_outcome(client, case):
    resp = client.get(f"/wizard/{GAME}", query_string=case["answers"])
    assert resp.status_code == 302
    assert resp.headers["Location"].split("?")[0].endswith(f"/wizard/{GAME}/{case['outcome']}")
    html = client.get(resp.headers["Location"]).get_data(as_text=True)
    assert case["penalty"] in html and f'href="/rules/{case["cites"]}"' in html


def test_the_preview_says_the_games_own_words_for_removal(client):
    p = CASES["removed_preview"]
    query = {f"prior.{k}": str(v) for k, v in p["prior"].items()}
    html = client.get(f"/wizard/{GAME}/{p['infraction']}", query_string=query).get_data(as_text=True)
    assert p["says"] in html


def test_training_scores_the_texts_answers_right(client):
    url = client.get(f"/training/{GAME}/start").headers["Location"]
    run = re.search(r"run=([^&]+)", url).group(1).replace("%2C", ",").split(",")
    answers = ",".join(CASES["training"][r] for r in run)
    query = {"run": ",".join(run), "a": answers, "next": 1}
    html = client.get(f"/training/{GAME}", query_string=query).get_data(as_text=True)
    assert f"{len(run)} 問中 {len(run)} 問正解" in html


def test_fixture_holds_only_data():
    assert not [p for p in FIXTURES.rglob("*") if p.suffix == ".py"]


# --- an event record (a database of its own per test, SQLite and PostgreSQL: db_app) -------------------------


def _standing(data: dict) -> dict:
    return {"effective": data["standing"]["effective"], "removed": data["removed"]}


def _expected(case: dict) -> dict:
    return {"effective": case["effective"], "removed": case["removed"]}


def _record_on_the_page(pages, eid: int, player: int, step: dict) -> None:
    """As a floor judge does from the wizard's outcome: the record page with the infraction preselects the
    level the text gives and shows the standing it leads to; the judge confirms."""
    url = f"/events/{eid}/record?player={player}&round=1&infraction={GAME}/{step['infraction']}"
    html = pages.get(url).get_data(as_text=True)
    level = re.search(r'<option value="([^"]*)" selected>', html).group(1)
    assert level == step["page"], html[:2000]
    shown = re.search(r'<section class="standing[^"]*">.*?<strong>(.*?)</strong>', html, re.S).group(1)
    assert all(f"{k} {v}" in shown for k, v in step["effective"].items()), shown
    facts = re.search(r'<textarea name="facts"[^>]*>(.*?)</textarea>', html, re.S).group(1).strip()
    data = {
        "csrf_token": re.search(r'name="csrf_token" value="([^"]+)"', html).group(1),
        "idempotency_key": re.search(r'name="idempotency_key" value="([^"]+)"', html).group(1),
        "player": str(player),
        "round": "1",
        "level": level,
        "infraction": f"{GAME}/{step['infraction']}",
        "facts": facts or "遅刻",
        "action": "confirm",
    }
    resp = pages.post(f"/events/{eid}/record", data=data)
    assert resp.status_code == 302, resp.get_data(as_text=True)[:2000]


def test_an_event_of_the_fixture_game_records_appeals_voids_and_exports(db_app, index_dir, tmp_path):
    case = CASES["event"]
    client = db_app.test_client()
    # Its policy has no `tiers`: an event of it has no tier.
    resp = client.post("/api/events", json={**EVENT, "game": GAME, "tier": 1})
    assert resp.status_code == 400 and resp.get_json()["error"]["code"] == "bad_tier"
    org = make_event(client, game=GAME, name="星屑杯")
    hj, fj = add_staff(org, "HJ", "head_judge"), add_staff(org, "FJ", "floor_judge")
    pages = db_app.test_client()  # the floor judge's phone: signed in on the pages
    resp = form_post(pages, f"/events/{org.event_id}/signin", {"name": "FJ", "passcode": "FJ-passcode-1"})
    assert resp.status_code == 302
    players, ids = {}, []  # number → player id; record ids in the order recorded
    for p in case["players"]:
        pid = players[p["number"]] = add_player(org, p["number"], p["name"])
        for step in p["records"]:
            if "page" in step:
                _record_on_the_page(pages, org.event_id, pid, step)
                data = fj.get(f"/players/{pid}").get_json()
                ids.append(data["records"][-1]["id"])
            else:
                if step.get("by") == "head_judge":  # restricted by the text: the floor judge may not
                    before = fj.get(f"/players/{pid}").get_json()["records"]
                    resp = record(fj, pid, step["level"], infraction=f"{GAME}/{step['infraction']}")
                    assert resp.status_code == 403 and resp.get_json()["error"]["code"] == "not_granted"
                    assert fj.get(f"/players/{pid}").get_json()["records"] == before
                by = hj if step.get("by") == "head_judge" else fj
                resp = record(by, pid, step["level"], infraction=f"{GAME}/{step['infraction']}")
                assert resp.status_code == 201, resp.get_json()
                ids.append(resp.get_json()["record"]["id"])
                data = resp.get_json()["player"]
            assert _standing(data) == _expected(step), (p["number"], step)
            assert data["standing"]["removed_text"] == step.get("removal"), step
    # The head judge sees who is out.
    out = {p["number"] for p in case["players"] if p["records"][-1]["removed"]}
    over = hj.get("").get_json()["players_over_the_line"]
    assert {p["number"] for p in over} == out and all(p["removed"] for p in over)

    # An appeal, decided by the head judge.
    a = case["appeal"]
    rid = ids[a["record"] - 1]
    appeal = fj.post(f"/penalties/{rid}/appeal", {"grounds": "印は前の持ち主のもの"})
    assert appeal.status_code == 201, appeal.get_json()
    done = hj.post(
        f"/appeals/{appeal.get_json()['appeal']['id']}/decision",
        {"outcome": a["outcome"], "level": a["level"], "reason": "本人のものではなかった"},
    )
    assert done.status_code == 201, done.get_json()
    assert done.get_json()["effective_penalty"] == a["level"]
    assert _standing(hj.get(f"/players/{players[a['player']]}").get_json()) == _expected(a)

    # A void: the record stays, and stops counting.
    v = case["void"]
    resp = hj.post(f"/penalties/{ids[v['record'] - 1]}/void", {"reason": "別の選手に記録した"})
    assert resp.status_code == 201, resp.get_json()
    data = hj.get(f"/players/{players[v['player']]}").get_json()
    assert _standing(data) == _expected(v)
    assert len(data["records"]) == len(
        next(p for p in case["players"] if p["number"] == v["player"])["records"]
    )

    # The exports: JSON, CSV, and the JSON read back into a fresh database gives the same standings.
    exported = org.get("/export.json").get_json()
    by_id = {r["id"]: r for r in exported["records"]}
    for row in case["export"]:
        r = by_id[ids[row["record"] - 1]]
        assert (r["state"], r["citations"][0]["section"]) == (row["state"], row["cites"]), r
    standings = {
        s["number"]: {"effective": s["effective"], "removed": s["removed"]} for s in exported["standings"]
    }
    assert standings == case["standings"]
    form_post(
        client, f"/events/{org.event_id}/signin", {"name": EVENT["organizer"], "passcode": EVENT["passcode"]}
    )
    resp = client.get(f"/events/{org.event_id}/export.csv")
    assert resp.status_code == 200
    rows = {int(r["記録ID"]): r for r in csv.DictReader(io.StringIO(resp.data.decode("utf-8-sig")))}
    for row in case["export"]:
        r = rows[ids[row["record"] - 1]]
        got = (r["状態"], r["根拠（条項）"].split()[0], r["記録後に対戦から外れる"])
        assert got == (row["csv_state"], row["cites"], row["out_after"]), r

    from judgeapp.events.exports import import_json

    fresh = make_app(index_dir, f"sqlite:///{tmp_path / 'read-back.db'}")
    try:
        with fresh.app_context():
            library = fresh.extensions["judgeapp.library"]
            ev = import_json(
                fresh.extensions["judgeapp.db"], library.policies, exported, "read-back-passcode"
            )
        back = fresh.test_client()
        token = back.post(
            f"/api/events/{ev.id}/token", json={"name": EVENT["organizer"], "passcode": "read-back-passcode"}
        ).get_json()["token"]
        again = back.get(f"/api/events/{ev.id}/export.json", headers={"Authorization": f"Bearer {token}"})
        assert {
            s["number"]: {"effective": s["effective"], "removed": s["removed"]}
            for s in again.get_json()["standings"]
        } == case["standings"]
    finally:
        fresh.extensions["judgeapp.db"].dispose()
