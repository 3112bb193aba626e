"""Search quality on data tables, each with the sections that must come back.

- tests/cases/search_queries.yaml, our judges' query table: top 5 for ≥99%, first for ≥92% (it stood at
  98.5% / 88.5% before issue 10 and must not drop);
- tests/cases/search_unseen_tune.yaml and search_unseen_report.yaml: queries written from the source texts
  only by someone who never saw our code or data (issue 10 point 5), and search_unseen_tune2.yaml, a second
  tuning table by another such writer; the tuning tables are what the analysis was tuned on, the
  reporting half is never read by a developer: its figures come from here and the bench.
  Done when the reporting half has top 5 ≥95% and first ≥85% (held below);
- tests/cases/search_unseen_tune3.yaml and search_unseen_check3.yaml: a third table written from the texts
  only, split the same way: tune3 is tuned on, check3 is a reporting half (figures only, never its rows);
- tests/cases/search_unseen_tune4.yaml and search_unseen_check4.yaml: a fourth table, by a fourth writer, split
  the same way: tune4 is a tuning half (held out, not tuned on, in the quality pass), check4 a reporting half;
- tests/cases/search_unseen_tune5.yaml and search_unseen_check5.yaml: a fifth table, by a fifth writer, split the
  same way (tune5 tuned on, check5 a reporting half);
- tests/cases/search_unseen_tune6.yaml and search_unseen_check6.yaml: a sixth table, by a sixth writer, split the
  same way (tune6 tuned on, check6 a reporting half);
- tests/cases/search_unseen_tune7.yaml and search_unseen_check7.yaml: a seventh table, by a seventh writer, split
  the same way (tune7 tuned on, check7 a reporting half);
- tests/cases/search_spelling.yaml: loose spellings (katakana within one edit, Latin names typed in kana,
  section numbers written another way): every row in the top 5, the first for ≥94%.
"""

from __future__ import annotations

import pytest

from judgeapp.textnorm import section_number_keys

from .conftest import CASES_DIR, load_cases

SHARED_APP = True  # the tests only read: one app for the module (tests/conftest.py)

QUERIES = load_cases("search_queries.yaml")
SPELLING = load_cases("search_spelling.yaml")


def evaluate(index, limit: int = 5, queries=None):
    """(first-hit count, top-5 count, misses) over the query table."""
    first = top5 = 0
    misses = []
    for case in QUERIES if queries is None else queries:
        ids = [h.id for h in index.search(case["q"], game=case.get("game"), limit=limit).hits]
        expected = set(case["expect"])
        if ids and ids[0] in expected:
            first += 1
        if expected & set(ids):
            top5 += 1
        else:
            misses.append(f"{case['q']!r} ({case.get('game')}): got {ids[:3]}, want {case['expect'][0]}")
    return first, top5, misses


def test_query_table_is_realistic_and_large_enough():
    assert len(QUERIES) >= 60
    games = {c.get("game") for c in QUERIES}
    assert {"tcg-taikai", "ijinden", "lycee", "dm-senshu"} <= games


def test_expected_sections_exist(library):
    for case in QUERIES:
        for sid in case["expect"]:
            assert sid in library.corpus.sections, (case["q"], sid)


def test_search_quality_on_the_query_table(library):
    first, top5, misses = evaluate(library.index)
    n = len(QUERIES)
    print(f"\nquery table: {n} queries, top-5 {top5 / n:.1%}, first {first / n:.1%}")
    assert top5 / n >= 0.99, "\n".join(misses)
    assert first / n >= 0.92, f"first-hit {first}/{n}"  # measured 92.3% (91.5% before the quality pass)


def test_loose_spellings_find_the_section(library):
    first, top5, misses = evaluate(library.index, queries=SPELLING)
    n = len(SPELLING)
    assert {c["kind"] for c in SPELLING} == {"katakana", "latin", "number"}
    assert top5 == n, "\n".join(misses)
    assert first / n >= 0.94, f"first-hit {first}/{n}"  # measured 19/19


@pytest.mark.parametrize(
    "written, key",
    [
        ("6b-iii", "6.b.3"),
        ("6biii", "6.b.3"),
        ("６Ｂ－ⅲ", "6.b.3"),
        ("6.b.3", "6.b.3"),
        ("6-b-iii", "6.b.3"),
        ("第十章", "10"),
        ("第１０章", "10"),
        ("10章", "10"),
        ("ch10", "10"),
        ("第 ９ 章", "9"),
        ("7-1", "7.1"),
        ("第7章Ⅰ", "7.1"),
        ("9章2節", "9.2"),
        ("三百一", "301"),
        ("三〇一", "301"),
        ("①", "1"),
    ],
)
def test_every_writing_of_a_section_number_gives_its_key(written, key):
    assert key in section_number_keys(written)


@pytest.mark.parametrize("text", ["ID", "BAN", "スリーブ", "一般", "ch10-principles", ""])
def test_words_are_not_section_numbers(text):
    assert section_number_keys(text) == []


@pytest.mark.parametrize(
    "text", ["第三者が口を出した", "第2ゲームで遅刻", "第一に", "第一回戦で遅刻", "第3者"]
)
def test_a_numeral_that_begins_a_word_is_no_section_number(text):
    """第三者 is a third party, 第2ゲーム the second game: not section 3 or chapter 2 (a review's finding)."""
    from judgeapp.search.analysis import query_numbers

    assert query_numbers(text)[1] == []
    assert query_numbers("第3条b項 期間")[1] == ["第3条b項"]  # a numbering unit after the numeral still is


