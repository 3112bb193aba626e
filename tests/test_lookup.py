"""The situation lookup (judgeapp/lookup.py): quality on the situation tables, "nothing in this text fits" on
situations no text covers, answers that are sections deciding no penalty, why each result matched, the
lookup across all games from the home page, and the JSON API's shape."""

from __future__ import annotations

import re
import sys

import pytest

from judgeapp import ROOT
from judgeapp.textnorm import squash

from .conftest import CASES_DIR, load_cases

sys.path.insert(0, str(ROOT / "bench"))
from lookup_bench import case_sections, supports  # noqa: E402  (one definition of a supported answer)

# Written by someone who never saw our code or data, split in two: we tuned on the first half only.
TUNE = "situations_tune.yaml"
TUNE2 = "situations_tune2.yaml"  # a second tuning table by another writer who never saw our code
TUNE3 = "situations_tune3.yaml"  # a third, by a sixth writer (its reporting half: situations_report2.yaml)
TUNE4 = "situations_tune4.yaml"  # a fourth, by a seventh writer (its reporting half: situations_report3.yaml)
REPORT = "situations_report.yaml"
TUNE10_BARS = (0.879, 0.703)  # what it reached here (87.9% / 70.3%; 87.9 / 71.4 in the bench)
NONE = load_cases("situations_none.yaml")
# Old tables (must not drop), then the unseen halves.
TABLES = [
    t
    for t in ("situations.yaml", "situations_holdout.yaml", TUNE, TUNE2, TUNE3, REPORT)
    if (CASES_DIR / t).exists()
]


def _api(client, q, game=None, limit=3):
    params = {"q": q, "limit": limit}
    if game:
        params["game"] = game
    resp = client.get("/api/infractions", query_string=params)
    assert resp.status_code == 200
    return resp.get_json()


def _score(client, cases: list[dict]) -> tuple[int, int, int]:
    """How many of the table's rows get the text's answer first, and in the first three; and the rows."""
    first = top3 = 0
    for case in cases:
        results = _api(client, case["q"], case["game"])["results"]
        first += bool(results) and supports(results[0], case)
        top3 += any(supports(r, case) for r in results)
    return first, top3, len(cases)


@pytest.mark.parametrize("table", TABLES)  # the reporting half too: measured, never tuned on
def test_lookup_gives_the_texts_answer(client, table):
    """The text's answer (its penalty, or null; discretion flagged where the row says the text leaves it open)
    with a citation carrying it: in the first three for 90%, first for 75%."""
    first, top3, n = _score(client, load_cases(table))
    print(f"\n{table}: top 3 {top3}/{n} = {top3 / n:.1%}, first {first}/{n} = {first / n:.1%}")
    assert top3 / n >= 0.90 and first / n >= 0.75


def test_lookup_on_the_seventh_writers_tuning_half(client):
    """The seventh writer's tuning half is held to what it reached (2026-12-01: 80.3% / 64.8% here, 66.2% in
    the bench; with a section's answer before another section or an infraction citing it when its line
    covers more of the story, 81.7% / 69.0% here, 81.7% / 70.4% in the bench: the test app carries the
    fixture game, whose text moves the words' rarity; 2026-12-02, with the idf to the power 1.5 and a compound
    verb's short units left out, 80.3% / 69.0% here, 80.3% / 69.0% in the bench: one row each, for the ninth
    and eighth writers' gains; with ごまかす・悪質・同じ名前 in the synonyms, 81.7% / 71.8% here and in the bench),
    not to the other tables' bars: its stories are told in words the texts do not use (see
    docs/infractions.md)."""
    first, top3, n = _score(client, load_cases(TUNE4))
    print(f"\n{TUNE4}: top 3 {top3}/{n} = {top3 / n:.1%}, first {first}/{n} = {first / n:.1%}")
    assert top3 / n >= 0.816 and first / n >= 0.718, (top3, first, n)


@pytest.mark.parametrize(
    ("table", "bars"),
    [
        # the eighth writer's tuning half, never read (the fifth pass validated on its figure): 78.9 / 68.4 in
        # the bench before it, 84.2 / 72.4 after; 85.5 / 72.4 with ごまかす・悪質 in the synonyms (the sixth pass)
        # (84.2 / 72.4 again once 悪質 → 重度 was taken out after review)
        ("situations_tune8.yaml", (0.84, 0.72)),
        # the ninth writer's, the fifth pass tuned on it: 73.0 / 62.9 before, 78.7 / 68.5 after in the bench
        # (77.5 / 67.4 here: the test app carries the fixture game, whose text moves the words' rarity)
        ("situations_tune9.yaml", (0.775, 0.674)),
    ],
)
def test_lookup_on_the_eighth_and_ninth_writers_tuning_halves(client, table, bars):
    """Held to what they reached (2026-12-02), not to the other tables' bars: the bar is not met on them."""
    first, top3, n = _score(client, load_cases(table))
    print(f"\n{table}: top 3 {top3}/{n} = {top3 / n:.1%}, first {first}/{n} = {first / n:.1%}")
    assert top3 / n >= bars[0] and first / n >= bars[1], (top3, first, n)


def test_lookup_on_the_tenth_writers_tuning_half(client):
    """The tenth writer's tuning half (phone notes: kana left unconverted, romaji, slang; the seventh pass tuned
    on it, validated on the eleventh writer's figure): 82.4 / 67.0 in the bench before the pass, 87.9 / 71.4
    after; held here to what it reached (the test app carries the fixture game, whose text moves the rarity)."""
    first, top3, n = _score(client, load_cases("situations_tune10.yaml"))
    print(f"\nsituations_tune10.yaml: top 3 {top3}/{n} = {top3 / n:.1%}, first {first}/{n} = {first / n:.1%}")
    assert top3 / n >= TUNE10_BARS[0] and first / n >= TUNE10_BARS[1], (top3, first, n)


def test_lookup_on_the_thirteenth_writers_tuning_half(client):
    """The thirteenth writer's tuning half (a trainee's quiz questions and shadowing notes; the eighth pass tuned
    on it, validated on the twelfth writer's figure): 87.5 / 70.3 in the bench before the pass, 95.3 / 78.1
    after; held here a little under it (the test app carries the fixture game)."""
    first, top3, n = _score(client, load_cases("situations_tune13.yaml"))
    print(f"\nsituations_tune13.yaml: top 3 {top3}/{n} = {top3 / n:.1%}, first {first}/{n} = {first / n:.1%}")
    assert top3 / n >= 0.92 and first / n >= 0.75, (top3, first, n)


