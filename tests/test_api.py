"""The JSON API contract (../shared/PRODUCT.md): field names, types, errors."""

from __future__ import annotations

import re

import pytest

from .conftest import GAMES

SHARED_APP = True  # the tests only read: one app for the module (tests/conftest.py)


def test_games(client):
    resp = client.get("/api/games")
    assert resp.status_code == 200
    games = {g["id"]: g for g in resp.get_json()}
    assert sorted(games) == GAMES
    for g in games.values():
        assert set(g) >= {"id", "name", "documents", "policy"}
        for d in g["documents"]:
            assert set(d) >= {"id", "title", "url"}
            assert client.get(d["url"]).status_code == 200
    assert [d["id"] for d in games["tcg-taikai"]["documents"]] == [
        "tcg-taikai/floor-rules",
        "tcg-taikai/case-handling",
    ]


def test_search_contract(client):
    resp = client.get("/api/search", query_string={"q": "遅刻", "game": "lycee"})
    assert resp.status_code == 200
    data = resp.get_json()
    assert set(data) >= {"query", "total", "results"}
    assert data["query"] == "遅刻" and isinstance(data["total"], int)
    first = data["results"][0]
    assert set(first) >= {"id", "game", "doc", "title", "url", "snippet", "score"}
    assert first["id"] == "lycee/guideline/tardiness"
    assert first["url"] == "/rules/lycee/guideline/tardiness"
    assert "<mark>遅刻</mark>" in first["snippet"]


def test_search_without_game_covers_all_games_and_limit_caps(client):
    data = client.get("/api/search", query_string={"q": "スリーブ", "limit": 3}).get_json()
    assert len(data["results"]) == 3
    assert data["total"] >= 3
    games = {r["game"] for r in client.get("/api/search?q=スリーブ&limit=20").get_json()["results"]}
    assert {"tcg-taikai", "ijinden", "lycee"} <= games


def test_snippet_escapes_everything_but_mark(client):
    # 1c-i is the one section whose text has '>' (「レベル 1> 店舗トーナメント」).
    r = client.get("/api/search", query_string={"q": "店舗トーナメント", "game": "tcg-taikai"}).get_json()
    hit = next(h for h in r["results"] if h["id"] == "tcg-taikai/floor-rules/1c-i")
    assert "&gt;" in hit["snippet"] and "<mark>" in hit["snippet"]
    for q in ["スリーブ", "《超次元バイス・ホール》", "店舗"]:
        for r in client.get("/api/search", query_string={"q": q}).get_json()["results"]:
            tags = re.findall(r"</?([a-z]+)", r["snippet"])
            assert set(tags) <= {"mark"}, r["snippet"]


def test_total_counts_each_matching_section_once_within_the_game(client, library):
    data = client.get("/api/search", query_string={"q": "6b-iii", "game": "tcg-taikai"}).get_json()
    assert data["results"][0]["id"] == "tcg-taikai/floor-rules/6b-iii"
    small = client.get("/api/search", query_string={"q": "デッキ", "game": "lycee", "limit": 3}).get_json()
    large = client.get("/api/search", query_string={"q": "デッキ", "game": "lycee", "limit": 100}).get_json()
    assert small["total"] == large["total"] == len(large["results"])
    lycee = [s for s in library.corpus.sections.values() if s.game == "lycee"]
    assert small["total"] <= len(lycee)


def test_scores_follow_the_order_and_numbers_come_first(client):
    data = client.get("/api/search", query_string={"q": "第10章", "game": "ijinden"}).get_json()
    assert data["results"][0]["id"] == "ijinden/floor-rules/ch10"
    scores = [r["score"] for r in data["results"]]
    assert scores == sorted(scores, reverse=True)


def test_highlights_only_what_matched(client):
    data = client.get("/api/search", query_string={"q": "ぼち", "game": "ijinden"}).get_json()
    first = data["results"][0]
    assert first["id"] == "ijinden/floor-rules/ch2"
    assert "<mark>墓地</mark>" in first["snippet"]
    assert "<mark>ち</mark>" not in first["snippet"]


def test_section(client):
    data = client.get("/api/sections/tcg-taikai/floor-rules/6b-iii").get_json()
    assert set(data) >= {"id", "game", "doc", "title", "url", "text"}
    assert data["id"] == "tcg-taikai/floor-rules/6b-iii"
    assert data["title"].startswith("6b-iii.")
    assert "マッチ勝利" in data["text"]


def test_section_text_is_its_own_without_subsections(client):
    data = client.get("/api/sections/ijinden/floor-rules/ch10").get_json()
    assert "ジャッジの権限により" in data["text"]
    assert "違反例" not in data["text"]


def test_every_section_is_reachable_by_url_and_api(client, library):
    for sid, sec in library.corpus.sections.items():
        assert client.get(f"/api/sections/{sid}").get_json()["title"] == sec.title
        page = client.get(sec.url)
        assert page.status_code == 200, sid


@pytest.mark.parametrize(
    "url, status, code",
    [
        ("/api/sections/nope/nope/nope", 404, "unknown_section"),
        ("/api/search?q=a&game=nope", 404, "unknown_game"),
        ("/api/search?q=a&limit=abc", 400, "bad_limit"),
        ("/api/search?q=a&limit=0", 400, "bad_limit"),
        ("/api/search?q=a&limit=101", 400, "bad_limit"),
        ("/api/no-such-endpoint", 404, "not_found"),
    ],
)
def test_errors_are_json(client, url, status, code):
    resp = client.get(url)
    assert resp.status_code == status
    err = resp.get_json()["error"]
    assert err["code"] == code and err["message"]


def test_empty_query_gives_empty_results(client):
    data = client.get("/api/search?q=").get_json()
    assert data == {"query": "", "total": 0, "results": []}
