"""The judges' query table (tests/cases/search_queries.yaml): top 5 for ≥95%, first for ≥80%."""

from __future__ import annotations

from .conftest import load_cases

SHARED_APP = True  # the tests only read: one app for the module (tests/conftest.py)

QUERIES = load_cases("search_queries.yaml")


def evaluate(index, limit: int = 5):
    """(first-hit count, top-5 count, misses) over the query table."""
    first = top5 = 0
    misses = []
    for case in QUERIES:
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
    assert top5 / n >= 0.95, "\n".join(misses)
    assert first / n >= 0.80, f"first-hit {first}/{n}"