def test_lookup_on_the_fourteenth_writers_tuning_half(client):
    """The fourteenth writer's tuning half (a head judge's terse phone notes: PL, HJ, BO3, 1-0, game nicknames;
    the ninth pass tuned on it, validated on the other tuning halves' sums): 85.7 / 77.1 in the bench before the
    pass, 92.9 / 88.6 after, 90.0 / 84.3 once a review took out two of its rules (a section's open line, which
    flagged discretion where the text gives none; 話しかける as a spectator's remark); held here to that."""
    first, top3, n = _score(client, load_cases("situations_tune14.yaml"))
    print(f"\nsituations_tune14.yaml: top 3 {top3}/{n} = {top3 / n:.1%}, first {first}/{n} = {first / n:.1%}")
    assert top3 / n >= 0.90 and first / n >= 0.84, (top3, first, n)


def test_lookup_on_the_fifteenth_writers_tuning_half(client):
    """The fifteenth writer's tuning half (a judge at a first large event: long polite stories, everyday words;
    no pass tuned on it, the ninth and tenth validated on it): 92.0 / 82.0 in the bench before them, 94.0 / 82.0
    after; held here to what it reached (the test app carries the fixture game)."""
    first, top3, n = _score(client, load_cases("situations_tune15.yaml"))
    print(f"\nsituations_tune15.yaml: top 3 {top3}/{n} = {top3 / n:.1%}, first {first}/{n} = {first / n:.1%}")
    assert top3 / n >= 0.92 and first / n >= 0.80, (top3, first, n)


def test_lookup_on_the_sixteenth_writers_tuning_half(client):
    """The sixteenth writer's tuning half (a young card-shop judge: net slang, typos, MTG words; the tenth pass
    tuned on it): 85.3 / 72.1 in the bench before the pass, 91.2 / 79.4 after; held here to what it reached
    (the test app carries the fixture game). The sixteenth pass's ONE_WORD costs it one first answer (its
    score-cards section holds スコアカード alone: 3週間遅れた's late-seat goes first), 62 / 53 of 68 here, while
    the tuning tables' sums gain (docs/infractions.md)."""
    first, top3, n = _score(client, load_cases("situations_tune16.yaml"))
    print(f"\nsituations_tune16.yaml: top 3 {top3}/{n} = {top3 / n:.1%}, first {first}/{n} = {first / n:.1%}")
    assert top3 / n >= 0.91 and first / n >= 0.779, (top3, first, n)


def test_none_table_is_from_the_unseen_writer():
    assert len(NONE) >= 20 and all(c.get("none") for c in NONE)


@pytest.mark.parametrize("case", NONE, ids=[c["q"] for c in NONE])
def test_nothing_in_the_text_fits(client, case):
    body = _api(client, case["q"], case.get("game"))
    assert body["results"] == [] and body["none"] is True
    assert "見つかりませんでした" in body["message"]


def test_the_threshold_is_between_the_tables(library):
    """Calibration: the situations of the old tables and the tuning half clear the threshold, all but a few
    (at most 5% of a table: a terse story such as 「時間来た 先攻のターン中 どこまでやる」 covers no more of the
    text than the best of the none table does, so no threshold separates them)."""
    lookup = library.lookup
    for table in ("situations.yaml", "situations_holdout.yaml", TUNE, TUNE3):
        said_none = [c["q"] for c in load_cases(table) if lookup.search(c["q"], game=c["game"]).none]
        assert len(said_none) <= 0.05 * len(load_cases(table)), (table, said_none)


def test_api_keeps_its_shape(client):
    body = _api(client, "1枚多く引いちゃった", "ijinden")
    assert set(body) == {"query", "total", "results"}
    r = body["results"][0]
    for key in ("id", "game", "name", "penalty", "discretion", "citations", "quotes", "url", "score"):
        assert key in r
    assert r["penalty"] == "注意" and r["section"] == "ijinden/floor-rules/ch10-1"


def test_a_section_that_decides_no_penalty_is_the_answer(client, library):
    """tcg-taikai 5b decides what a suspended player loses (権利の剥奪); no infraction cites it."""
    body = _api(client, "出場停止を受けた人がそれまでに取った権利はどうなる", "tcg-taikai")
    hit = next(r for r in body["results"] if r["citations"] == ["tcg-taikai/floor-rules/5b"])
    assert hit["kind"] == "section" and hit["penalty"] is None
    section = library.corpus.sections["tcg-taikai/floor-rules/5b"]
    assert squash(hit["decides"]) in squash(section.text)  # quoted, never invented


def test_why_each_result_matched(client):
    r = _api(client, "観客が口出しした", "ijinden")["results"][0]
    assert r["why"]["words"] and "観客" in r["why"]["words"]
    assert "<mark>観客</mark>" in r["why"]["snippet"]
    assert r["why"]["section"] in r["citations"]


def test_cites_the_section_that_carries_the_answer(client):
    """The shown section is the one whose line matched, not a neighbour the infraction also cites."""
    r = _api(client, "わざと相手の山札のぞいた", "ijinden")["results"][0]
    assert r["penalty"] == "失格" and r["section"] == "ijinden/floor-rules/ch10-4"


def test_wizard_page_says_nothing_fits(client):
    html = client.get("/wizard/tcg-taikai", query_string={"q": NONE[0]["q"]}).get_data(as_text=True)
    assert "見つかりませんでした" in html and "data-lookup" not in html


def test_home_page_offers_the_lookup_across_games_grouped_by_game(client, library):
    home = client.get("/").get_data(as_text=True)
    assert 'action="/wizard/lookup"' in home
    html = client.get("/wizard/lookup", query_string={"q": "観客が口出しした"}).get_data(as_text=True)
    groups = re.findall(r'<h2 class="lookup-game">([^<]+)</h2>', html)
    names = {p.name for p in library.policies.games.values()}
    assert len(groups) >= 2 and set(groups) <= names and len(set(groups)) == len(groups)
    assert "<mark>" in html
    html = client.get("/wizard/lookup", query_string={"q": NONE[1]["q"]}).get_data(as_text=True)
    assert "どのゲームの規定にも" in html and "この文書には" not in html  # it looked in every game's text


def test_the_lookup_across_games_orders_the_games_by_their_best_answer(library):
    """The games come in the order of one ranking of every game's answers (the API without a game, and the
    offline lookup), not by how many of the story's words a game's text holds: a player's story of two extra
    cards is ijinden's 誤って余分に引いた (注意) before Lycee's mulligan, whose text holds 2 and 枚 too."""
    lookup = library.lookup
    for q in ("相手がカード2枚引いてたんですけど反則ですよね", "観客が口出しした", "相手が遅刻してきた"):
        ranked = []
        for m in lookup.search(q, limit=30).matches:
            if m.answer.game not in ranked:
                ranked.append(m.answer.game)
        groups = [g for g, _ in lookup.search_all(q).groups()]
        assert groups == [g for g in ranked if g in groups], q
    first = lookup.search_all("相手がカード2枚引いてたんですけど反則ですよね").matches[0]
    assert first.answer.key == "ijinden/extra-draw"