@pytest.mark.parametrize("text", ["10/4", "10／4", "１０－４", "10-4", "10.4"])
def test_two_numbers_joined_are_a_chapter_and_its_part_not_one_number(library, text):
    """10/4 is ijinden's ch10-4 (第十章④), not dm-senshu's 104 (a review's finding: / joined nothing)."""
    hits = [h.id for h in library.index.search(text).hits]
    assert hits[0] == "ijinden/floor-rules/ch10-4"


@pytest.mark.parametrize(
    "text, expected",
    [
        ("こうさんした", "lycee/guideline/concession"),
        ("ちえんした", "ijinden/floor-rules/ch10-2"),
        ("すまほって", "tcg-taikai/floor-rules/4k"),
        ("どろっぷって", "tcg-taikai/floor-rules/6e"),
    ],
)
def test_a_synonym_key_typed_in_kana_with_its_ending_is_still_found(library, text, expected):
    """A key's reading need not end where SudachiPy ends a word (すまほって is read すま|ほっ|て): only where it
    begins is checked, so that かえる is not read in つかえる (a review: 68 such queries had found nothing)."""
    assert expected in [h.id for h in library.index.search(text, limit=3).hits]


def test_a_synonym_key_read_in_kana_ends_where_a_word_or_its_ending_does(library):
    """けんかい (見解) holds ケンカ's reading and ねっとり ネット's, but what follows is no ending: no key (a review:
    3b-ii's violence came first for じゃっじの けんかいは)."""
    hits = [h.id for h in library.index.search("じゃっじの けんかいは", limit=3).hits]
    assert "tcg-taikai/floor-rules/3b-ii" not in hits
    assert library.index.search("ねっとりした").hits == []


def test_nothing_found_stays_nothing(library):
    """Weak signals (some character pairs) never make a hit on their own: プレミアム殿堂 is dm-senshu's."""
    assert library.index.search("プレミアム殿堂", game="lycee").hits == []
    assert library.index.search("ほげほげふがふが", game=None).hits == []


