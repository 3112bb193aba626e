"""The corpus against its sources: wording kept, every numbered section present once, no noise left.

Each test runs on a fresh clone, against the fingerprints recorded in rules_corpus/_sources/ (docs/corpus.md,
"Fidelity"); where the source texts are present (../shared/seeds or JUDGEAPP_SEEDS) it checks the text itself
as well, character by character.
"""

from __future__ import annotations

import re

import pytest

from judgeapp import ROOT
from judgeapp.cli import main as cli
from judgeapp.corpus import load_corpus, source_lines
from judgeapp.fidelity import check_records, compare_sources, digest, load_records, normalise

from .conftest import CORPUS_DIRS, FIXTURE_SOURCES, REAL_GAMES, SEEDS_DIR

# The real games and the fixture game (whose made-up source is always there: tests/fixtures/sources/).
CORPUS = load_corpus(CORPUS_DIRS)
RECORDS = load_records(CORPUS_DIRS)
HAVE_SOURCES = SEEDS_DIR.is_dir()
WS = re.compile(r"\s+")
GAME_FOLDERS = REAL_GAMES


def source_dir(name: str):
    """Where a source text is, when it is there at all."""
    return next((d for d in (SEEDS_DIR, FIXTURE_SOURCES) if (d / name).exists()), None)


def squeeze(text: str) -> str:
    return WS.sub("", text)


def source(name: str) -> str:
    return (source_dir(name) / name).read_text(encoding="utf-8")


def numbered(name: str) -> list[str]:
    """The section numbers the source writes, as its record has them (checked against the source below)."""
    return RECORDS[name]["numbered"]["found"]


@pytest.mark.parametrize("doc", CORPUS.documents.values(), ids=lambda d: d.id)
def test_every_line_stands_in_the_source(doc):
    """We add structure, never words: each body line and each heading is the source's text.

    Always against the recorded fingerprints; with the sources present, against the text itself too, and the
    record against its source (whole-text hash, each paragraph's hash, the numbers it lists)."""
    problems = [p for p in check_records(CORPUS, RECORDS) if p.startswith(doc.id)]
    assert not problems, "differs from the recorded fingerprints:\n" + "\n".join(problems)
    if source_dir(doc.meta.source) is None:
        return
    src = squeeze(source(doc.meta.source))
    missing = []
    for sid in doc.sections:
        sec = CORPUS.sections[sid]
        if sec.anchor not in doc.meta.added_headings and squeeze(sec.title) not in src:
            missing.append(f"heading {sec.anchor}: {sec.title}")
        missing += [
            f"{sec.anchor}: {line[:50]}" for line in source_lines(sec.markdown) if squeeze(line) not in src
        ]
    assert not missing, "not in the source:\n" + "\n".join(missing)
    assert compare_sources(CORPUS, source_dir(doc.meta.source), RECORDS, only=[doc.meta.source]) == []


def test_a_one_character_change_fails_the_fingerprints(runner, broken_corpus):
    """On a copy: one character of one paragraph changed, and `judgeapp check` names the section."""
    path = broken_corpus / "lycee" / "guideline.md"
    text = path.read_text(encoding="utf-8")
    old = "試合開始後５分以内に着席しないプレイヤーは"
    assert text.count(old) == 1
    path.write_text(text.replace(old, old.replace("５", "６")), encoding="utf-8")
    problems = check_records(load_corpus(broken_corpus), load_records(broken_corpus))
    assert problems and all(p.startswith("lycee/guideline/tardiness") for p in problems), problems
    result = runner.invoke(cli, ["check", "--corpus", str(broken_corpus)])
    assert result.exit_code == 1
    assert (
        "lycee/guideline/tardiness: text differs from the source's fingerprint: 試合開始後６分"
        in result.output
    )


def test_a_lost_paragraph_fails_the_fingerprints(broken_corpus):
    path = broken_corpus / "dm-senshu" / "floor-rules.md"
    text = path.read_text(encoding="utf-8")
    line = next(x for x in text.splitlines() if x.startswith("ゲームを開始する前に"))
    path.write_text(text.replace(line + "\n", "", 1), encoding="utf-8")
    problems = check_records(load_corpus(broken_corpus), load_records(broken_corpus))
    assert any("lost or changed in:" in p and "dm-senshu/floor-rules" in p for p in problems), problems