def test_the_lookup_across_games_puts_the_game_chosen_last_first(client, library):
    """A judge at a one-game event finds that game's answers first; where its text fits nothing, the page says
    so before the other games' answers (as offline: tests/test_offline.py)."""
    q = "観客が口出しした"
    order = [g for g, _ in library.lookup.search_all(q).groups()]
    assert len(order) >= 3 and "dm-senshu" not in order
    client.set_cookie("game", order[-1])
    html = client.get("/wizard/lookup", query_string={"q": q}).get_data(as_text=True)
    groups = re.findall(r'<h2 class="lookup-game">([^<]+)</h2>', html)
    assert groups[0] == library.policies.games[order[-1]].name and len(groups) == len(order)
    assert "の規定には、この状況に当てはまるものが見つかりませんでした" not in html
    client.set_cookie("game", "dm-senshu")
    html = client.get("/wizard/lookup", query_string={"q": q}).get_data(as_text=True)
    groups = re.findall(r'<h2 class="lookup-game">([^<]+)</h2>', html)
    assert groups == [library.policies.games[g].name for g in order]
    said = f"{library.corpus.games['dm-senshu'].name}の規定には、この状況に当てはまるものが見つかりませんでした。"
    assert said in html and 'data-first="dm-senshu"' in html


def test_hostile_queries_are_answered(client):
    for q in ("", " ", "<script>alert(1)</script>", "a" * 5000, "\x00\x01", "🃏" * 50):
        resp = client.get("/api/infractions", query_string={"q": q})
        assert resp.status_code == 200
        html = client.get("/wizard/lookup", query_string={"q": q}).get_data(as_text=True)
        assert "<script>alert" not in html


def test_case_sections_reads_both_forms():
    assert case_sections({"section": "a"}) == ["a"] and case_sections({"sections": ["a", "b"]}) == ["a", "b"]


def test_the_analysis_is_cached_for_the_next_start(tmp_path, library):
    """Cold start: the evidence's analysis is written once and read back, giving the same answers."""
    from judgeapp import lookup as lk

    first = lk.Lookup(library.corpus, library.policies, cache_dir=tmp_path)
    files = list(tmp_path.glob("lookup-*.json"))
    assert len(files) == 1
    saved = dict(lk._ANALYSED)
    lk._ANALYSED.clear()
    try:
        second = lk.Lookup(library.corpus, library.policies, cache_dir=tmp_path)
        for q in ("観客が口出しした", "デッキ39枚しかない"):
            a = [m.answer.key for m in first.search(q).matches]
            b = [m.answer.key for m in second.search(q).matches]
            assert a == b and a
    finally:
        lk._ANALYSED.update(saved)


def test_a_null_answer_says_what_the_text_decides(client, library):
    """An infraction with no penalty quotes what its text decides (a line of a cited section)."""
    r = _api(client, "投了した 2本先取", "lycee")["results"][0]
    assert r["penalty"] is None and r["decides"]
    assert any(squash(r["decides"]) in squash(library.corpus.sections[s].text) for s in r["citations"])


def test_a_rule_answers_a_repeat(client):
    """「警告なんかいも」: イジンデン's upgrade rule, no penalty of its own, left to the judge."""
    body = _api(client, "警告を何回も受けている", "ijinden")
    rule = next(r for r in body["results"] if r["kind"] == "rule")
    assert (
        rule["penalty"] is None and rule["discretion"] and "ijinden/floor-rules/ch10-2" in rule["citations"]
    )
    html = client.get("/wizard/ijinden", query_string={"q": "警告を何回も受けている"}).get_data(as_text=True)
    assert "累積・格上げの規定" in html and "何度も【警告】を受けた場合" in html


def test_an_upgrade_to_one_level_answers_that_level_left_to_the_judge(client):
    """ch10-1 「何度も【注意】を受けた場合、【警告】に格上げされることがあります」 names one level and leaves it open:
    【警告】 with discretion; ch10-2's 【敗北】や【失格】 picks none (above)."""
    body = _api(client, "注意を何回も受けている", "ijinden")
    rule = next(r for r in body["results"] if r["id"] == "ijinden/rule:caution-upgrade")
    assert rule["penalty"] == "警告" and rule["discretion"] and rule["penalty_options"] == ["警告"]
    assert "ijinden/floor-rules/ch10-1" in rule["citations"]
    # the page says the level too, as the API does, and that the upgrade is the judge's
    html = client.get("/wizard/ijinden", query_string={"q": "注意を何回も受けている"}).get_data(as_text=True)
    assert '<span class="badge">警告</span> 格上げはジャッジの判断' in html
    html = client.get("/wizard/ijinden", query_string={"q": "警告を何回も受けている"}).get_data(as_text=True)
    assert '<span class="badge">敗北または失格</span> 格上げはジャッジの判断' in html


# How a judge tells a story: each row's section is where the text says it, `word` the text's own word there.
STORIES = [
    # a player's words the synonym list maps to the text's (lookup pass 17): 折る is 7e's 「折れたり」 and 代わりの
    # カード its 代用カード, どつく 暴力
    (
        "tcg-taikai",
        "シャッフル中にカード折っちゃった、代わりのカード作ってもらえる？",
        "tcg-taikai/floor-rules/7e",
        "代用カード",
    ),
    ("tcg-taikai", "対戦相手に肩どつかれた", "tcg-taikai/floor-rules/3b-ii", "暴力行為"),
    # two kana the analyzer cuts into letters (ぼち) are read as the text's word (墓地)
    ("ijinden", "相手が勝手に俺のぼちのカードめくって見てた", "ijinden/floor-rules/ch2", "墓地"),
    # counters: 2個目 counts like the text's 注意2点
    ("lycee", "N2個目ついた人", "lycee/guideline/penalty", "注意２点"),
    # an everyday word the synonym list maps to the text's (入れ替え → 交換), whatever its inflection
    ("lycee", "スペアの入れ替えにもう7分くらいかかってる", "lycee/guideline/spare-cards", "交換時間"),
    # auxiliaries (〜そう, 〜てくる) and the laugh weigh nothing; 煽る is the text's 挑発
    ("ijinden", "負けそうになった相手が へたくそｗ とか煽ってくる", "ijinden/floor-rules/ch10-2", "挑発"),
    # judges' everyday words the text names otherwise: 叩き割る is its 破壊行為, 書き換える its 改ざん
    ("tcg-taikai", "怒って会場の椅子を叩き割った", "tcg-taikai/floor-rules/3b-ii", "破壊行為"),
    ("ijinden", "結果用紙の勝敗をこっそり書き換えた", "ijinden/floor-rules/ch9", "改ざん"),
    # hedges weigh nothing (〜っぽい, はず); ゆっくり is the text's 遅いプレイング
    ("ijinden", "たぶんわざとゆっくりプレイしてるっぽい", "ijinden/floor-rules/ch10-2", "遅いプレイング"),
    # what a judge quotes is what was said: its words weigh half («絶対負けるよ» is not the story)
    (
        "ijinden",
        "観戦してた友達が「それ出したら絶対負けるよ」ってボソッと声かけた",
        "ijinden/floor-rules/ch10-1",
        "声をかけた",
    ),
    # a verb after the case particle で is a word of the story, not a て-form's auxiliary (間違って)
    ("ijinden", "カードの効果をうろ覚えで間違って伝えた", "ijinden/floor-rules/ch10-2", "誤情報"),
    # someone else's name is the text's 詐称
    ("tcg-taikai", "兄の名前で登録して出てた", "tcg-taikai/floor-rules/3b-i", "詐称行為"),
    # a suspension may follow once the violation is found, even after the event (3a)
    ("tcg-taikai", "大会が終わってから盗んだことが発覚した", "tcg-taikai/floor-rules/3a", "発覚"),
]