@pytest.mark.parametrize(
    "table, bars",
    [
        (
            "search_unseen_tune.yaml",
            (0.99, 0.96),
        ),  # measured 100% / 96.5% (98.8% / 95.3% before the overviews)
        ("search_unseen_tune2.yaml", (0.99, 0.96)),  # measured 100% / 97.0% (96.0% before)
        (
            "search_unseen_tune3.yaml",
            (0.99, 0.93),
        ),  # measured 100% / 94.0% (98.8% / 92.9% before the 4th pass)
        # issue 10's done-when bar is 95% / 85% (measured 100% / 89.7%; 88.5% before the second quality pass,
        # 87.2% before the first)
        ("search_unseen_report.yaml", (0.99, 0.89)),
        ("search_unseen_check3.yaml", (0.92, 0.68)),  # measured 92.1% / 68.4% (before tune3's: 69.7%)
        # a fourth table, held out in the quality pass: 90.2% / 74.5% before, 91.2% / 77.5% held out, 92.2% /
        # 78.4% after one change drawn from its rows (a katakana word then hiragana); 94.1% / 80.4% after the
        # overviews, clipped compounds and loan words in hiragana; 96.1% / 83.3% after the fourth quality pass
        # 97.1% / 85.3% before the fifth quality pass (its synonym entries), 97.1% / 87.3% after
        ("search_unseen_tune4.yaml", (0.97, 0.87)),
        # measured 95.6% / 72.1% (94.1% / 72.1% before the second quality pass, 67.6% first before the first)
        ("search_unseen_check4.yaml", (0.95, 0.72)),
        # a fifth table: 91.0% / 70.8% before the overviews and clipped compounds, 91.0% / 69.7% held out
        # (with the overview's weight, then dropped), 93.3% / 77.5% after; 93.3% / 78.7% after the same-reading
        # kanji typos (third quality pass); 95.5% / 84.3% after the fourth (definitions, counts asked for…)
        # (96.6% / 86.5% before the fifth quality pass, 96.6% / 88.8% after)
        ("search_unseen_tune5.yaml", (0.96, 0.88)),
        # measured 95.6% / 80.2% (94.5% / 79.1% before the second pass); 95.6% / 79.1% after the seventh pass's
        # 中身 entry (kept on the tuning halves' figures: tune7 and tune8 +1 each; this half is never read);
        # 94.5% / 83.5% after pass 18 (a heading's own number no word of its title: one top-5 hit lost here, first
        # +2; pass 18 was kept on the tuning halves' figures, where it gains; this half is never read)
        ("search_unseen_check5.yaml", (0.94, 0.81)),
        # a sixth table (271 queries by a sixth writer, 2026-12-01), first measured before any tuning on it:
        # tune6 92.3% / 79.6%, check6 89.1% / 68.2%
        # tune6 93.7% / 82.4% before the fifth quality pass, 95.8% / 84.5% after (85.2% in the bench)
        ("search_unseen_tune6.yaml", (0.95, 0.84)),
        ("search_unseen_check6.yaml", (0.89, 0.68)),
        # a seventh table (116 tuning queries by a seventh writer), measured before any of its rows was read:
        # 92.2% / 75.9% (the bench); 95.7% / 80.2% after the fifth quality pass (81.0% in the bench)
        # 95.7% / 82.8% in the bench after the seventh (中身); 81.9% here, where the fixture game is searched too
        ("search_unseen_tune7.yaml", (0.95, 0.81)),
        # an eighth and a ninth writer (2026-12-02), measured before any of their rows was read (the bench):
        # tune8 98.8% / 84.8%, check8 93.7% / 72.8%; tune9 97.6% / 81.5%, check9 94.4% / 77.8%
        # after the seventh quality pass (the game a query names; 中身): tune8 98.8% / 86.0%, tune9 97.6% / 82.1%
        # the game a query names was taken out again after review (docs/corpus.md, pass 7): 84.8% / 81.5% here
        ("search_unseen_tune8.yaml", (0.98, 0.84)),
        ("search_unseen_tune9.yaml", (0.97, 0.81)),
        # a tenth and an eleventh writer (2026-12-02; phone typing, voice input), measured before the eighth
        # quality pass (the bench): tune10 96.0% / 81.2%, tune11 92.5% / 74.1%; after it (romaji tails, English
        # words for loan words and keys) tune10 98.3% / 83.5%, tune11 unchanged (validated on, by its figures
        # only); here, where the fixture game is searched too: tune10 98.3% / 83.5%, tune11 92.5% / 73.0%
        ("search_unseen_tune10.yaml", (0.98, 0.83)),
        ("search_unseen_tune11.yaml", (0.92, 0.72)),
        # a twelfth and a thirteenth writer (2026-12-02; a store judge in Kansai speech, a trainee), measured
        # before the ninth quality pass (the bench): tune12 98.5% / 80.8%, tune13 95.3% / 79.5%; after it
        # (tuned on tune13, validated on tune12's figure only) tune12 unchanged, tune13 98.4% / 81.9%
        ("search_unseen_tune12.yaml", (0.97, 0.79)),
        ("search_unseen_tune13.yaml", (0.97, 0.80)),
        # a fourteenth and a fifteenth writer (2026-12-02; a terse head judge, a judge at a first big event),
        # measured before the tenth quality pass (the bench): tune14 94.4% / 77.8%, tune15 94.2% / 74.0%; after it
        # (tuned on tune15, validated on the older halves' figures only) tune14 94.4% / 79.6%, tune15 94.2% / 77.9%;
        # with the lookup's ninth pass merged (PL → プレイヤー puts 2k プレイヤー first for PLミス) tune14 78.7%; a
        # review then took out the numbered section's subsections (第7章 シャッフル put tcg-taikai's 7b over
        # ijinden's chapter 7): tune14 77.8%, tune15 76.9%; after the eleventh quality pass (a game named in the
        # query's words, tuned on tune14) tune14 96.3% / 86.1% on its branch
        ("search_unseen_tune14.yaml", (0.95, 0.85)),
        ("search_unseen_tune15.yaml", (0.94, 0.76)),
        # a sixteenth writer (2026-12-03; a young card-shop judge: slang, typos, MTG words), measured before the
        # twelfth quality pass (the bench): tune16 95.5% / 82.0%; after it (tuned on tune16) 99.1% / 87.4%, here,
        # where the fixture game is searched too, 99.1% / 86.5%
        ("search_unseen_tune16.yaml", (0.99, 0.86)),
        # a seventeenth writer (2026-12-03; a head judge who trains judges: quizzes, retold reports), measured
        # before the thirteenth quality pass (the bench): tune17 97.2% / 81.7%; after it (tuned on tune17: a game's
        # own name in its search, two synonym entries) 99.1% / 86.2%, here too
        ("search_unseen_tune17.yaml", (0.99, 0.85)),
    ],
)
def test_search_quality_on_unseen_queries(library, table, bars):
    """Figures only: a miss on the reporting half is never printed (nobody tunes on it)."""
    if not (CASES_DIR / table).exists():
        pytest.skip(f"tests/cases/{table} is not there yet")
    cases = load_cases(table)
    first, top5, _ = evaluate(library.index, queries=cases)
    n = len(cases)
    print(f"\n{table}: {n} queries, top-5 {top5 / n:.1%}, first {first / n:.1%}")
    assert top5 / n >= bars[0], f"{table}: top-5 {top5}/{n}"
    assert first / n >= bars[1], f"{table}: first {first}/{n}"


def test_a_kanji_typo_of_the_same_reading_finds_the_word(library):
    """Two or three kanji words that make no word of the corpus: its word with one kanji of the same reading
    (観選者 → 観戦者, 権理 → 権利); a single dictionary word is left as typed (一節 is not 一切)."""
    index = library.index
    assert [h.id for h in index.search("観選者", game="tcg-taikai").hits][:1] == ["tcg-taikai/floor-rules/2l"]
    typo = [qw for qw in index.analyse("権理 辞退") if qw.word.surface == "権理"]
    assert typo and typo[0].phrases
    assert not any(qw.phrases for qw in index.analyse("一節"))
    assert not any(qw.phrases for qw in index.analyse("出場停止"))


def test_a_word_typed_in_hiragana_that_sudachipy_misreads_is_a_part_of_its_own(library):
    index = library.index
    assert index._readings_apart("相手がこうちく") == ["相手が", "こうちく"]
    assert index._readings_apart("けいこくした") == ["けいこく", "した"]
    # grammar stays grammar, a word across the run's edge stays whole, a run of kana before a word stays whole
    assert index._readings_apart("ジャッジしている") == ["ジャッジしている"]
    assert index._readings_apart("のぞき見") == ["のぞき見"]
    assert index._readings_apart("すぺあかーど") == ["すぺあかーど"]