def _mini_corpus(root, body: str, source_text: str):
    """A one-game corpus of our own and its source folder, for the --sources comparison."""
    game = root / "rules_corpus" / "mini"
    game.mkdir(parents=True)
    (game / "_game.yaml").write_text("name: ミニ\nshort_name: ミニ\ndocuments: [rules]\n", encoding="utf-8")
    (game / "rules.md").write_text(
        "---\ntitle: ミニ規定\ngame: mini\ndoc: rules\npublisher: 試験\nversion: '1'\nsource: mini.txt\n"
        "status: complete\ndefects: []\n---\n\n" + body,
        encoding="utf-8",
    )
    (root / "src").mkdir()
    (root / "src" / "mini.txt").write_text(source_text, encoding="utf-8")
    return root / "rules_corpus", root / "src"


def test_check_sources_records_and_prints_what_differs(runner, tmp_path):
    corpus, sources = _mini_corpus(
        tmp_path,
        "# 1. 総則 {#1}\n\n遅刻したプレイヤーは敗北となる\n",
        "1. 総則\n遅刻したプレイヤーは\n敗北となる。\n",
    )
    recorded = runner.invoke(cli, ["check", "--corpus", str(corpus), "--sources", str(sources), "--record"])
    assert "✓ fidelity: 2 pieces of 1 sources match the sources" in recorded.output, recorded.output
    assert (corpus / "_sources" / "mini.yaml").exists()
    # The source changes under the record: the comparison says what.
    (sources / "mini.txt").write_text("1. 総則\n遅刻したプレイヤーは\n失格となる。\n", encoding="utf-8")
    result = runner.invoke(cli, ["check", "--corpus", str(corpus), "--sources", str(sources)])
    assert result.exit_code == 1
    assert "mini/rules/1: text not in mini.txt: 遅刻したプレイヤーは敗北となる" in result.output
    assert "mini.txt: sha256: the source has changed since its record was written" in result.output
    # A corpus word no source has cannot be recorded.
    result = runner.invoke(cli, ["check", "--corpus", str(corpus), "--sources", str(sources), "--record"])
    assert result.exit_code == 1 and "text not in mini.txt" in result.output


def test_every_source_has_its_record_and_provenance():
    """Every source a document names has a record: its file's size and hash, and the documents drawn from it."""
    for doc in CORPUS.documents.values():
        rec = RECORDS[doc.meta.source]
        prov = rec["provenance"]
        assert re.fullmatch(r"[0-9a-f]{64}", prov["sha256_file"]) and prov["bytes"] > 0
        assert doc.id in {d["id"] for d in prov["documents"]}
        assert {d["id"]: d["publisher"] for d in prov["documents"]}[doc.id] == doc.meta.publisher
        assert rec["units"] and rec["chars"] > 0
        if source_dir(doc.meta.source):
            raw = (source_dir(doc.meta.source) / doc.meta.source).read_bytes()
            assert len(raw) == prov["bytes"]
            assert digest(normalise(raw.decode("utf-8")), 64) == rec["sha256"]


def _floor_rules_part(text: str) -> str:
    return text.split("Microsoft Word")[0]


def test_tcg_taikai_numbered_sections_present_once():
    numbers = set(numbered("000_d669f29d06517dc1.txt"))
    assert {str(n) for n in range(1, 10)} | {"1a", "6b-iii", "3b-i"} <= numbers  # the pattern finds them all
    doc = CORPUS.documents["tcg-taikai/floor-rules"]
    anchors = [CORPUS.sections[s].anchor for s in doc.sections]
    assert numbers <= set(anchors), sorted(numbers - set(anchors))
    appendices = ["制限時間", "推奨ラウンド数", "決勝の組み合わせと進行", "シールド戦のデッキ登録"]
    titles = [
        CORPUS.sections[s].title for s in doc.sections if CORPUS.sections[s].anchor.startswith("appendix-")
    ]
    for name in appendices:
        assert sum(name in t for t in titles) == 1, name
    assert len(titles) == len(appendices)
    if HAVE_SOURCES:
        text = _floor_rules_part(source("000_d669f29d06517dc1.txt"))
        assert text.count("付録 :") == len(appendices)
        for name in appendices:
            assert f"付録 : {name}" in text
    assert len(anchors) == len(set(anchors))