@pytest.mark.parametrize("game, q, section, word", STORIES)
def test_a_story_reaches_the_section_that_says_it(client, library, game, q, section, word):
    assert word in library.corpus.sections[section].text
    body = _api(client, q, game)
    assert body["results"], q
    hits = [r for r in body["results"] if section in r["citations"]]
    assert hits, [r["id"] for r in body["results"]]
    if "ぼち" in q:  # the kana as typed is shown as what matched
        assert any("ぼち" in r["why"]["words"] for r in hits)


# Kana as typed read as the text's words only where they are a word of the story: a stretch of kana that cuts
# across the story's words is no word (してき in 申請してきた is not 指摘, いない in 席にいない not 以内).
KANA_ACROSS_WORDS = [
    ("tcg-taikai", "相手がID申請してきた", "してき", "r:シテキ"),
    ("tcg-taikai", "会場の天井から雨漏りしてきた", "してき", "r:シテキ"),
    ("lycee", "5分たっても席にいない", "いない", "r:イナイ"),
    ("lycee", "対戦相手と勝敗を相談していた", "してい", "r:シテイ"),
    ("ijinden", "わざとカードを余計に引いて得しようとしてた", "しよう", "r:シヨウ"),
]


@pytest.mark.parametrize("game, q, kana, term", KANA_ACROSS_WORDS)
def test_kana_across_words_is_no_word(client, library, game, q, kana, term):
    words, surfaces, _ = library.lookup._query_words(q)
    assert not any(term in alts for alts, _ in words), [
        s for (a, _), s in zip(words, surfaces, strict=True) if term in a
    ]
    for r in _api(client, q, game, limit=10)["results"]:
        assert kana not in r["why"]["words"], r["id"]


@pytest.mark.parametrize(
    "q, kana, term",
    [
        ("相手がぱいるしゃっふるしかしてない", "しゃっふる", "r:シャッフル"),
        ("すぺあ 13まい持ってきてる", "すぺあ", "r:スペア"),
        ("けいこく何回ももらってる人 次どうなる", "けいこく", "r:ケイコク"),
        ("カードなくした 同じカードも持ってない", "なくし", "r:ナクシ"),
    ],
)
def test_a_kana_word_the_analyzer_splits_is_still_read(library, q, kana, term):
    words, surfaces, _ = library.lookup._query_words(q)
    assert any(term in alts and s == kana for (alts, _), s in zip(words, surfaces, strict=True))


def test_a_latin_word_is_read_by_its_reading(library):
    """drop typed on a phone is the text's ドロップ by its reading, and the synonym list's key for it (棄権)."""
    words, surfaces, _ = library.lookup._query_words("マッチング出たあと drop申告")
    alts = [a for (a, _), s in zip(words, surfaces, strict=True) if s == "drop"]
    assert any("r:ドロップ" in a for a in alts), alts
    assert any(a[0] == "p:" and "棄権" in a for a in alts), alts


def test_a_key_the_analyzer_cuts_is_one_word(library):
    """出停中 is 出・停・中 to the analyzer; 停 stands in no text: the key 出停 is the word (its phrase 出場停止)."""
    words, surfaces, _ = library.lookup._query_words("海外で出停中の人 日本のGPきた")
    assert "停" not in surfaces, surfaces
    alts = [a for (a, _), s in zip(words, surfaces, strict=True) if s == "出停"]
    assert ("出停",) in alts and any(a[0] == "p:" for a in alts), alts
    # a key whose pieces the text has stays as the analyzer cut it (同じ・カード)
    words, surfaces, _ = library.lookup._query_words("同じカード5枚入ってた")
    assert "同じカード" not in surfaces, surfaces


@pytest.mark.parametrize(
    ("q", "entry"),
    [("かなり悪質なやつがいた", None), ("初手にキャラいないからマリガン", None), ("権利いらないって", "辞退"),
     ("権利もう要りません", "辞退"), ("権利が要るか聞かれた", None), ("日本語版持ってない", None),
     ("他人のデッキ持ってった", "窃盗"), ("スリーブ足りてる", None), ("デッキのカード足りない", "紛失")],
)  # fmt: skip
def test_a_key_is_found_by_a_word_the_story_says(library, q, entry):
    """いた and いない are grammar (a stop word) whose form いる is also the key いらない's; 要る is not the key
    いらない, nor 足りる 足りない; 持つ is not 持ってった (the analyzer keeps only 持つ of it): no phrase for them."""
    words, _, _ = library.lookup._query_words(q)
    got = {a for alts, _ in words for a in alts}
    for phrase in ("辞退", "窃盗", "紛失"):
        assert (phrase in got) == (entry == phrase), (phrase, words)


def test_initials_weigh_as_the_word_they_stand_for(library):
    """PL, a player in a judge's notes, is no rare word: it weighs as プレイヤー, the word the synonym list gives."""
    lookup = library.lookup
    words, surfaces, _ = lookup._query_words("PL 辞退")
    weights = lookup._word_weights(words)
    pl = next(w for (_, x), s, w in zip(words, surfaces, weights, strict=True) if s == "PL" and x >= 1.0)
    words, surfaces, _ = lookup._query_words("プレイヤー 辞退")
    assert pl == pytest.approx(lookup._word_weights(words)[surfaces.index("プレイヤー")])
    assert pl < 0.2 * max(weights), (pl, weights)