def test_a_question_what_a_thing_is_finds_the_section_defining_it(library):
    """〜って何, 〜っていつ, 〜とは: the section that defines the thing (its list of terms, Xとは, 「X」と呼ぶ),
    not one that mentions it; a count asked for (〜って何点) or a word that holds ちがい is no such question."""
    from judgeapp.search.analysis import DEFINITION_QUESTION, analyzer, defined_words

    index = library.index
    top = [h.id for h in index.search("マッチって何? ゲームとの違い", game="tcg-taikai").hits][:1]
    assert top == ["tcg-taikai/floor-rules/1b"]
    top = [h.id for h in index.search("試合開始っていつの時点?", game="lycee").hits][:1]
    assert top == ["lycee/guideline/intentional-draw"]
    for text in (
        "ダイバーって何",
        "げんちご って何",
        "試合開始とは",
        "マッチの意味",
        "オフィシャルって誰のこと",
    ):
        assert DEFINITION_QUESTION.search(text), text
    for text in ("引き分けって何点", "まちがい後で気づいた", "代用カードって何書けばいい?", "することは"):
        assert not DEFINITION_QUESTION.search(text), text
    an = analyzer()
    assert defined_words(an, "観戦者とは会場内にいる人物を指します") == ["観戦|者", "カンセンシャ"]
    assert defined_words(an, "プレイヤーは 4-8 人のポッドと呼ばれる単位に分けられます") == ["ポッド"]
    assert defined_words(an, "デッキとは別にスペアカードを用意できます。変更することはできません") == []


def test_a_judges_key_counts_only_as_a_word_of_its_own(library):
    """A key of synonyms.yaml typed in hiragana begins and ends where SudachiPy reads a word (けたい in
    抜けたい is no ケータイ, すり in すりかえ no スリ), and a key of one kanji is not inside a kanji word (卓 in
    電卓); a judges' word of two loan words is found clipped (サイチェン for サイドチェンジ)."""
    index = library.index

    def entries(text: str) -> list[list[str]]:
        return [index.synonyms[e][0] for e in index.synonym_entries(text)]

    assert not any("ケータイ" in keys for keys in entries("どらふと中に抜けたい"))
    assert any("ケータイ" in keys for keys in entries("けーたい"))
    assert not any("スリ" in keys for keys in entries("カードをすりかえた"))
    assert any("スリ" in keys for keys in entries("透明スリだけ"))
    assert not any("卓" in keys for keys in entries("電卓"))
    assert any("卓" in keys for keys in entries("となりの卓"))
    # a query in kana read for a key's reading: where SudachiPy begins and ends a word (かえる in つかえる is
    # no 帰る)
    assert not any("帰る" in keys for keys in entries("パラレル つかえる"))
    assert any("帰る" in keys for keys in entries("とちゅうでかえる"))
    assert any("サイドチェンジ" in keys for keys in entries("サイチェン 時間"))
    assert any("ダブルスリーブ" in keys for keys in entries("ダブスリ"))


def test_a_word_the_corpus_lacks_leans_on_its_synonym_group(library):
    """バレる is no word of the texts: its SudachiPy group (発覚's) weighs more than a known word's (終わる)."""
    from whoosh import query as Q

    from judgeapp.search.schema import WEIGHT

    index = library.index

    def syn_boosts(text: str) -> set[float]:
        found: set[float] = set()

        def walk(q: Q.Query) -> None:
            if isinstance(q, Q.Term) and q.fieldname == "syn":
                found.add(q.boost)
            for sub in getattr(q, "subqueries", ()) or ([q.child] if hasattr(q, "child") else []):
                walk(sub)

        walk(index.query(text))
        return found

    assert syn_boosts("バレた") == {WEIGHT["synonym_only"]}
    assert syn_boosts("終わった") == {WEIGHT["synonym"]}
    assert "ツク" not in [qw.word.forms[0] for qw in index.analyse("プレイについて")]


def test_a_count_asked_for_finds_the_section_giving_it(library):
    """何枚, なんにん: a number and that counter near the query's other words (５枚のカードをシールドとして)."""
    from judgeapp.search.analysis import analyzer, count_terms

    words = analyzer().words("自分のデッキから上から５枚のカードをシールドとして裏向きに配置する")
    assert "#枚|シールド" in count_terms(words) and "#枚|デッキ" in count_terms(words)
    index = library.index
    assert [h.id for h in index.search("シールド 何枚", game="dm-senshu").hits][:1] == [
        "dm-senshu/floor-rules/204"
    ]
    assert [h.id for h in index.search("ぽっど なんにん").hits][:1] == ["tcg-taikai/floor-rules/9c-ii"]


def test_a_count_of_times_is_one_counter_whichever_is_typed(library):
    """回 and 度 count the same thing: 2回 finds lycee's 「２度対戦しないように」 (third before)."""
    index = library.index
    assert [h.id for h in index.search("2回対戦しない", game="lycee").hits][:1] == [
        "lycee/guideline/swiss-draw"
    ]