def test_tcg_taikai_case_handling_is_its_own_incomplete_document():
    doc = CORPUS.documents["tcg-taikai/case-handling"]
    assert doc.meta.status == "incomplete"
    assert [CORPUS.sections[s].anchor for s in doc.sections] == ["1", "1a", "2", "2a"]
    assert CORPUS.sections["tcg-taikai/case-handling/2a"].text.endswith("違反行為を発生させた場合")


def test_ijinden_chapters_and_penalties_present_once():
    chapters = {
        int(n.translate(str.maketrans("０１２３４５６７８９", "0123456789")))
        for n in numbered("002_5ebca8424141af4e.txt")
    }
    assert chapters == set(range(1, 11))
    for n in chapters:
        assert f"ijinden/floor-rules/ch{n}" in CORPUS.sections
    for i, label in enumerate(["注意", "警告", "敗北", "失格"], start=1):
        sec = CORPUS.sections[f"ijinden/floor-rules/ch10-{i}"]
        assert f"【{label}】" in sec.title


def test_dm_senshu_numbered_sections_present_once():
    numbers = set(numbered("004_590082dfd42cf640.txt"))
    assert {"100", "101", "301"} <= numbers
    doc = CORPUS.documents["dm-senshu/floor-rules"]
    anchors = [CORPUS.sections[s].anchor for s in doc.sections]
    assert numbers == set(anchors) - {"intro"}


def test_lycee_headings_are_source_lines():
    """Each heading is a whole line of the source (its paragraph fingerprint), not just a piece of one."""
    units = set(RECORDS["003_c51f2a82b8ad8a5c.txt"]["units"])
    doc = CORPUS.documents["lycee/guideline"]
    for sid in doc.sections:
        sec = CORPUS.sections[sid]
        if sec.anchor not in doc.meta.added_headings:
            assert {digest(normalise(sec.title)), digest("○" + normalise(sec.title))} & units, sec.title
    if HAVE_SOURCES:
        lines = {line.strip().lstrip("○") for line in source("003_c51f2a82b8ad8a5c.txt").splitlines()}
        for sid in doc.sections:
            sec = CORPUS.sections[sid]
            assert sec.anchor in doc.meta.added_headings or sec.title in lines, sec.title
        promo = CORPUS.sections["lycee/guideline/promo-cards"].markdown
        assert promo.count("| CH-") == source("003_c51f2a82b8ad8a5c.txt").count("| CH-")


NOISE = [
    "Size: px",
    "Start display at page",
    "Download",
    "りさことりこし",
    "years ago",
    "Views:",
    "Microsoft Word",
    "FOW_penalty_guidelines",
    ".docx",
]


def test_no_extraction_noise_left():
    glued: list[str] = []
    if HAVE_SOURCES:
        text = source("000_d669f29d06517dc1.txt")
        # Page numbers glued to the start of a page: "2 身だしなみを…" → the page's first words.
        glued = [
            f"{n}{squeeze(rest)[:8]}"
            for n, rest in re.findall(r"^(\d{1,2}) (.{1,12})", text, flags=re.M)
            if int(n) > 1
        ]
        assert len(glued) >= 12
    for doc in CORPUS.documents.values():
        body = "\n".join(CORPUS.sections[s].markdown for s in doc.sections)
        for noise in NOISE:
            assert noise not in body, (doc.id, noise)
        if doc.game == "tcg-taikai":
            flat = squeeze(body)
            leftovers = [g for g in glued if g in flat]
            assert not leftovers, leftovers
            assert doc.title not in body  # the repeated title is gone from the text


def test_front_matter_is_complete():
    for doc in CORPUS.documents.values():
        assert doc.meta.title and doc.meta.publisher and doc.meta.version and doc.meta.source
        assert doc.meta.source in RECORDS
        if HAVE_SOURCES and doc.game in REAL_GAMES:
            assert (SEEDS_DIR / doc.meta.source).exists()