def test_a_story_s_setting_is_no_rare_word(library):
    """R2 is the round, read as the texts' ラウンド; リセ, a name of the game no line spells, and 子 (a person, as
    奴) are no words of what happened: none weighs as a word the texts never use."""
    lookup = library.lookup
    words, surfaces, _ = lookup._query_words("リセR2で警告、R5でまた警告をもらった子")
    assert "リセ" not in surfaces and "子" not in surfaces, surfaces
    rounds = [alts for (alts, x), s in zip(words, surfaces, strict=True) if s == "R" and x >= 1.0]
    assert len(rounds) == 2 and all("ラウンド" in a for a in rounds), rounds
    # a latin R that is no round's label stays as typed
    words, surfaces, _ = lookup._query_words("R 警告")
    assert all("ラウンド" not in a for a, _ in words), words


@pytest.mark.parametrize(
    ("q", "read"),
    [("SE 時間切れ 1-0 G2途中", "勝利"), ("スイス 時間切れ 1-1", "同数"), ("時間切れ ２－２", "同数"),
     ("10-4の違反", None), ("1-2枚多く引いた", None)],
)  # fmt: skip
def test_a_game_score_is_read_as_the_texts_words(library, q, read):
    """A game score (1-0: one player ahead; 1-1: both even) adds the texts' words for it, as weaker words; a
    section number (10-4) and a count (1-2枚) are no score."""
    words, surfaces, _ = library.lookup._query_words(q)
    extra = [alts for (alts, x), s in zip(words, surfaces, strict=True) if not s and 0 < x < 1]
    got = {a for alts in extra for a in alts}
    if read is None:
        assert not {"同数", "勝利"} & got, extra
    elif read == "同数":
        assert "同数" in got, extra
    else:
        assert read in got and "同数" not in got, extra


def test_a_removal_rule_without_a_consequence_has_a_badge(client):
    """A removes rule that names no consequence (the fixture game's 警告 2 回で失格) shows the text's own words
    for what follows, not an empty badge."""
    html = client.get("/wizard/hoshikuzu", query_string={"q": "警告を2回受けた"}).get_data(as_text=True)
    assert '<span class="badge"></span>' not in html
    assert re.search(r'<span class="badge">[^<]+</span> 自動で適用', html)


@pytest.mark.parametrize(
    ("q", "section"),
    [("スコアカード 返送忘れ 3週たった", "score-cards"), ("デッキリスト 書き漏れ多数 返送分", "deck-lists")],
)  # fmt: skip
def test_a_section_shows_its_line_that_a_penalty_may_follow(client, q, section):
    """「…返送して下さい」 and 「…返送されなかった場合、…ペナルティが与えられることがあります」 hold the story's words
    alike: the section shows the second, and so leaves the penalty to the judge."""
    first = _api(client, q, "lycee")["results"][0]
    assert first["id"] == f"section:lycee/guideline/{section}", first["id"]
    assert first["discretion"] and "ことがあります" in first["why"]["snippet"], first["why"]["snippet"]


def test_a_levels_own_line_answers_that_level(client):
    """ijinden ch10-3 「…違反行為によってゲームの続行が不可能になった場合に対して与えられます」: the section's answer on
    that line is 【敗北】, the judge deciding whether the story is such a case (lookup pass 13)."""
    r = _api(client, "違反行為のせいでゲームの続行が不可能になった", "ijinden")["results"][0]
    assert r["kind"] == "section" and r["section"] == "ijinden/floor-rules/ch10-3"
    assert r["penalty"] == "敗北" and r["penalty_id"] == "defeat" and r["discretion"]
    # who alone may issue 【敗北】 (ch10-3), in the answer and on the page, as every offer of 【敗北】 says
    assert "主催者から【敗北】を与えることが許可されたジャッジのみ" in r["discretion_note"]
    html = client.get(
        "/wizard/ijinden", query_string={"q": "違反行為のせいでゲームの続行が不可能になった"}
    ).get_data(as_text=True)
    assert "【敗北】を与えられるのは大会主催者と" in html


def test_a_storys_counts_reach_a_rule(client):
    """警告1回と注意2回: 注意 2 点 are 警告 1 点, two 警告 remove the player (the standing engine); 二回目の注意 reaches
    only the conversion."""
    r = _api(client, "警告を1回と注意を2回受けたプレイヤー", "lycee")["results"]
    assert r[0]["id"] == "lycee/rule:warning-removal"
    r = _api(client, "二回目の注意を受けたプレイヤー", "lycee")["results"]
    assert r[0]["id"] == "lycee/rule:caution-to-warning"


def test_a_level_is_counted_by_its_mark_and_a_count_without_a_counter(client):
    """Lycee's marks as the policy gives them (N, W; not inside a latin word), a count after the level with no
    counter (警告1、 W1 N2) and an ordinal (N4つ目): each level's count; a level the story denies (Wはなし) counts
    none, and the count before it stays."""
    from judgeapp.lookup import _counts, _story

    lycee = client.application.extensions["judgeapp.library"].policies.get("lycee")
    assert _counts(lycee, _story("N4つ目 Wはなし")) == {"注意": 4}
    assert _counts(lycee, "W1 N2 累積 どうなる") == {"注意": 2, "警告": 1}
    assert _counts(lycee, "R2で警告1、R4で注意を2回もらった子") == {"注意": 2, "警告": 1}
    assert _counts(lycee, "N2 Wなし") == {"注意": 2}
    for text in ("WINした人", "注意5分", "W杯の話"):
        assert _counts(lycee, text) == {}, text


def test_a_new_penalty_and_many_penalties_are_counted(client):
    """また注意 is one more than the earlier ones (counted, or each named once); 何回も・毎回 are the text's
    「何度も」, two at least and no more; 注意されても is telling, not a record; または is "or"."""
    from judgeapp.lookup import _counts

    policies = client.application.extensions["judgeapp.library"].policies
    lycee, ijinden = policies.get("lycee"), policies.get("ijinden")
    assert _counts(lycee, "注意1回と警告1回もらってる人がまた注意") == {"注意": 2, "警告": 1}
    assert _counts(lycee, "R2で警告、R5でまた警告をもらった子") == {"警告": 2}
    assert _counts(lycee, "すでに注意もらってる人がまたカードの扱いで注意受けた") == {"注意": 2}
    assert _counts(lycee, "注意または警告のどちらを出すか迷っています") == {}
    assert _counts(ijinden, "同じダイバーが今日3回目のドローしすぎ。毎回注意で済ませてきた") == {"注意": 2}
    assert _counts(ijinden, "警告何回ももらってるダイバー、また違反") == {"警告": 2}
    assert _counts(ijinden, "観戦者がなんども注意されてもゲームのはなしをやめません") == {}


