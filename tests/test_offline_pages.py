"""The offline app's server side, without a browser: the precache list, the wizard's normalised URLs, the
compact index export, the manifest, compression and caching headers, and the deck check's explicit game."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import parse_qsl

import pytest
from markupsafe import escape


def precached(client) -> list[str]:
    return client.get("/offline/precache.json").get_json()["urls"]


def test_precache_holds_every_section_document_and_wizard_outcome(client, library):
    urls = set(precached(client))
    assert {s.url for s in library.corpus.sections.values()} <= urls
    assert {d.url for g in library.corpus.games.values() for d in g.documents} <= urls
    for game, policy in library.policies.games.items():
        for inf in policy.infractions:
            assert f"/wizard/{game}/{inf}" in urls
        reached = {a.outcome for n in policy.nodes.values() for a in n.answers if a.outcome}
        with_path = {
            u.split("?")[0].rsplit("/", 1)[1] for u in urls if u.startswith(f"/wizard/{game}/") and "?" in u
        }
        assert reached <= with_path
    assert "/" in urls and "/training" in urls and "/decks" in urls and "/offline/search.json" in urls
    assert "/wizard/lookup" in urls  # the home page's lookup across every game


def test_every_link_on_a_kept_wizard_page_leads_to_a_kept_page(client):
    """Tapping through the wizard offline never lands on a page that was not kept: every answer link of every
    kept step page is itself in the list (the links are already in the normalised form)."""
    urls = set(precached(client))
    steps = [u for u in urls if re.fullmatch(r"/wizard/[\w-]+(\?.*)?", u) and u != "/wizard/lookup"]
    assert steps
    for url in steps:
        html = client.get(url).get_data(as_text=True)
        answers = re.search(r'<ul class="choices answers">(.*?)</ul>', html, re.S).group(1)
        for href in re.findall(r'href="([^"]+)"', answers):
            href = href.replace("&amp;", "&")
            assert href in urls, (url, href)


def test_answers_in_any_order_show_the_same_page(client):
    urls = [u for u in precached(client) if u.startswith("/wizard/lycee/") and "?" in u]
    url = max(urls, key=lambda u: u.count("&"))
    path, query = url.split("?")
    shuffled = "&".join(f"{k}={v}" for k, v in reversed(parse_qsl(query))) + "&utm_source=x"
    a = client.get(url).get_data(as_text=True)
    b = client.get(f"{path}?{shuffled}").get_data(as_text=True)
    title = re.search(r"<h1>(.*?)</h1>", a).group(1)
    assert title == re.search(r"<h1>(.*?)</h1>", b).group(1)


def test_index_export_is_compact_and_from_the_corpus(client, library):
    resp = client.get("/offline/search.json", headers={"Accept-Encoding": "br, gzip"})
    assert resp.status_code == 200 and resp.headers["Content-Encoding"] in ("br", "gzip")
    assert len(resp.data) < 200_000
    data = client.get("/offline/search.json").get_json()
    assert {d["id"] for d in data["docs"]} == set(library.corpus.sections)
    doc = next(d for d in data["docs"] if d["id"] == "lycee/guideline/tardiness")
    assert "遅刻" in {data["vocab"][i] for i in doc["w"] + doc["t"]}
    assert any("スマホ" in e["keys"] for e in data["synonyms"])
    sit = client.get("/offline/situations.json").get_json()
    # every infraction and every accumulation rule (注意 2 = 警告 1 answers offline too), each rule with its
    # badge and the section it rests on
    assert {d["id"] for d in sit["docs"] if "/level:" not in d["id"]} == {
        f"{g}/{i}" for g, p in library.policies.games.items() for i in p.infractions
    } | {f"{g}/rule:{r.id}" for g, p in library.policies.games.items() for r in p.file.rules}
    rules = [d for d in sit["docs"] if "/rule:" in d["id"]]
    assert rules and all(d["href"].startswith("/rules/") and d["pen"] for d in rules)
    # an upgrade to a level only some may issue says who, as the server's answer does (【敗北】: ch10-3)
    up = next(d for d in rules if d["id"] == "ijinden/rule:warning-upgrade")
    assert up["warn"].startswith("【敗北】を与えられるのは大会主催者と")
    assert all("warn" not in d for d in rules if d["game"] == "lycee")
    # the lookup's own words without meaning, so a story's 言う, 居る are not read offline as unknown words
    assert {"言ウ", "居ル"} <= set(sit["stop"])


def test_situation_export_holds_the_level_lines_and_the_story_reading(client, library):
    """The offline lookup's export carries what the server's lookup passes 13 and 14 read: a level's own line
    answering that level (with who alone may issue it), and the story as the server reads it (patterns
    exported from judgeapp/lookup.py, not copied into the browser's code)."""
    from judgeapp.lookup import _story, match_json

    sit = client.get("/offline/situations.json").get_json()
    levels = {d["id"]: d for d in sit["docs"] if "/level:" in d["id"]}
    assert set(levels) == {f"{a.game}/level:{lv.id}" for a, lv, _ in library.lookup.level_lines()}
    # ijinden ch10-3's 「…に対して与えられます」, in the policy's own quote, with the section it is a line of
    policy = library.policies.games["ijinden"]
    defeat = policy.levels["defeat"]
    doc = levels["ijinden/level:defeat"]
    quote = next(c for c in defeat.citations if "に対して与えられます" in c.quote)
    assert doc["snip"] == doc["text"] and quote.quote in doc["text"]
    sec = library.corpus.sections[quote.section]
    assert (doc["title"], doc["href"], doc["pen"]) == (sec.title, sec.url, defeat.label)
    assert doc["warn"] == f"【敗北】を与えられるのは{defeat.restricted_to}です。"
    assert "ジャッジの判断" in doc["meta"] and "【敗北】" in doc["meta"]
    # the same words as the server's answer on that line (its discretion_note, shown on its page)
    m = next(
        m
        for m in library.lookup.search("悪質な違反でゲームが続けられない", game="ijinden").matches
        if m.level is not None
    )
    assert m.level is defeat and doc["warn"] in match_json(m)["discretion_note"]
    assert "warn" not in levels["ijinden/level:warning"]  # anyone may issue 【警告】
    # the story's reading: the exported patterns, applied as the browser applies them, read it as the server
    story = sit["story"]

    def read(text: str, game: str | None) -> str:
        text = re.sub(story["counter"], lambda m: story["counters"][m.group(1) or m.group(2)], text)
        if re.search(story["spaced"], text):
            whole = text  # the space after a lone particle stays (ひと が あいて を: ひとが あいてを)
            text = re.sub(
                story["jp_space"],
                lambda m: " " if re.search(story["after_particle"], whole[: m.start()]) else "",
                whole,
            )
        for pattern, repl in story["subs"]:
            text = re.sub(pattern, repl.replace("$1", r"\1"), text)
        return re.sub(story["names"][game or ""], " ", text, flags=re.IGNORECASE)

    for q, game in [
        ("ひと が あいて を おしました", "ijinden"),
        ("注意を2かいもらった", "lycee"),  # 2回
        ("1ラウンド め に ちこく しました", "tcg-taikai"),  # 1ラウンド目
        ("山札を3枚めくって", "lycee"),  # めくる keeps its め
        ("2つめの注意", "lycee"),
        ("イジンデン で 悪質な違反", "ijinden"),  # the game's own name left out
        ("大会規定違反 の DM", "dm-senshu"),  # only dm-senshu's names: 大会規定 stays
        ("リセ で 遅刻 DM", None),  # every game's names
    ]:
        names = library.lookup._own_name_re[game] if game else library.lookup._name_re
        assert read(q, game) == names.sub(" ", _story(q)), q


def test_manifest_and_worker(client):
    m = client.get("/manifest.webmanifest").get_json()
    assert m["display"] == "standalone" and m["scope"] == "/" and m["theme_color"]
    sizes = {i["sizes"] for i in m["icons"]}
    assert "192x192" in sizes and "512x512" in sizes
    for icon in m["icons"]:
        png = client.get(icon["src"])
        assert png.status_code == 200 and png.data[:8] == b"\x89PNG\r\n\x1a\n"
        w, h = int.from_bytes(png.data[16:20], "big"), int.from_bytes(png.data[20:24], "big")
        assert f"{w}x{h}" == icon["sizes"]
    assert '<link rel="manifest" href="/manifest.webmanifest">' in client.get("/").get_data(as_text=True)
    sw = client.get("/sw.js")
    assert sw.status_code == 200 and sw.mimetype == "text/javascript"
    assert sw.headers["Cache-Control"] == "no-cache"
    assert client.application.extensions["judgeapp.library"].corpus.version in sw.get_data(as_text=True)


@pytest.mark.parametrize(
    "url", ["/", "/rules/tcg-taikai/floor-rules/6b-iii", "/search?q=遅刻", "/wizard/lycee"]
)
def test_pages_compressed_with_etag_and_304(client, url):
    resp = client.get(url, headers={"Accept-Encoding": "br, gzip"})
    assert resp.headers["Content-Encoding"] in ("br", "gzip") and "no-cache" in resp.headers["Cache-Control"]
    etag = resp.headers["ETag"]
    again = client.get(url, headers={"Accept-Encoding": "br, gzip", "If-None-Match": etag})
    assert again.status_code == 304 and again.data == b""


def test_static_files_hashed_and_cached_for_a_year(client):
    html = client.get("/").get_data(as_text=True)
    refs = re.findall(r'(?:src|href)="(/static/[^"]+)"', html)
    assert any(r.endswith(".css") for r in refs) and any(r.endswith(".js") for r in refs)
    for ref in refs:
        resp = client.get(ref, headers={"Accept-Encoding": "gzip"})
        assert resp.status_code == 200
        assert resp.headers["Cache-Control"] == "public, max-age=31536000, immutable"
    assert client.get("/static/app.000000000000.css").status_code == 404
    fav = client.get("/favicon.ico")
    assert fav.status_code == 200 and fav.mimetype == "image/png"


def test_deck_check_asks_for_the_game_and_names_it(app, client):
    app.config["WTF_CSRF_ENABLED"] = False
    client.set_cookie("game", "lycee")  # the last game viewed is not taken as the deck's game
    html = client.get("/decks").get_data(as_text=True)
    assert re.search(r'<option value=""[^>]* selected disabled>選んでください', html)
    resp = client.post("/decks", data={"deck": "4 無双竜機ボルバルザーク\n36 カード"})
    assert resp.status_code == 400 and "ゲームを選んでください" in resp.get_data(as_text=True)
    html = client.post(
        "/decks", data={"game": "dm-senshu", "deck": "4 無双竜機ボルバルザーク\n36 カード"}
    ).get_data(as_text=True)
    verdict = re.search(r'<section class="verdict[^"]*" id="verdict">(.*?)</section>', html, re.S).group(1)
    assert "デュエル・マスターズ" in verdict and "問題あり" in verdict
    assert "確認したこと" in html and "確認していないこと" in html


def test_section_defects_once_per_document(client, library):
    doc = next(d for g in library.corpus.games.values() for d in g.documents if d.meta.defects)
    sec = library.corpus.sections[doc.sections[-1]]
    doc_html = client.get(doc.url).get_data(as_text=True)
    sec_html = client.get(sec.url).get_data(as_text=True)
    first = str(escape(doc.meta.defects[0]))
    assert first in doc_html and "<details" in doc_html
    assert first not in sec_html and f'href="{doc.url}"' in sec_html


def test_the_synonym_lists_words_are_evidence_where_their_phrases_are(client):
    """Offline, nothing fits is asked of the evidence (static/offline-search.js `fits`): a judges' word of
    the synonym list is found in the games whose evidence holds the phrase it stands for (胸ぐら → 暴力), as
    the server's lookup reads it; a word holding terms of its own (英語版: 英語) is left to them."""
    none = client.get("/offline/situations.json").get_json()["none"]
    games = none["games"]

    def where(term):
        return {g for k, g in enumerate(games) if none["terms"][term][1] & (1 << k)}

    assert "tcg-taikai" in where("胸グラ") and "暴力" in none["terms"]
    assert "ijinden" in where(
        "ギャラリー"
    )  # 観客 in ijinden's text; the word itself only in tcg-taikai's evidence
    assert "英語版" not in none["terms"] and "英語" in none["terms"]


def test_a_change_of_the_synonym_list_is_a_new_offline_version(app, tmp_path):
    """The offline exports are built from the synonym list too: a phone keeps them until the version
    (the cache's name, in sw.js) changes, so the version follows the list's bytes."""
    from judgeapp.offline import offline_version

    with app.app_context():
        before = offline_version()
        edited = tmp_path / "synonyms.yaml"
        extra = b"- words: [x1]\n  means: [x2]\n"
        edited.write_bytes(Path(app.config["SYNONYMS_PATH"]).read_bytes() + extra)
        app.config["SYNONYMS_PATH"] = str(edited)
        assert offline_version() != before


def test_a_storys_word_is_found_offline_through_its_dictionary_group(app, client):
    """Offline, a story's word the games' text lacks is found where the text holds its dictionary synonym group,
    as the server's lookup finds it (`Lookup._coverage_of`, 0.8 of the word): アタック (tcg-taikai's evidence
    spells it) where ijinden's says 攻撃; a word no line spells weighs as its group. The synonym list's keys
    written in hiragana (うそ) are read inside a story's hiragana, as the server finds them spelled anywhere;
    and an answer holding one of the story's words alone weighs as the server's ranking weighs it."""
    from judgeapp.lookup import ONE_WORD

    none = client.get("/offline/situations.json").get_json()["none"]
    games = none["games"]
    lines, extra = none["groups"]["アタック"]
    assert {g for k, g in enumerate(games) if extra & (1 << k)} >= {"ijinden"}
    assert not extra & (1 << games.index("tcg-taikai"))  # its own: a term already, found at full weight
    assert none["terms"]["アタック"][0] == 0 and lines > 0  # no line spells it: it weighs as 攻撃's group
    lookup = app.extensions["judgeapp.library"].lookup
    groups = lookup.word_groups()
    assert set(groups["アタック"]) & set(groups["攻撃"])
    assert "ウソ" in none["kana_keys"] and all(k in none["terms"] for k in none["kana_keys"])
    assert none["one_word"] == ONE_WORD
