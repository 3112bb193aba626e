"""Reading pages as a judge meets them: home, game, document, section, search; weight; links."""

from __future__ import annotations

import re

import pytest

SHARED_APP = True  # the tests only read: one app for the module (tests/conftest.py)

LIMIT = 30 * 1024  # every page, HTML+CSS+JS, uncompressed


def text_of(resp) -> str:
    return resp.get_data(as_text=True)


def test_home_asks_which_game_and_offers_search(client):
    html = text_of(client.get("/"))
    assert "どのゲームですか？" in html
    assert 'name="q"' in html
    for g in ["tcg-taikai", "ijinden", "lycee", "dm-senshu"]:
        assert f'href="/rules/{g}"' in html


def test_choosing_a_game_is_remembered_for_search(client):
    client.get("/rules/lycee")
    html = text_of(client.get("/"))
    assert '<option value="lycee" selected>' in html


def test_document_page_has_toc_and_defects(client):
    html = text_of(client.get("/rules/lycee/guideline"))
    assert 'href="/rules/lycee/guideline/tardiness"' in html
    assert "ペナルティガイドライン" in html  # the source's known gap is said


def test_incomplete_document_says_so(client):
    html = text_of(client.get("/rules/tcg-taikai/case-handling/2a"))
    assert "原文が途中で切れています" in html


def test_section_page_has_breadcrumbs_neighbours_and_link(client):
    html = text_of(client.get("/rules/tcg-taikai/floor-rules/6b-iii"))
    assert 'href="/rules/tcg-taikai/floor-rules/6b"' in html  # parent in the breadcrumbs
    assert 'href="/rules/tcg-taikai/floor-rules/6b-ii"' in html  # previous
    assert 'href="/rules/tcg-taikai/floor-rules/6b-iv"' in html  # next
    assert 'value="http://localhost/rules/tcg-taikai/floor-rules/6b-iii"' in html


def test_in_text_references_link_to_their_section(client):
    html = text_of(client.get("/rules/dm-senshu/floor-rules/204"))
    assert '<a class="xref" href="/rules/dm-senshu/floor-rules/203">第203節</a>' in html
    # 「第 11 章」 does not exist in イジンデン (its known defect): not linked.
    html = text_of(client.get("/rules/ijinden/floor-rules/ch9"))
    assert "第 11 章" in html
    assert "/rules/ijinden/floor-rules/ch11" not in html
    assert "judgeapp 注：この文書に第 11 章はありません" in html


def test_section_numbers_and_chapters_in_text_link(broken_corpus):
    from judgeapp.corpus import load_corpus, render_section_html

    path = broken_corpus / "tcg-taikai" / "floor-rules.md"
    text = path.read_text(encoding="utf-8")
    path.write_text(
        text.replace("{#6b-i}\n", "{#6b-i}\n\n6b-iii と 6c-i と 10z を参照\n", 1), encoding="utf-8"
    )
    corpus = load_corpus(broken_corpus)
    html = render_section_html(corpus, corpus.sections["tcg-taikai/floor-rules/6b-i"])
    assert '<a class="xref" href="/rules/tcg-taikai/floor-rules/6b-iii">6b-iii</a>' in html
    assert '<a class="xref" href="/rules/tcg-taikai/floor-rules/6c-i">6c-i</a>' in html
    assert "10z" in html and "/10z" not in html
    # rendered once per section and kept on the corpus (a corpus never changes once read): the same body again
    assert render_section_html(corpus, corpus.sections["tcg-taikai/floor-rules/6b-i"]) is html
    assert corpus.html["tcg-taikai/floor-rules/6b-i"] is html


def test_unknown_pages_are_japanese_404(client):
    resp = client.get("/rules/nope")
    assert resp.status_code == 404
    assert "ページが見つかりません" in text_of(resp)
    assert client.get("/rules/lycee/guideline/nope").status_code == 404


def test_search_page_shows_game_doc_title_snippet(client):
    html = text_of(client.get("/search", query_string={"q": "遅刻", "game": "lycee"}))
    assert 'href="/rules/lycee/guideline/tardiness"' in html
    assert "<mark>遅刻</mark>" in html
    assert "Lycee" in html and "公認大会ガイドライン" in html


def test_no_hits_in_the_chosen_game_offers_other_games(client):
    html = text_of(client.get("/search", query_string={"q": "プレミアム殿堂", "game": "lycee"}))
    assert "見つかりませんでした" in html
    assert "ほかのゲームの規定" in html
    assert 'href="/rules/dm-senshu/floor-rules/305"' in html


@pytest.mark.parametrize(
    "url",
    [
        "/",
        "/rules/lycee",
        "/rules/tcg-taikai/floor-rules",
        "/rules/lycee/guideline/promo-cards",
        "/rules/tcg-taikai/floor-rules/6c-i",
        "/search?q=スリーブ",
        "/search?q=カード&limit=50",
    ],
)
def test_pages_are_light(client, url):
    resp = client.get(url)
    assert resp.status_code == 200
    assert len(resp.get_data()) < LIMIT, (url, len(resp.get_data()))
    html = text_of(resp)
    # No inline script; scripts and styles are static files with content-hashed names (cached for a year).
    assert not re.search(r"<script(?![^>]*\bsrc=)", html)
    for ref in re.findall(r'(?:src|href)="(/static/[^"]+)"', html):
        assert re.fullmatch(r"/static/[\w-]+\.[0-9a-f]{12}\.(css|js|png)", ref), ref


def test_works_without_javascript(client):
    # The search form is a plain GET form; results are server-rendered links.
    html = text_of(client.get("/"))
    assert re.search(r'<form class="search" action="/search" method="get"', html)