def test_the_rule_a_record_reaches_comes_first_and_fits(client):
    """What the counts reach goes before the infraction the story also tells, and fits where the story's other
    words are few: the removal (注意 2 点 = 警告 1 点, 警告 2 点), the conversion, イジンデン's upgrades (discretion;
    who alone may issue 【敗北】 said, as the standing's upgrades say it)."""
    r = _api(client, "注意1回と警告1回もらってる人がまた注意", "lycee")["results"]
    assert r[0]["id"] == "lycee/rule:warning-removal"
    body = _api(client, "研修問題：注意を4回受けたプレイヤーは規定上どうなりますか", "lycee")
    assert not body.get("none") and body["results"][0]["id"] == "lycee/rule:warning-removal"
    body = _api(client, "すでに注意もらってる人がまたカードの扱いで注意受けたんだけど", "lycee")
    assert not body.get("none") and body["results"][0]["id"] == "lycee/rule:caution-to-warning"
    r = _api(client, "同じダイバーが今日3回目のドローしすぎ。毎回注意で済ませてきた", "ijinden")["results"]
    assert r[0]["id"] == "ijinden/rule:caution-upgrade" and r[0]["penalty"] == "警告" and r[0]["discretion"]
    assert any(x["id"] == "ijinden/extra-draw" for x in r[1:])
    r = _api(client, "警告何回ももらってるダイバー、また違反", "ijinden")["results"]
    assert r[0]["id"] == "ijinden/rule:warning-upgrade" and r[0]["penalty"] is None
    assert "【敗北】を与えられるのは大会主催者と" in r[0]["discretion_note"]
    html = client.get("/wizard/ijinden", query_string={"q": "警告何回ももらってるダイバー"}).get_data(
        as_text=True
    )
    assert "【敗北】を与えられるのは大会主催者と" in html


def test_an_infraction_told_as_a_repeat_reaches_the_upgrade_of_its_level(client):
    """「ドローの余分 今日3回目」: イジンデン's extra draw is 【注意】, its third time is 【注意】 received before (ch10
    「ペナルティが科せられた後もルール違反が繰り返し行われた場合」): ch10-1's upgrade first, left to the judge, the
    infraction after it."""
    r = _api(client, "ドローの余分 今日3回目 同じ人", "ijinden")["results"]
    assert r[0]["id"] == "ijinden/rule:caution-upgrade" and r[0]["discretion"]
    assert r[1]["id"] == "ijinden/extra-draw"
    # an ordinal of no infraction with a level is no record (Lycee's 引き直し: the procedure, no rule first)
    r = _api(client, "マリガン2回目もキャラ0だった もう1回いい？", "lycee")["results"]
    assert r[0]["kind"] != "rule"


def test_a_compound_of_a_level_and_telling_to_take_care_are_no_record(client):
    """注意不足, 注意点, 注意事項 are words of their own, and 注意して見て, 注意するように tell a player to take care:
    none is a 注意 received, even after また or 何回も (review of pass 18); 注意した and 注意を受けた stay records."""
    from judgeapp.lookup import _counts

    policies = client.application.extensions["judgeapp.library"].policies
    lycee, ijinden = policies.get("lycee"), policies.get("ijinden")
    for text in (
        "また注意不足でカードを落とした",
        "また注意点を確認してください",
        "また注意事項を読まずに遅刻",
        "また注意して見ていたら相手がカードを落とした",
        "またジャッジが注意して見ています",
        "また注意するように言った",
    ):
        assert _counts(lycee, text) == {}, text
    assert _counts(ijinden, "ジャッジに何回も注意してと言われた") == {}
    assert _counts(lycee, "前にも注意を受けていてまた注意") == {"注意": 2}
    assert _counts(lycee, "さっき注意したプレイヤーがまた注意") == {"注意": 2}
    r = _api(client, "また注意不足でカードを落とした", "lycee")["results"]
    assert not r or r[0]["kind"] != "rule"


def test_an_ordinal_of_a_round_a_game_or_a_turn_is_no_repeat(client):
    """3回目のラウンド, ゲーム2回目, 2度目のマリガン count the round, the game, the mulligan, not the infraction: the
    extra draw is no third 【注意】 (review of pass 18); 2回目の余分なドロー still is."""
    for q in (
        "3回目のラウンドで余分にドローした",
        "今日2度目のマリガンで引きすぎた",
        "5回目のターンで余分に引いた",
        "ゲーム2回目で余分にドローした",
        "3回目の対戦で余分にドローした",
    ):
        r = _api(client, q, "ijinden")["results"]
        assert r[0]["id"] == "ijinden/extra-draw", (q, r[0]["id"])
    r = _api(client, "同じダイバーが2回目の余分なドロー", "ijinden")["results"]
    assert r[0]["id"] == "ijinden/rule:caution-upgrade"


def test_an_english_opponent_is_the_opponent_not_the_tiebreaker(library):
    """「opponent」 typed in English is the story's 相手; the dictionary reads it オポネント, the synonym list's key
    for the tiebreaker (Japanese jargon), which answered 「opponent insulted me」 with 6d's standings."""
    from judgeapp.lookup import _story

    assert _story("my opponent was late") == "my 相手 was late"
    for q in ("opponent insulted me", "my opponent was late"):
        r = library.lookup.search(q, game="tcg-taikai", limit=3)
        assert r.none or r.matches[0].answer.key != "section:tcg-taikai/floor-rules/6d", q


def test_a_count_alone_does_not_make_a_game_fit_in_every_games_lookup(library):
    """注意 and 警告 are both laddered games' levels: in the lookup of every game a game fits by its words, so a
    story of イジンデン's ダイバー (its name spelled as the text does not: 伊人伝) does not get Lycee's removal first."""
    r = library.lookup.search_all("伊人伝で、もう警告3回目のダイバー。次どうする")
    assert r.matches[0].answer.key == "ijinden/rule:warning-upgrade"
    assert all(m.answer.game != "lycee" for m in r.matches)


def test_a_denied_word_finds_no_synonym_key(client):
    """故意ではない is no 故意 (the list's key, 意図的に): the peeking entry does not find it."""
    said = _api(client, "相手の手札が見えたけど故意だと言っている", "ijinden", limit=5)["results"]
    denied = _api(client, "相手の手札が見えたけど故意ではないと言っている", "ijinden", limit=5)["results"]
    peek = next(r for r in said if r["id"] == "ijinden/peeking")
    assert "故意" in peek["why"]["words"]
    # (an answer whose own words say 故意, as extra-cards-intentional's do, is not the list's key)
    assert all("故意" not in r["why"]["words"] for r in denied if r["id"] == "ijinden/peeking")
    assert any(r["id"] == "ijinden/peeking" for r in denied)