def test_section_ids_are_url_safe_and_stable():
    for sid in CORPUS.sections:
        assert re.fullmatch(r"[A-Za-z0-9./-]+", sid), sid
    # Ids named by the product and by other issues stay as they are.
    for sid in [
        "tcg-taikai/floor-rules/6b-iii",
        "lycee/guideline/tardiness",
        "ijinden/floor-rules/ch10",
        "dm-senshu/floor-rules/301",
        "lycee/guideline/penalty",
        "ijinden/floor-rules/ch10-3",
    ]:
        assert sid in CORPUS.sections


# --- judgeapp check -----------------------------------------------------------------------------


def test_check_passes_on_the_corpus(runner):
    result = runner.invoke(cli, ["check"])
    assert result.exit_code == 0, result.output
    docs = sum(len(list((ROOT / "rules_corpus" / g).glob("*.md"))) for g in GAME_FOLDERS)
    assert f"{len(GAME_FOLDERS)} games, {docs} documents" in result.output
    assert "✓ fidelity:" in result.output


def _break(path, old, new):
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


@pytest.mark.parametrize(
    "breakage, expected",
    [
        (
            ("lycee/guideline.md", "{#spare-cards}", "{#tardiness}"),
            "duplicate section id lycee/guideline/tardiness",
        ),
        (("ijinden/floor-rules.md", "---\ntitle:", "title:"), "front matter: missing"),
        (("dm-senshu/floor-rules.md", "publisher:", "publisher_x:"), "publisher: Field required"),
        (
            (
                "lycee/guideline.md",
                "試合開始後５分以内に着席しないプレイヤーは、その試合を敗北したものとされます。その後、試合開始後３０分以内に受付に遅刻の届け出を行わなかった場合、その時点でトーナメントを棄権したものと見なします。",
                "",
            ),
            "tardiness: empty section",
        ),
    ],
)
def test_check_fails_on_a_broken_corpus(runner, broken_corpus, breakage, expected):
    name, old, new = breakage
    _break(broken_corpus / name, old, new)
    result = runner.invoke(cli, ["check", "--corpus", str(broken_corpus)])
    assert result.exit_code == 1
    assert expected in result.output


def test_a_games_names_come_from_its_data():
    """What a judge may type for a game in a search (`Game.names`): its name, the name without its bracketed
    part, its short name and the aliases of `_game.yaml`, each once."""
    assert CORPUS.games["dm-senshu"].names == [
        "デュエル・マスターズ（泉州DM版）",
        "デュエル・マスターズ",
        "泉州DM",
        *CORPUS.games["dm-senshu"].meta.aliases,
    ]
    assert "リセ" in CORPUS.games["lycee"].names
    assert "TCG 大会規定" in CORPUS.games["tcg-taikai"].names
    assert "TCG大会規定" not in CORPUS.games["tcg-taikai"].names  # (the short name is the bare name, spaced)
    assert CORPUS.game_names()["ijinden"] == CORPUS.games["ijinden"].names


@pytest.mark.parametrize(
    "aliases, expected",
    [
        ("[りせ]", "aliases: Value error, 'りせ': an alias in hiragana is never read"),
        ("[リ]", "aliases: Value error, 'リ': an alias needs two characters or more"),
        ("[リセ, ﾘｾ]", "aliases: Value error, an alias is listed twice"),
        ("[DM]", "'DM' is a name of the game 'dm-senshu' too"),
        ("[イジンデン]", "'イジンデン' is a name of the game 'ijinden' too"),
    ],
)
def test_check_refuses_an_alias_that_cannot_name_one_game(runner, broken_corpus, aliases, expected):
    """The loader checks `aliases:`: no hiragana (a name is never read in hiragana), two characters or more,
    none twice, and no name of another game (a name names one game)."""
    _break(broken_corpus / "lycee" / "_game.yaml", "aliases: [リセ, ライシー]", f"aliases: {aliases}")
    result = runner.invoke(cli, ["check", "--corpus", str(broken_corpus)])
    assert result.exit_code == 1
    assert expected in result.output, result.output