def test_a_katakana_compound_the_corpus_lacks_is_found_by_its_first_and_last_words(library):
    """ライフメモ: ライフ (2b's ライフの記録); イカサマダイス: ダイス; ヘッドジャッジ is the corpus's words side by side."""
    index = library.index
    assert index._compound_head("ライフメモ", first=True) == "ライフ"
    assert index._compound_head("イカサマダイス") == "ダイス"
    top = [
        h.id for h in index.search("相手のライフメモずれてるの気づいたら言うべき?", game="tcg-taikai").hits
    ]
    assert top[:1] == ["tcg-taikai/floor-rules/2b"]
    query = repr(index.query("ヘッドジャッジいない"))
    assert "Term('reading', 'ヘッド', boost=0.5)" not in query


def test_what_a_phone_or_a_voice_leaves_in_a_query(library):
    """A romaji tail the kana input left (ちこk, かーf, まりがs) is completed to the corpus's reading it starts;
    a section number said in kana (さんびー, ななじょうのいー) is the number written; an interjection or a filler
    (うーん, あのー) is no word of the query."""
    ix = library.index
    assert ix.as_meant("ちこk") == "ちこく"
    assert ix.as_meant("ふんしつ かーf") == "ふんしつ かーど"
    assert ix.as_meant("まりがs") == "まりがん"
    assert ix.as_meant("DQ") == "DQ" and ix.as_meant("HJいない") == "HJいない"  # upper case: a word
    assert ix.search("ちこk").hits[0].id == "lycee/guideline/tardiness"
    assert ix.search("まりがs", game="lycee").hits[0].id == "lycee/guideline/mulligan"
    assert ix.as_meant("えーとさんびーってなに") == "えーと 3b ってなに"
    assert ix.search("さんびー").hits[0].id == "tcg-taikai/floor-rules/3b"
    assert ix.search("ななじょうのいー").hits[0].id == "tcg-taikai/floor-rules/7e"
    assert ix.search("ろくびーさん").hits[0].id == "tcg-taikai/floor-rules/6b-iii"
    assert ix.search("7のイー").hits[0].id == "tcg-taikai/floor-rules/7e"
    assert ix.search("だいじゅっしょう", game="ijinden").hits[0].id == "ijinden/floor-rules/ch10"
    # not a number: a numeral without a letter or 第 (参照), a Latin word (BO3), a count (2本目)
    for text in ("さんしょう", "BO3", "2本目", "しーるど 5まい", "さん"):
        assert ix.as_meant(text) == text
    assert [qw.word.surface for qw in ix.analyse("うーん遅刻")] == ["遅刻"]
    assert [qw.word.surface for qw in ix.analyse("あのー ほら 遅刻")] == ["遅刻"]


def test_a_query_typed_in_romaji_or_with_english_words(library):
    """A query typed in romaji is read in kana, the English words SudachiPy knows left as typed; a particle
    typed as a word of its own is none; an English word finds the nearest loan word by its letters."""
    ix = library.index
    from judgeapp.textnorm import romaji_to_hiragana

    assert romaji_to_hiragana("nakushita") == "なくした" and romaji_to_hiragana("shikkaku") == "しっかく"
    assert romaji_to_hiragana("wa") == "は" and romaji_to_hiragana("konnichiwa") == "こんにちわ"
    assert romaji_to_hiragana("card") is None and romaji_to_hiragana("swiss") is None
    assert ix.as_meant("sideboard no card nakushita") == "sideboard の card なくした"
    assert ix.as_meant("match to game no chigai wa nan desu ka") == "match と game の ちがい は なん です か"
    # no romaji word SudachiPy does not know (game and no alone are typed as they stand), or one only (ban)
    for text in ("game no", "ban された", "drop した ひと", "pile shuffle OK"):
        assert ix.as_meant(text) == text
    assert [qw.word.surface for qw in ix.analyse("あいて に わるいことば")] == ["あいて", "わるいことば"]
    assert [qw.word.surface for qw in ix.analyse("プレイヤーが ミス")] == ["プレイヤー", "ミス"]
    assert ix._latin_keys(ix.analyse("promo")[0]) == ["プロモ"]  # not プレミアム: the same consonants
    assert ix.search("Lycee concede", game="lycee").hits[0].id == "lycee/guideline/concession"


def test_a_count_said_in_kana(library):
    """Pass 14: a count said in kana is the count written (さんぷん → 3分, さんじゅっぷん → 30分, いっかいだけ → 1回だけ,
    れいてんさんさん → 0.33), not where the kana are a reading of the corpus (にほん: 日本) or no numeral as said
    (にさんかい: no 23); the に of a word's particle is no numeral (スコアカードにエヌ is no section 2n)."""
    ix = library.index
    assert ix.as_meant("準備時間さんぷん") == "準備時間3分"
    assert ix.as_meant("制限時間さんじゅっぷん") == "制限時間30分"
    assert ix.as_meant("いっかいだけ") == "1回だけ"
    assert ix.as_meant("下限ってれいてんさんさんだっけ") == "下限って0.33だっけ"
    assert ix.as_meant("後さんターンでいいんだっけ") == "後3ターンでいいんだっけ"
    assert ix.as_meant("ごにんいじょう") == "5人以上"
    for text in ("にほんのカード", "じゅうぶん", "さんしょう", "にんずう", "しーるど 5まい"):
        assert ix.as_meant(text) == text
    assert "3" not in ix.as_meant("にさんかい")
    assert ix.as_meant("スコアカードにエヌって") == "スコアカードにエヌって"
    assert ix.as_meant("デッキにびーって書いた") == "デッキにびーって書いた"
    assert ix.search("制限時間さんじゅっぷん").hits[0].id == "dm-senshu/floor-rules/202"
    # さんてんに is 3点 and the particle に, not 3.2 (a review)
    assert ix.as_meant("かちてんがさんてんに") == "かちてんが3点に"