# A story written word by word (the twentieth writer's): read without its spaces, its counters in hiragana as
# the texts write them, two English words as the texts' one katakana word, and a game's name left out.
@pytest.mark.parametrize(
    "q, read",
    [
        ("プレイヤー が あいて を おしました", "プレイヤーが あいてを おしました"),
        ("注意 2かい と 警告 1かい を うけた", "注意2回と 警告1回を うけた"),
        ("1ラウンド め で 注意", "1ラウンド目で 注意"),
        ("game loss に なった", "game lossに なった"),
        # a phone note's spaces part its phrases: they stay
        ("スコアカード 返送忘れ 3週たった", "スコアカード 返送忘れ 3週たった"),
    ],
)
def test_a_story_written_word_by_word_is_read_as_one(q, read):
    from judgeapp.lookup import _story

    assert _story(q) == read


def test_a_lone_particle_keeps_the_writers_break_after_it(library):
    """Joined to the next word, a lone particle is read as part of it (あいてがかった: がかる, as in 青みがかる;
    ないでかくした: でかい); the space after it stays, so the next word is read on its own."""
    from judgeapp.lookup import _story

    story = _story("さいご は あいて が かった と おもう")
    assert story == "さいごは あいてが かったと おもう"
    words, surfaces, _ = library.lookup._query_words(story)
    assert not any("ガカル" in alts for alts, _ in words), surfaces
    assert any("r:カッ" in alts for alts, _ in words), surfaces


def test_english_words_and_a_games_name(library):
    lookup = library.lookup
    words, surfaces, _ = lookup._query_words("game lossになった")
    assert any("ゲームロス" in alts for alts, _ in words), surfaces
    assert lookup._name_re.sub(" ", "TCG大会規定の大会でリセット").split() == ["の大会でリセット"]


def test_a_review_of_the_stories_read(client):
    """A review of passes 13 and 14: the め of めくる is no 目 after a count; a counter in hiragana before a
    particle is a counter (2かいもらった); a count denied, of 不注意, or of two people is no player's count; only
    the verbs of force in 〜つける are their first verb (投げつける is no 投げる: conceding)."""
    from judgeapp.lookup import _counts, _head, _story

    assert _story("山札を3枚めくってしまった") == "山札を3枚めくってしまった"
    assert _story("5まいめくる") == "5枚めくる"
    assert _story("注意を2かいもらった") == "注意を2回もらった"
    assert _story("注意を2かいと警告を1かい") == "注意を2回と警告を1回"
    assert _story("2かいめの注意") == "2回目の注意"
    lycee = client.application.extensions["judgeapp.library"].policies.get("lycee")
    assert _counts(lycee, "警告1回と注意2回") == {"注意": 2, "警告": 1}
    for text in ("相手は注意2回、自分は警告1回", "警告を2回もらっていない", "不注意が2回続いた"):
        assert _counts(lycee, text) == {}, text
    from judgeapp.search import analyzer

    (thrown,) = [w for w in analyzer().words("投げつけた") if w.verb]
    assert _head(thrown) == ()
    (hit,) = [w for w in analyzer().words("殴りつけた") if w.verb]
    assert _head(hit)
    # a game's own names only leave its own stories (大会規定 is tcg-taikai's name, a word in a dm-senshu story)
    assert not _api(client, "大会規定違反", "dm-senshu").get("none")
    assert _api(client, "大会規定違反", "dm-senshu")["results"]
    # who may issue 【敗北】: ch10-3's line first, not answers holding only ジャッジ and 出し
    r = _api(client, "フロアジャッジが敗北を出していいの？", "ijinden")["results"]
    assert r[0]["section"] == "ijinden/floor-rules/ch10-3"


def test_a_games_name_is_no_evidence_in_its_character_pairs(client):
    """The game's own name typed in its story is left out of the story's character pairs too, as out of its
    words: 「TCG大会規定 で 遅刻」 is 遅刻 in tcg-taikai, whose text has no lateness rule (a review found the name's
    pairs answering it with a card in a foreign language)."""
    alone = _api(client, "遅刻", "tcg-taikai")
    named = _api(client, "TCG大会規定 で 遅刻", "tcg-taikai")
    assert alone.get("none") and named.get("none")


def test_the_person_a_story_is_about_is_no_word(library):
    """本人 and 当人 (the player the story is about) say who, like 俺 or こいつ: no text uses them, and as a word
    they weighed as the story's rarest, so a story the text covers could fit nothing (the sixteenth pass)."""
    lookup = library.lookup
    for q in ("本人が手を挙げた", "当人が認めた"):
        words, surfaces, _ = lookup._query_words(q)
        assert not any(s in ("本人", "当人") for s in surfaces), surfaces
    told = lookup.search("本人が誤ってカードを余分に引いたと申告した", game="ijinden", limit=3)
    plain = lookup.search("誤ってカードを余分に引いたと申告した", game="ijinden", limit=3)
    assert told.matches[0].answer.key == plain.matches[0].answer.key == "ijinden/extra-draw"
    assert told.matches[0].coverage == plain.matches[0].coverage


def test_an_answer_holding_one_word_alone_ranks_under_one_holding_more(library, monkeypatch):
    """In the ranking by coverage an answer whose evidence holds one of the story's words alone weighs
    ONE_WORD: the spectators' manners (観戦 alone) go under asking a spectator for advice (three of the words);
    a story of one word keeps its order (every answer holds one word at most)."""
    import judgeapp.lookup as lk

    lookup, kept = library.lookup, lk.ONE_WORD
    q = "観戦している人が「そこで攻撃」と叫んだ"

    def keys(story, one_word):
        monkeypatch.setattr(lk, "ONE_WORD", one_word)
        return [(m.answer.key, m.found) for m in lookup.search(story, game="ijinden", limit=3).matches]

    assert kept < 1.0
    before, after = keys(q, 1.0), keys(q, kept)
    assert before[1] == ("ijinden/spectator-manners", 1), before
    assert after[1][0] == "ijinden/asking-spectator-advice" and after[1][1] >= 2, after
    assert after[2] == before[1]
    assert keys("遅刻", 1.0) == keys("遅刻", kept)


def test_the_lookup_across_games_reads_no_games_name_and_puts_the_named_game_first(client, library):
    """A review: each game was searched with only its own names left out, so another game's name counted as
    evidence (TCG大会規定 found ijinden's lines holding 大会 and 規定). Now every game's names leave the story in
    every game, and the game the story names comes first where its text fits, or the page says it does not."""
    lookup = library.lookup
    found = lookup.search_all("TCG大会規定 で 遅刻")
    assert found.named == ("tcg-taikai",)
    plain = lookup.search_all("遅刻")
    assert [m.answer.key for m in found.matches] == [m.answer.key for m in plain.matches]
    html = client.get("/wizard/lookup", query_string={"q": "TCG大会規定 で 遅刻"}).get_data(as_text=True)
    said = f"{library.corpus.games['tcg-taikai'].name}の規定には、この状況に当てはまるものが見つかりませんでした。"
    assert said in html
    named = lookup.search_all("イジンデン で 悪質な違反")
    assert named.named == ("ijinden",) and named.matches[0].answer.game == "ijinden"
    assert library.lookup.search_all("DMで暴言を言われた").named == ()  # DM: a direct message as likely


