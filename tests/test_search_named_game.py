"""A game named in a query's words (リセ 遅刻, DM 先攻, 大会規定 奇数人数; judgeapp/search/games.py): read only as a
whole word, its sections ordered first in a search without a game (never the only ones), its name no word a
section must hold, and said on the page (docs/corpus.md, "A game named in the query")."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlparse

import pytest

from judgeapp.search.schema import WEIGHT, NamedGame

SHARED_APP = True  # the tests only read: one app for the module (tests/conftest.py)


def games_named(library, text: str) -> list[str]:
    return [n.game for n in library.index.game_names.read(text)]


@pytest.mark.parametrize(
    "text, games",
    [
        ("リセ 遅刻 何分で負け", ["lycee"]),
        ("DMってサイドボード使えますか", ["dm-senshu"]),
        ("英語版DM 使える？", ["dm-senshu"]),
        ("ﾌﾟﾛﾓ 解禁 DM", ["dm-senshu"]),  # half-width katakana, as NFKC reads it
        ("デュエル・マスターズ 遅刻", ["dm-senshu"]),  # the name without its bracketed part
        ("デュエルマスターズ 遅刻", ["dm-senshu"]),  # the middle dot left out
        ("大会規定の奇数人数", ["tcg-taikai"]),
        ("TCG 大会規定 遅刻", ["tcg-taikai"]),
        ("イジン 観戦 アドバイス 禁止", ["ijinden"]),
        ("DMとリセの違い", ["dm-senshu", "lycee"]),
        ("リセ・遅刻", ["lycee"]),  # a middle dot is a gap, not katakana (a review)
        ("この大会の大会規定では", []),  # a tournament's rules, not the game's text (a review)
        # never inside a longer word of the same script
        ("リセットしていい?", []),
        ("イジンデンの遅刻", ["ijinden"]),  # the longer name, once
        ("ADMIN 権限", []),
        ("DM2 遅刻", []),
        # a kanji name only where SudachiPy reads a word's bounds (全国大会|規定, 大会|規定違反, 流星|屑)
        ("全国大会規定", []),
        ("大会規定違反", []),
        ("流星屑", []),
        # never in hiragana (しっかりせず and とりせつ hold りせ; りせ itself is no name)
        ("しっかりせず 遅刻", []),
        ("とりせつ", []),
        ("りせ 遅刻", []),
        ("遅刻 何分", []),
    ],
)
def test_a_game_is_named_only_by_a_whole_word(library, text, games):
    assert games_named(library, text) == games


def test_the_named_games_sections_come_first_and_the_others_follow(library):
    """Ordered, not narrowed: the named game's sections weigh more (`WEIGHT["named_game"]`), every game's
    sections still match, and within each game the order is that of the query without the name."""
    index = library.index
    results = index.search("リセ 遅刻 何分で負け", limit=20)
    rest = index.search("遅刻 何分で負け", limit=20)
    assert results.named == [NamedGame("リセ", "lycee", True)] and results.rest == "遅刻 何分で負け"
    assert results.query == "リセ 遅刻 何分で負け"  # what the judge typed, as always
    assert results.hits[0].id == "lycee/guideline/tardiness"
    assert results.total == rest.total  # the same sections match: no game is left out
    assert {h.game for h in results.hits} > {"lycee"}
    for game in {h.game for h in results.hits}:
        ordered = [h.id for h in results.hits if h.game == game]
        assert ordered == [h.id for h in rest.hits if h.game == game][: len(ordered)]
    # scores never increase down the list (the API's contract): the named game's are its weighted scores
    assert [h.score for h in results.hits] == sorted((h.score for h in results.hits), reverse=True)
    # a weight, not a filter: the named game's section scores its own score times the weight
    scores = {h.id: h.score for h in results.hits}
    assert scores["lycee/guideline/tardiness"] == pytest.approx(
        WEIGHT["named_game"] * next(h.score for h in rest.hits if h.id == "lycee/guideline/tardiness"),
        rel=1e-3,
    )


def test_the_name_is_no_word_a_section_must_hold(library):
    """大会規定 stands in every game's text: as a name it is the judge's scope, not a word asked for."""
    index = library.index
    named = index.search("大会規定 ドラフト途中 ドロップ 可?", limit=5)
    assert named.named == [NamedGame("大会規定", "tcg-taikai", True)]
    assert named.hits[0].id == "tcg-taikai/floor-rules/6e"
    assert "大会" not in [qw.word.surface for qw in index.analyse(named.rest)]
    # the particles right after a name go with it (で in DMで is no word of the rest)
    (n,) = index.game_names.read("DMで暴言を送られた")
    assert "DMで暴言を送られた"[n.start : n.through] == "DMで"


def test_a_named_game_whose_text_is_silent_is_said_so(library, client):
    """デュエルマスターズ 遅刻: dm-senshu's text says nothing of 遅刻, so Lycee's rule is what the search has; the
    page says the named game's text is silent rather than that its rules come first (pass 7's review)."""
    results = library.index.search("デュエルマスターズ 遅刻")
    assert results.named == [NamedGame("デュエルマスターズ", "dm-senshu", False)]
    assert results.hits[0].id == "lycee/guideline/tardiness"
    html = client.get("/search", query_string={"q": "デュエルマスターズ 遅刻"}).get_data(as_text=True)
    line = re.search(r'<p class="meta named-games"[^>]*>(.*?)</p>', html, re.S).group(1)
    assert "規定には当てはまるものが見つかりませんでした。ほかのゲームの規定を表示しています。" in line
    assert "優先して" not in line and "<a " not in line
    data = client.get("/api/search", query_string={"q": "デュエルマスターズ 遅刻"}).get_json()
    assert data["named"] == [{"name": "デュエルマスターズ", "game": "dm-senshu", "found": False}]


def test_a_games_search_reorders_nothing_and_keeps_a_name_of_the_text(library):
    """With a game chosen, nothing is reordered and no game is said on the page; a name made of what the text
    calls itself stays a word of the query (大会規定 店で勝手に変えてもええの asks about the 大会規定 itself)."""
    index = library.index
    for text, game in (("リセ 遅刻", "lycee"), ("大会規定 店で勝手に変えてもええの", "tcg-taikai")):
        results = index.search(text, game=game)
        assert results.named == [] and results.rest == ""
    assert index.search("大会規定 店で勝手に変えてもええの", game="tcg-taikai").hits[0].id == (
        "tcg-taikai/floor-rules/2e"
    )


@pytest.mark.parametrize(
    "text, game, same_as",
    [
        ("イジンデン 遅延", "ijinden", "遅延"),
        ("デュエマ サイドボード", "dm-senshu", "サイドボード"),
        ("じかんぎれ いじんでん", "ijinden", "じかんぎれ"),  # in hiragana, as a whole part of the query
        ("リセ 遅刻", "lycee", "遅刻"),
    ],
)
def test_a_games_own_name_in_its_search_narrows_nothing(library, text, game, same_as):
    """In a search of a game, that game's own name is left out of the query (every section there is the
    game's): the answer is the one for the rest of the query (search/games.py, `scope_names`)."""
    index = library.index
    got, want = index.search(text, game=game), index.search(same_as, game=game)
    assert [h.id for h in got.hits] == [h.id for h in want.hits] and got.hits