def test_too_much_is_grammar(library):
    """Pass 14: 〜すぎる after an adjective's or a verb's stem (早すぎて, やりすぎ: too much) is grammar, no word of
    the query; 過ぎる after a noun (時間過ぎた: time is up) is a word."""
    ix = library.index
    assert [qw.word.surface for qw in ix.analyse("プレイが早すぎて")] == ["プレイ", "早"]
    assert "過ぎ" in [qw.word.surface for qw in ix.analyse("時間過ぎた")]


def test_an_english_word_typed_for_a_loan_word_of_the_corpus(library):
    """A Latin word the corpus lacks finds the corpus's loan word of the same consonants and first letter
    (mulligan: マリガン; sleeves, a plural: スリーブ), at the spelling weight; not one that only shares the
    consonants (turns is no チャレンジ)."""
    ix = library.index
    assert ix._latin_loans("mulligan") == ["マリガン"]
    assert "スリーブ" in ix._latin_loans("sleeves")
    assert ix._latin_loans("turns") == [] and ix._latin_loans("DQ") == []
    assert ix.search("sleeves opaque").hits[0].id == "tcg-taikai/floor-rules/4f"
    # the same for the synonym list's katakana keys: drop is ドロップ, whose phrases (途中棄権) it then has
    assert [qw.word.surface for qw in ix.analyse("drop")] == ["drop"]
    assert ix._latin_keys(ix.analyse("drop")[0]) == ["ドロップ"]
    assert "lycee/guideline/drop" in [h.id for h in ix.search("drop タイミング").hits[:5]]


def test_a_long_polite_question(library):
    """The tenth pass: a word typed twice is one word asked for; a light part of speech (この, そこ, また) ranks
    a section, it is not asked for; the いける of 〜ないといけない is grammar, no word; 何分 (one word to SudachiPy)
    is a count asked. (A section number with more words reaching the numbered section's subsections, 第3条b 5年:
    3b-iii, was taken out after a review: 第7章 シャッフル put tcg-taikai 7b and 7c over ijinden's chapter 7.)"""
    ix = library.index
    assert [qw.word.surface for qw in ix.analyse("守らないといけない")] == ["守ら"]
    assert [qw.word.surface for qw in ix.analyse("上の大会に行ける")] == ["上", "大会", "行ける"]
    assert [(qw.word.forms[0], qw.word.asked) for qw in ix.analyse("遅刻は何分で負け")][:2] == [
        ("遅刻", False),
        ("分", True),
    ]
    minor = {qw.word.surface: qw.word.minor for qw in ix.analyse("この結果はまたそこで")}
    assert minor == {"この": True, "結果": False, "また": True, "そこ": True}
    question = "ジャッジが山札をまぜたあと、本人がまたまぜてもいいのでしょうか"
    assert ix.search(question).hits[0].id == "ijinden/floor-rules/ch7-1-judge"
    assert "tcg-taikai/floor-rules/3b-iii" in [h.id for h in ix.search("第3条b 5年").hits[:5]]
    assert (
        ix.search("第3条b").hits[0].id == "tcg-taikai/floor-rules/3b"
    )  # the number alone: the section named


def test_the_judges_words_for_what_a_player_brings_and_a_right_passed_down(library):
    """The sixteenth pass's entries: 持ち物 is 4b's 用具 (tcg-taikai never says 持ち物 for a player's kit; ijinden
    ch2's own 持ち物 still matches as typed); 次の順位 and
    a right that 次の人に回る are 5a's 下位者への繰り下げ, but 次の人 alone is no key (a draft's pack goes to the
    next player too)."""
    ix = library.index
    assert ix.search("持ち物はなにを用意すればいい").hits[0].id == "tcg-taikai/floor-rules/4b"
    assert ix.search("優勝した人が辞退したら権利は次の順位の人？").hits[0].id == "tcg-taikai/floor-rules/5a"
    assert (
        ix.search("辞退者が出たら権利は次の人に回るの", game="tcg-taikai").hits[0].id
        == "tcg-taikai/floor-rules/5a"
    )
    draft = [h.id for h in ix.search("ドラフトでパックを次の人に回す向き").hits[:4]]
    assert "tcg-taikai/floor-rules/5a" not in draft


def test_a_first_time_judges_plain_words(library):
    """Pass 17: a word that no section holds in any form (象) is not asked for, so the every-word signal is
    made of the others and the ranking is the one without it; a question word typed in kana is one however
    SudachiPy reads it (どのくらい: 殿 | くらい); a count asked in kana keeps its particle (なんまいまで: 枚);
    まぜる is シャッフル and 文句 an appeal (synonyms.yaml)."""
    ix = library.index
    ids = [h.id for h in ix.search("対戦相手 デッキ シャッフル カット 権利 象").hits[:5]]
    assert ids == [h.id for h in ix.search("対戦相手 デッキ シャッフル カット 権利").hits[:5]]
    assert ids[0] == "tcg-taikai/floor-rules/8a"
    assert [qw.word.surface for qw in ix.analyse("退場どのくらい")] == ["退場"]
    assert [(qw.word.forms[0], qw.word.asked) for qw in ix.analyse("スペアカード なんまいまで")] == [
        ("スペアカード", False),
        ("枚", True),
    ]
    assert (
        ix.search("相手のデッキをまぜてもいい", game="tcg-taikai").hits[0].id == "tcg-taikai/floor-rules/8a"
    )
    assert ix.search("ジャッジの判定に文句がある", game="lycee").hits[0].id == "lycee/guideline/head-judge"