def test_a_late_drop_may_be_deemed_a_lost_match(client):
    """Lycee 途中棄権: a drop asked for while the next round's score cards are being processed (or after) lets the
    event deem that match lost (「みなしても構いません」): that answer, left open, with the plain drop (no penalty)
    beside it; a drop at another time has no such answer first."""
    results = _api(client, "次の試合のスコアカード処理中にドロップしたいと言ってきた", "lycee")["results"][:3]
    late = results[0]
    assert late["id"] == "lycee/drop-late" and late["penalty"] == "試合の敗北" and late["discretion"] is True
    assert (
        "みなしても構いません" in late["discretion_note"]
        and "ペナルティではありません" in late["discretion_note"]
    )
    assert late["citations"][0] == "lycee/guideline/drop"
    assert any(r["id"] == "lycee/drop" and r["penalty"] is None for r in results)
    assert _api(client, "途中で帰りたいと言ってきた", "lycee")["results"][0]["id"] == "lycee/drop"


def test_the_opponent_a_player_accuses_is_a_light_word(library, monkeypatch):
    """相手 in a player's story (「相手が…してた」, 「負けた相手が…」) says who, as the story's setting: it weighs
    LIGHT_WEIGHT in the coverage (lookup pass 17), so a story whose one rare word is what the opponent did
    fits where the text names it (つきまとう: 3b-ii's いやがらせ)."""
    import judgeapp.lookup as lk

    lookup = library.lookup
    q = "負けた相手が休憩中もずっとつきまとってくる"
    _, surfaces, light = lookup._query_words(q)
    assert any(surfaces[k] == "相手" for k in light), (surfaces, light)
    got = lookup.search(q, game="tcg-taikai", limit=3)
    assert not got.none and got.matches[0].answer.key == "tcg-taikai/harassment"
    monkeypatch.setattr(lk, "OPPONENT", set())
    _, surfaces, light = lookup._query_words(q)
    assert not any(surfaces[k] == "相手" for k in light)
    assert lookup.search(q, game="tcg-taikai", limit=3).none


def test_english_grammar_is_no_word_of_a_story(library):
    """A non-native judge's English grammar (what, by, in, can't) is no word of the story: no text uses it, and it
    would weigh as the story's rarest words (lookup pass 19); English content words stay (draw, penalty)."""
    words, surfaces, _ = library.lookup._query_words("extra card draw by mistake, penalty what?")
    assert not {"by", "what"} & set(surfaces), surfaces
    assert {"draw", "penalty", "mistake"} <= set(surfaces), surfaces
    got = library.lookup.search("extra card draw by mistake, penalty what?", game="ijinden", limit=3)
    assert not got.none and got.matches[0].answer.key == "ijinden/extra-draw"


def test_a_word_typed_in_romaji_is_read_as_kana(library):
    """A word of the texts typed in romaji (chuui: 注意) is read in hiragana; an English word the dictionary reads
    as a loan word (game, same) and a word that is no romaji (stolen) stay as typed."""
    lookup = library.lookup
    assert lookup._romaji("same player chuui many times") == "same player ちゅうい many times"
    assert lookup._romaji("game loss chikoku") == "game loss ちこく"
    assert lookup._romaji("stolen deck caught") == "stolen deck caught"


def test_a_count_in_english_and_a_level_in_kana_or_english_are_counted(client):
    """A count said in English is written as the texts write it (2 times: 2回, many times: 何回も, 10 minutes: 10分),
    and a level is named by its reading (ちゅうい) and by the synonym list's latin word for it alone (warning: 警告),
    so 「warning 2 times」 reaches Lycee's removal and 「chuui many times」 イジンデン's upgrade."""
    from judgeapp.lookup import _counts, _story

    library = client.application.extensions["judgeapp.library"]
    lookup = library.lookup
    lycee, ijinden = library.policies.get("lycee"), library.policies.get("ijinden")
    assert _story("warning 2 times in lycee") == "warning 2回 in lycee"
    assert (
        _story("chuui many times, twice, 3rd time, late 10 minutes") == "chuui 何回も, 2回, 3回目, late 10分"
    )
    aliases = lookup._level_aliases
    assert _counts(lycee, _story("warning 2 times"), aliases) == {"警告": 2}
    assert _counts(ijinden, "ちゅうい 何回も", aliases) == {"注意": 2}
    assert _counts(lycee, "ふちゅうい 2回", aliases) == {}
    r = _api(client, "warning 2 times in lycee, what happens?", "lycee")["results"]
    assert r[0]["id"] == "lycee/rule:warning-removal"
    r = _api(client, "same player chuui many times, upgrade OK?", "ijinden")["results"]
    assert r[0]["id"] == "ijinden/rule:caution-upgrade" and r[0]["penalty"] == "警告"


def test_a_latin_key_is_found_before_a_number(library):
    """A key of the synonym list in latin letters is found as a latin word of the story, also where the squashed
    story runs it into a number (tardy 10分: tardy10分), and two latin words side by side make a key of two (lost
    card); a latin key inside a longer latin word is none (tardyness)."""
    lookup = library.lookup

    def phrases(q):
        words, _, _ = lookup._query_words(q)
        return {a for alts, _ in words if alts[:1] == ("p:",) for a in alts[1:]}

    assert any("遅刻" in p for p in phrases("tardy 10分 penalty")), phrases("tardy 10分 penalty")
    assert any("紛失" in p for p in phrases("lost card main deck")), phrases("lost card main deck")
    assert not phrases("lost game 1")
    assert not any("遅刻" in p for p in phrases("tardyness 10分"))
    got = lookup.search("late 10 minutes to table, penalty?", game="lycee", limit=3)
    assert "lycee/late-seat" in [m.answer.key for m in got.matches]


def test_a_chair_alone_is_no_vandalism(library):
    """A story that only has a chair in it is no 器物損壊 (3b-ii's suspension): 椅子 is no judges' word of vandalism
    (a review of pass 19); the chair broken still is."""
    lookup = library.lookup
    assert lookup.search("椅子から立ち上がった", game="tcg-taikai").none
    got = lookup.search("相手が椅子を蹴って壊した", game="tcg-taikai", limit=3)
    assert "tcg-taikai/vandalism" in [m.answer.key for m in got.matches]
