"""Deck check: the table of lists, the rule data against the corpus lists, the page and the API."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from judgeapp import ROOT
from judgeapp.corpus import load_corpus
from judgeapp.decks import corpus_list, load_deck_rules

from .conftest import GAMES, load_cases

SHARED_APP = True  # the tests only read: one app for the module (tests/conftest.py)

DECKS = load_cases("decks.yaml")
PAGE_LIMIT = 30 * 1024


def test_deck_table_is_large_enough():
    games = Counter(d["game"] for d in DECKS)
    assert len(DECKS) >= 20 and all(games[g] >= 3 for g in GAMES), games


@pytest.mark.parametrize("row", DECKS, ids=lambda r: r["name"][:60])
def test_deck_table(client, row):
    resp = client.post("/api/decks/check", json={"game": row["game"], "deck": row["deck"]})
    data = resp.get_json()
    if row.get("error"):
        assert resp.status_code == 400 and data["error"]["code"] == "bad_deck" and data["error"]["message"]
        return
    assert resp.status_code == 200, data
    assert data["legal"] is row["legal"], data["problems"]
    assert Counter(p["code"] for p in data["problems"]) == Counter(row["problems"]), data["problems"]
    for p in data["problems"]:
        assert p["citations"] and p["message"]


def test_corpus_lists_are_read_as_card_lists():
    """The lists deck.yaml must mirror (the loader compares them, see the next test), as a judge reads them."""
    corpus = load_corpus(ROOT / "rules_corpus")
    premium = corpus_list(corpus, "dm-senshu/floor-rules/305")
    assert len(premium) >= 19 and "無双竜機ボルバルザーク" in premium
    assert corpus_list(corpus, "tcg-taikai/floor-rules/9b-ii") == ["優しくしてね"]


def test_check_fails_when_data_and_corpus_disagree(tmp_path, broken_infractions):
    corpus = load_corpus(ROOT / "rules_corpus")
    path = broken_infractions / "dm-senshu" / "deck.yaml"
    path.write_text(
        path.read_text(encoding="utf-8").replace("      - ヘル・スラッシュ\n", ""), encoding="utf-8"
    )
    problems: list[str] = []
    load_deck_rules(broken_infractions, corpus, None, problems)
    assert any(
        "differs from the list in dm-senshu/floor-rules/305" in p and "ヘル・スラッシュ" in p
        for p in problems
    )


def test_near_name_is_pointed_out(client):
    deck = "4 ボルバルザーク\n36 その他のカード"
    data = client.post("/api/decks/check", json={"game": "dm-senshu", "deck": deck}).get_json()
    assert any("《無双竜機ボルバルザーク》のことですか" in n for n in data["notices"])


def test_problem_links_to_the_wizard_outcome(client):
    data = client.post("/api/decks/check", json={"game": "ijinden", "deck": "39 カード"}).get_json()
    assert data["problems"][0]["infraction"] == "/wizard/ijinden/deck-construction"


@pytest.mark.parametrize(
    "body, status, code",
    [
        (None, 400, "bad_json"),
        ({"game": "dm-senshu"}, 400, "bad_json"),
        ({"game": 1, "deck": "x"}, 400, "bad_json"),
        ({"game": "mtg", "deck": "4 x"}, 404, "unknown_game"),
    ],
)
def test_api_bad_body(client, body, status, code):
    resp = (
        client.post("/api/decks/check", json=body)
        if body is not None
        else client.post("/api/decks/check", data=b"\x00\x01", content_type="application/json")
    )
    assert resp.status_code == status and resp.get_json()["error"]["code"] == code
    assert resp.get_json()["error"]["message"]


def test_page_without_javascript_shows_verdict_first(app, client):
    app.config["WTF_CSRF_ENABLED"] = False
    html = client.get("/decks?game=dm-senshu").get_data(as_text=True)
    assert not re.search(r"<script(?![^>]*\bsrc=)", html) and 'name="deck"' in html  # no inline script
    resp = client.post("/decks", data={"game": "dm-senshu", "deck": "4 無双竜機ボルバルザーク\n36 カード"})
    html = resp.get_data(as_text=True)
    assert resp.status_code == 200 and len(resp.data) < PAGE_LIMIT
    assert html.index('id="verdict"') < html.index("はデッキに入れられません")
    assert 'href="/rules/dm-senshu/floor-rules/305"' in html
    assert 'href="/wizard/dm-senshu/premium-hall-card"' in html


def test_page_bad_input_is_a_message(app, client):
    app.config["WTF_CSRF_ENABLED"] = False
    resp = client.post("/decks", data={"game": "ijinden", "deck": "1000000 カード"})
    assert resp.status_code == 400 and "枚数は 1 から 99" in resp.get_data(as_text=True)
    big = "\n".join(["1 カード"] * 10000)
    resp = client.post("/decks", data={"game": "ijinden", "deck": big})
    assert resp.status_code == 400 and "長すぎます" in resp.get_data(as_text=True)


def test_page_needs_the_csrf_token(client):
    resp = client.post("/decks", data={"game": "ijinden", "deck": "40 カード"})
    assert resp.status_code == 400
    assert "Traceback" not in resp.get_data(as_text=True)