def test_a_broad_everyday_word_is_no_key_alone(library):
    """A review of passes 16 and 17: 文句 alone is grumbling, not an appeal (its keys say against what: 裁定に文句,
    判定に文句), and 繰り下がる alone is also postponed (its keys say whose: 権利が, 次の人に): the sections of a
    spectator's grumbling and of a late start keep their places."""
    ix = library.index
    assert ix.search("観客が文句を言っている").hits[0].id == "tcg-taikai/floor-rules/2l"
    assert ix.search("文句ばかり言うプレイヤーへの対応").hits[0].id != "tcg-taikai/floor-rules/2h"
    assert ix.search("開始時間が30分繰り下がった").hits[0].id != "tcg-taikai/floor-rules/5a"
    assert ix.search("権利が次の人に繰り下がる").hits[0].id == "tcg-taikai/floor-rules/5a"


def test_a_judges_words_are_not_kept_from_search_to_search(library):
    """The search keeps what depends on the index and the synonym list only: a judge's romaji words (read by
    SudachiPy to tell a loan word) are not kept, so a server's memory does not grow with what judges type."""
    ix = library.index
    kept = len(ix._analysed)
    for i in range(50):
        ix.search_uncached(f"shuffle zzq{i}abc no mae ni kiru", game="tcg-taikai")
    assert len(ix._analysed) == kept


def test_a_players_story_as_the_judge_types_it(library):
    """Pass 18: the corpus's loan words are the words its text writes in katakana, not every word whose folded
    surface is katakana (しかし, ただし), so カットしかしない is カット and しか + しない, not しかし; a lone romaji word
    that is the corpus's words as they sound is read in kana (kansensha: 観戦者, chikoku: 遅刻), an unknown one is
    not; a heading's own number is no word of its title (② is no 2 of 2枚), nor are 第 and 章 of a section
    number words of the query once the number is read."""
    from judgeapp.search.analysis import heading_words

    ix = library.index
    assert "スリーブ" in ix._loan_readings and "シカシ" not in ix._loan_readings
    assert [qw.word.surface for qw in ix.analyse("相手がカットしかしない")] == ["相手", "カット"]
    assert ix.as_meant("kansensha") == "かんせんしゃ"
    assert ix.as_meant("chikoku 30pun") == "ちこく 30pun"
    for text in ("konnichiwa", "make", "sakana"):
        assert ix.as_meant(text) == text
    assert ix.search("kansensha").hits[0].id == "tcg-taikai/floor-rules/2l"
    assert heading_words("② 【警告】", True) == "【警告】"
    assert heading_words("第 3 章：観戦にあたって", True) == "観戦にあたって"
    assert heading_words("3b-i. 非紳士的行為 - 期間 1 年", True) == "非紳士的行為 - 期間 1 年"
    assert heading_words("１本先取（オプショナルルール）", True) == "１本先取（オプショナルルール）"
    assert ix.search("2枚ひいちゃった", game="ijinden").hits[0].id == "ijinden/floor-rules/ch10-1"
    terms = {t for f, t in ix.query("第十章 ペナルティ").all_terms() if f in ("words", "title")}
    assert "第" not in terms and "章" not in terms
    assert ix.search("第十章 ペナルティ", game="ijinden").hits[0].id == "ijinden/floor-rules/ch10"


def test_a_key_read_in_a_katakana_word_is_no_key(library):
    """Pass 18: a synonym key's reading followed by katakana goes on with the word typed (イカサマダイス is a kind of
    ダイス, no イカサマ + だ); an ending typed in hiragana still follows it (イカサマって, スマホって)."""
    ix = library.index

    def keys(text):
        return [ix.synonyms[e][0][0] for e in ix.synonym_entries(text)]

    assert "イカサマ" not in keys("イカサマダイス")
    assert "イカサマ" in keys("イカサマって") and "スマホ" in keys("スマホって")
    assert ix.search("イカサマダイス").hits[0].id == "tcg-taikai/floor-rules/4h"


@pytest.mark.parametrize(
    "query, first, then",
    [
        # a heading's own number within its parent (③ 【敗北】 is ch10-3): typed in its form, alone or beside
        # the parent's words, the item first; a plain number the chapter first, the item after it
        ("ペナルティ③ 敗北とは", "ch10-3", None),
        ("ペナルティ②", "ch10-2", None),
        ("③", "ch10-3", "ch3"),
        ("②", "ch10-2", "ch2"),
        ("Ⅰ", "ch7-1", "ch1"),
        ("3", "ch3", "ch10-3"),
        ("三", "ch3", "ch10-3"),
        # a chapter the text refers to and does not have: the sentences that refer to it, then what they say
        # it is about (※ペナルティについては、第 11 章に詳しく書かれています)
        ("第11章", "ch9", "ch10"),
    ],
)
def test_a_headings_own_number_reaches_its_section(library, query, first, then):
    """Pass 18's follow-up: the number a heading starts with is no word of its title, and reaches the section
    through the number signal in every form (③, 3, 三) as the section's own number within its parent."""
    ids = [h.id.rsplit("/", 1)[1] for h in library.index.search(query, game="ijinden").hits[:5]]
    assert ids[0] == first
    if then:
        assert then in ids