def test_a_games_own_name_alone_or_in_words_is_searched_as_typed(library):
    """The name alone (nothing left to search), another game's name, and a hiragana name inside other words."""
    index = library.index
    assert index.search("イジンデン", game="ijinden").hits
    assert index._scope_names.read("しっかりせず 遅刻") == []
    assert [n.game for n in index._scope_names.read("いじんでん 遅延")] == ["ijinden"]
    assert [n.name for n in index._scope_names.read("大会規定 店で")] == []


def test_dm_as_a_direct_message_does_not_put_dm_senshu_first(library):
    """DM is also a direct message (DMで暴言を送られた, DMが来た): two latin letters naming a game whose text holds
    nothing of the rest are searched as typed, with no line about a game (a review)."""
    index = library.index
    for text in ("DMで暴言を送られた", "DMが来た"):
        results = index.search(text)
        assert results.named == [] and results.rest == ""
        assert [h.id for h in results.hits] == [
            h.id for h in index.search_uncached(text, read_names=False).hits
        ]
    assert index.search("DMで暴言を送られた").hits[0].game != "dm-senshu"


def test_a_name_alone_opens_that_games_text_from_its_start(library):
    """リセ, DM, リセってなに, イジンデンのルール (a name with nothing else, or only what asks about the game): that
    game's sections in the order of its text, the game said as found, never another game's sections ranked on
    the question words (リセってなに found ijinden's ch2 on なに, DM found nothing; a review)."""
    index = library.index
    corpus = library.corpus
    for text, game in [
        ("リセ", "lycee"),
        ("リセ？", "lycee"),
        ("リセ!", "lycee"),
        ("リセ。", "lycee"),
        ("リセってなに", "lycee"),
        ("リセとは", "lycee"),
        ("lyceeとは", "lycee"),
        ("DM", "dm-senshu"),
        ("デュエマって何？", "dm-senshu"),
        ("ｲｼﾞﾝ", "ijinden"),
        ("イジンデンのルール", "ijinden"),
        ("イジンデンについて", "ijinden"),
        ("大会規定", "tcg-taikai"),
        ("リセ 教えて下さい", "lycee"),
        ("リセってどういう意味", "lycee"),
    ]:
        results = index.search(text)
        own = [s.id for s in corpus.sections.values() if s.game == game and s.text.strip()]
        assert [h.id for h in results.hits] == own[:10], text
        assert results.total == len(own), text
        assert [(n.game, n.found) for n in results.named] == [(game, True)], text
        scores = [h.score for h in results.hits]
        assert scores == sorted(scores, reverse=True), text
    # the name alone in that game's own search: the same, and no word about a game named (a review)
    for text, game in [("DM", "dm-senshu"), ("リセってなに", "lycee"), ("リセ 教えて下さい", "lycee")]:
        results = index.search(text, game=game)
        own = [s.id for s in corpus.sections.values() if s.game == game and s.text.strip()]
        assert [h.id for h in results.hits] == own[:10] and results.named == [], text
    # two games named: their sections in turn
    assert [h.game for h in index.search("リセとDM").hits][:4] == ["lycee", "dm-senshu"] * 2
    # a word that asks something of the text is searched, one kanji too (リセ 何分: lycee's match time)
    for text in ("リセ 何分", "リセ 分", "リセ はんそく", "リセ 遅刻", "リセ おくれ", "リセ なんまい"):
        assert index.search(text).hits[0].id != "lycee/guideline/updates", text
    # a name with more to ask is a search in that game first (デュエマ 先攻: 203 before tcg-taikai's 6c-ii)
    results = index.search("デュエマ 先攻")
    assert results.named[0].found and results.hits[0].game == "dm-senshu"
    assert index.search("リセ 遅刻").hits[0].id == "lycee/guideline/tardiness"


