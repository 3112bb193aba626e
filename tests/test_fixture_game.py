"""A fifth game by data alone: the made-up game of tests/fixtures/ (docs/add-a-game.md), loaded by every test
app beside the real games, through search, the reading pages, the wizard, the situation lookup, training, the
standing engine and deck check. The parametrized tests of the other files cover it too (they run over GAMES);
this file holds what is particular to it. Expected answers: tests/cases/fixture_game.yaml."""

from __future__ import annotations

import re

import pytest

from judgeapp import ROOT
from judgeapp.cli import main as cli

from .conftest import CORPUS_DIRS, FIXTURE_GAMES, FIXTURE_SOURCES, FIXTURES, INFRACTIONS_DIRS, load_cases

SHARED_APP = True  # the tests only read: one app for the module (tests/conftest.py)

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