@pytest.mark.parametrize("query", ["第12章", "第99章", "12章"])
def test_a_chapter_no_game_has_finds_nothing(library, query):
    """Review of passes 18-19: a chapter number said so (第12章) that neither the game nor any sentence of its
    text names is no words either: its 第 and 章 found ch9 and ch7-1, which name 第 11 章 (the chapter the text
    does not have, found by its sentences), as if they were the twelfth."""
    assert library.index.search(query, game="ijinden").hits == []
    assert library.index.search(query).hits == []
    # beside other words, those words alone (ch9 names 第 11 章 and its penalties: no answer for 第12章)
    hits = [h.id for h in library.index.search("第12章 ペナルティ", game="ijinden").hits[:2]]
    assert "ijinden/floor-rules/ch9" not in hits


def test_own_number_terms():
    from judgeapp.search.analysis import own_number_terms, query_own_numbers

    assert own_number_terms("③ 【敗北】", ["ch10-3", "第10章3", "10-3"]) == ["~c3"]
    assert own_number_terms("Ⅱ. 時間切れに関して", ["ch7-2"]) == ["~r2"]
    assert own_number_terms("第 3 章：観戦にあたって", ["ch3", "第3章", "3章"]) == []  # its key
    assert own_number_terms("3b-i. 非紳士的行為", ["3b-i", "3bi"]) == []
    assert own_number_terms("【ペナルティの種類と適用の原則】", ["x"]) == []
    assert query_own_numbers("ペナルティ③", []) == (["~c3"], ["~r3", "~3"], ["③"])
    assert query_own_numbers("3", ["3"]) == ([], ["~c3", "~r3", "~3"], [])
    assert query_own_numbers("第3章", ["3"]) == ([], [], [])  # a chapter, said so
    assert query_own_numbers("第十章④", ["10.4"]) == ([], [], [])  # the number in full already


def test_two_english_words_typed_for_a_katakana_key(library):
    """Pass 19: two English words side by side stand for a katakana key of the synonym list by their
    consonants: their katakana forms joined, a plural's s left off (extra turns: エキストラ + ターン, the key
    エクストラターン, whose phrases hold dm-senshu 205's 制限時間), or their letters joined where one has no
    katakana form (single elim: シングルエリミ); not words that sound like no key."""
    ix = library.index
    time_up = ix.synonym_entries("時間切れ")
    assert set(time_up) <= set(ix.synonym_entries("extra turns"))
    assert set(ix.synonym_entries("SE")) <= set(ix.synonym_entries("single elim"))
    assert ix.synonym_entries("deck sleeves") == []
    assert "dm-senshu/floor-rules/205" in [h.id for h in ix.search("extra turns DM time").hits[:5]]


def test_a_compound_of_two_loan_words_typed_with_a_vowel_wrong(library):
    """Pass 19: a katakana word the corpus lacks that is two of the text's loan words side by side typed as
    one, the first right and the second with its consonants but a vowel or a mora's length wrong (デッキチャック:
    2h's デッキチェック, read デッキ|チェック), finds the sections holding both words; not a second word of other
    consonants (ジャッジコール is no ジャッジ|ルール)."""
    ix = library.index
    assert ix._misspelt_pair("デッキチャック") == ["デッキ|チェック"]
    assert ix._misspelt_pair("ジャッジコール") == []
    assert "tcg-taikai/floor-rules/2h" in [h.id for h in ix.search("デッキチャック だれ やる").hits[:5]]


def test_english_judge_terms_for_the_texts_words(library):
    """Pass 19: OMW (opponents' match-win percentage) is also lycee's オポネント・ウィン・パーセンテージ, and
    investigation the 調査 of tcg-taikai 3b-i's 調査妨害."""
    ix = library.index
    assert ix.search("同点 OMW つかっていい").hits[0].id == "lycee/guideline/ranking-calculation"
    assert "tcg-taikai/floor-rules/3b-i" in [
        h.id for h in ix.search("investigation", game="tcg-taikai").hits[:3]
    ]


def test_a_key_whose_auxiliary_carries_its_sense_is_recognised_as_typed(library):
    """Pass 19: a key SudachiPy reads as one content word and an auxiliary of two characters or more
    (持ってった: 持っ|てっ|た, taken away; 足りない, a negation) is no key for every form of that word: もってくる
    and 持ってる are no theft, 足りる no shortage; the key as typed still is."""
    ix = library.index
    theft = set(ix.synonym_entries("持ってった"))
    assert theft and not theft & set(ix.synonym_entries("もってくる もの なに"))
    assert not theft & set(ix.synonym_entries("デッキ持ってる?"))
    assert ix.synonym_entries("足りない") and not ix.synonym_entries("足りる")
    # the offline export alike: no lemma and no stem for such a key (the browser then finds it as typed)
    from judgeapp.offline import build_index_export

    (entry,) = build_index_export([], [(["持ってった", "投げる", "見てる人"], ["窃盗"])])["synonyms"]
    assert (
        entry["lemmas"][0] == []
        and entry["lemmas"][1]
        and not any(s.startswith("持") for s in entry["stems"])
    )
    # a key of two content words keeps its lemmas, on the server and offline alike (見てる人: 見る + 人)
    assert entry["lemmas"][2] == [w.forms[0] for w in ix.analyzer.words("見てる人")]