def test_a_name_alone_links_to_the_games_library(client):
    html = client.get("/search", query_string={"q": "リセってなに"}).get_data(as_text=True)
    line = re.search(r'<p class="meta named-games"[^>]*>(.*?)</p>', html, re.S).group(1)
    assert "『リセ』を Lycee TCG と読み、その規定を初めから表示しています。" in line
    assert '<a href="/rules/lycee">Lyceeの規定の目次</a>' in line, line


def test_the_page_says_which_game_it_read_and_links_to_its_search(client):
    html = client.get("/search", query_string={"q": "リセ 遅刻 何分で負け"}).get_data(as_text=True)
    line = re.search(r'<p class="meta named-games"[^>]*>(.*?)</p>', html, re.S)
    assert line, html
    assert "『リセ』を Lycee TCG と読み、その規定を先に表示しています。" in line.group(1)
    href = (
        re.search(r'<a href="([^"]+)">Lyceeの規定だけを検索</a>', line.group(1))
        .group(1)
        .replace("&amp;", "&")
    )
    assert parse_qs(urlparse(href).query) == {"q": ["遅刻 何分で負け"], "game": ["lycee"]}
    # the link's page: that game's sections, in the order the named search showed them
    linked = client.get(href).get_data(as_text=True)
    first = re.findall(r'<a class="title" href="(/rules/[^"]+)"', linked)[:1]
    assert first == re.findall(r'<a class="title" href="(/rules/[^"]+)"', html)[:1]
    assert 'class="meta named-games"' not in linked
    # two games named: both said, each with its own search
    html = client.get("/search", query_string={"q": "DMとリセ 引き分け"}).get_data(as_text=True)
    line = re.search(r'<p class="meta named-games"[^>]*>(.*?)</p>', html, re.S).group(1)
    assert "『DM』を デュエル・マスターズ（泉州DM版）、『リセ』を Lycee TCG と読み、それらの規定を" in line
    assert "game=dm-senshu" in line and "game=lycee" in line
    # a query naming no game, or a game's own search: no such line
    for params in ({"q": "遅刻"}, {"q": "リセ 遅刻", "game": "lycee"}, {"q": "リセット 遅刻"}):
        assert 'class="meta named-games"' not in client.get("/search", query_string=params).get_data(
            as_text=True
        )


def test_the_api_keeps_its_contract_and_says_the_game_it_read(client):
    """A query naming no game: exactly the contract's keys (PRODUCT.md, docs/api.md); one naming a game adds
    the optional `named`."""
    plain = client.get("/api/search", query_string={"q": "遅刻 何分で負け"}).get_json()
    assert set(plain) == {"query", "total", "results"}
    for params in ({"q": "リセット 遅刻"}, {"q": "リセ 遅刻", "game": "lycee"}, {"q": ""}):
        assert set(client.get("/api/search", query_string=params).get_json()) == {"query", "total", "results"}
    named = client.get("/api/search", query_string={"q": "リセ 遅刻 何分で負け"}).get_json()
    assert named["named"] == [{"name": "リセ", "game": "lycee", "found": True}]
    assert named["query"] == "リセ 遅刻 何分で負け" and named["total"] == plain["total"]
    assert named["results"][0]["id"] == "lycee/guideline/tardiness"
    assert set(named["results"][0]) == set(plain["results"][0])
