"""The numpy evaluator in judgeapp/search/evaluate.py gives what Whoosh's own searcher gives (issue 14, point 3).

Over the whole query table, for the query the search runs (every signal at once) and for the words alone in
AND and in OR mode, with and without the game filter (Whoosh's `filter=`, ours an intersection): the same
top 10 sections, in the same order, with the same BM25F scores to 1e-6, and the same number of matches.
"""

from __future__ import annotations

import pytest
from whoosh import query as Q

from judgeapp import ROOT
from judgeapp.library import open_library
from judgeapp.textnorm import clean_query

from .conftest import CORPUS_DIRS, load_cases

QUERIES = load_cases("search_queries.yaml")


def _whoosh(searcher, q, game, limit=10):
    # limit=None: every match collected and sorted. With a limit, Whoosh's top-k collector may skip a
    # document that belongs in the top 10 (seen on nested Or queries) and len() may be an estimate.
    results = searcher.search(q, limit=None, filter=Q.Term("game", game) if game else None)
    return [(hit["id"], hit.score) for hit in results[:limit]], len(results)


def _ours(ev, q, limit=10):
    scores, mask = ev.evaluate(q)
    return [(ev.stored[d]["id"], float(scores[d])) for d in ev.top(scores, mask, limit)], int(mask.sum())


@pytest.fixture(scope="module")
def own_library(tmp_path_factory):
    """An index of its own: the evaluator's postings and Whoosh's searcher then read the same files, whatever
    other tests do to the shared index folder."""
    return open_library(
        CORPUS_DIRS, tmp_path_factory.mktemp("evaluator") / "index", ROOT / "rules_corpus" / "synonyms.yaml"
    )


@pytest.mark.parametrize("mode", ["signals", "and", "or"])
def test_numpy_evaluator_equals_whoosh_searcher(own_library, mode):
    index = own_library.index
    ev = index._evaluator
    compared = 0
    with index.ix.searcher(weighting=ev.weighting) as searcher:
        for case in QUERIES:
            text = clean_query(case["q"])
            q = index.query(text) if mode == "signals" else index.words_query(text, mode)
            if q is None:
                continue
            for game in (None, case.get("game")):
                qq = Q.Require(q, Q.Term("game", game)) if game else q
                theirs, their_total = _whoosh(searcher, q, game)
                ours, our_total = _ours(ev, qq)
                where = f"{case['q']!r} ({game}, {mode})"
                assert [i for i, _ in ours] == [i for i, _ in theirs], where
                for (_, a), (_, b) in zip(ours, theirs, strict=False):
                    assert a == pytest.approx(b, abs=1e-6), where
                assert our_total == their_total, where
                compared += 1
    assert compared >= len(QUERIES)


def test_a_games_search_over_its_own_sections_equals_the_filter(own_library):
    """A game's search runs over that game's sections only, numbered among themselves (`Evaluator.run`'s
    `game`): the same sections, scores (to the last bit) and order as the whole query under Whoosh's
    `Require` of the game term; and a game the index lacks finds nothing."""
    index = own_library.index
    ev = index._evaluator
    compared = 0
    for case in QUERIES:
        q = index.query(clean_query(case["q"]))
        if q is None or not case.get("game"):
            continue
        ids, scores = ev.run(q, game=case["game"])
        want_ids, want_scores = ev.run(Q.Require(q, Q.Term("game", case["game"])))
        assert ids.tolist() == want_ids.tolist(), case["q"]
        assert scores.tolist() == want_scores.tolist(), case["q"]
        compared += 1
    assert compared >= len(QUERIES) // 2
    assert len(ev.run(index.query("失格"), game="no-such-game")[0]) == 0


def test_the_dict_evaluation_of_a_small_scope_equals_numpys(own_library, monkeypatch):
    """A scope of a few hundred sections (a game's; the real corpus) is evaluated with dicts
    (`Evaluator._run_small`): the same sections, scores to the last bit, order, marked terms and top hits
    as the numpy evaluation, over every query of the table and its words alone, with and without the game."""
    from judgeapp.search import evaluate as S

    index = own_library.index
    ev = index._evaluator
    assert ev.n <= S._SMALL_UP_TO  # (the real corpus: the dicts' scope)
    cases = []
    for case in QUERIES:
        text = clean_query(case["q"])
        for q in (index.query(text), index.words_query(text, "or")):
            if q is not None:
                cases += [(q, None), *([(q, case["game"])] if case.get("game") else [])]
    small = []
    for q, game in cases:
        ids, scores = ev.run(q, game=game)
        top = ev.top_of(ids, scores, 10)
        small.append(
            (ids.tolist(), scores.tolist(), top, ev.terms_matched(q, top, S.MARKED_FIELDS, game=game))
        )
    monkeypatch.setattr(S, "_SMALL_UP_TO", 0)
    monkeypatch.setattr(S, "_SORT_BELOW", 0)
    for (q, game), want in zip(cases, small, strict=True):
        ids, scores = ev.run(q, game=game)
        top = ev.top_of(ids, scores, 10)
        assert (ids.tolist(), scores.tolist(), top) == want[:3]
        assert ev.terms_matched(q, top, S.MARKED_FIELDS, game=game) == want[3]
    assert len(cases) > len(QUERIES)


def test_the_snippet_marks_are_the_spans_of_the_alternation():
    """The snippets' marks (`search.snippets.Marker`) are the spans `re.finditer` gives for the alternation of the
    surfaces and the needle (its characters with middle dots, long-vowel marks and spaces between), in the
    order `SearchIndex._marker` sorts them, on random texts."""
    import random
    import re

    from judgeapp.search.snippets import Gapless, Marker

    rng = random.Random(7)
    for _ in range(3000):
        text = "".join(rng.choice("アイウカキ・･ー 　\t\nab") for _ in range(rng.randint(0, 30)))
        surfaces = [
            "".join(rng.choice("アイウカキab・ー") for _ in range(rng.randint(1, 4))) for _ in range(4)
        ]
        needles = ["".join(rng.choice("アイウカキab") for _ in range(rng.randint(1, 4)))][: rng.randint(0, 1)]
        branches = [(re.escape(x), x, False) for x in surfaces]
        branches += [("[・･ー\\s]*".join(re.escape(ch) for ch in t), t, True) for t in needles]
        branches.sort(key=lambda b: len(b[0]), reverse=True)
        regex = re.compile("|".join(b[0] for b in branches))
        want = [m.span() for m in regex.finditer(text) if m.end() > m.start()]
        marker = Marker([(t, needle) for _, t, needle in branches])
        assert marker.spans(text) == want, (text, branches)
        assert marker.spans(text, Gapless(text)) == want, (text, branches)  # the needle found gapless


def test_top_of_narrowed_by_a_bound_is_the_sorted_order():
    """`Evaluator.top_of` on thousands of matches (narrowed first by `_at_least`) gives the order of a full
    sort (higher score first, then lower document number), ties at the cut and all, on random scores."""
    import random

    import numpy as np

    from judgeapp.search.evaluate import Evaluator

    rng = random.Random(11)
    for _ in range(400):
        size = rng.choice([300, 1000, 4000])
        ids = np.array(sorted(rng.sample(range(20_000), size)), dtype=np.int64)
        levels = rng.choice([3, 20, 1000, 10**9])  # many ties, some, none
        scores = np.array([rng.randrange(levels) / 7 for _ in range(size)], dtype=np.float64)
        limit = rng.choice([1, 5, 10, 100])
        want = [
            d
            for d, _ in sorted(zip(ids.tolist(), scores.tolist(), strict=True), key=lambda x: (-x[1], x[0]))[
                :limit
            ]
        ]
        assert Evaluator.top_of(ids, scores, limit) == want


def test_best_window_is_the_first_with_most_marks():
    """`search.snippets.best_window` (one pass) gives what `max` over the marks' starts with two binary searches each
    gave: the first start whose window holds the most starts, on random marks."""
    import bisect
    import random

    from judgeapp.search.snippets import best_window

    rng = random.Random(5)
    for _ in range(3000):
        size = rng.randint(1, 600)
        starts = sorted(rng.sample(range(size), rng.randint(1, min(40, size))))
        spans = [(a, a + 2) for a in starts]
        width = rng.choice([30, 110])

        def marks_from(a, starts=starts, width=width):
            return bisect.bisect_left(starts, a + width - 20) - bisect.bisect_left(starts, a - 20)

        assert best_window(spans, width) == max(starts, key=marks_from)


KILLED_WORKER = """
import os, sys, tempfile
from judgeapp import search
from judgeapp.search import build as S
S.PARALLEL_FROM, S._BATCH = 4, 2  # six sections in three batches, in the forked workers
PARENT, analyse = os.getpid(), S._analyse_batch


def _analyse_batch(docs):
    if docs[0].id == "s2" and os.getpid() != PARENT:
        os._exit(1)  # a worker killed (the OOM killer, a crash in a native library)
    return analyse(docs)


_analyse_batch.__module__, _analyse_batch.__qualname__ = "judgeapp.search.build", "_analyse_batch"
S._analyse_batch = _analyse_batch
docs = [S.IndexDoc(id=f"s{i}", game="g", doc="d", anchor=f"a{i}", title="失格", doc_title="D",
                   text=f"デッキ {i}") for i in range(6)]
path = tempfile.mkdtemp() + "/ix"
print(S.build_index(docs, path), sorted(h.id for h in search.SearchIndex(path).search("デッキ", limit=10).hits))
"""


def test_a_build_whose_worker_is_killed_finishes_with_every_section():
    """A large build analyses in forked workers; one that dies does not hang the build (which holds the
    index lock every starting server waits on): its batch is analysed again in the building process."""
    import subprocess
    import sys

    # the timeout only keeps a regression from hanging the suite; nothing here measures time
    out = subprocess.run(
        [sys.executable, "-c", KILLED_WORKER], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split("\n")[0] == "6 ['s0', 's1', 's2', 's3', 's4', 's5']"


def test_terms_the_index_lacks_are_not_kept(own_library):
    """The decoded postings are kept per term, but only for terms the index has: what judges type that
    the index lacks (a new string each time) would otherwise grow a long-running server without end."""
    index = own_library.index
    for i in range(40):
        index.search_uncached(f"謎語{i}号 ぬぬぬ{i} zq{i}x 見つからない語", limit=5)
    kept = index._evaluator._postings
    assert kept and all(len(ids) for ids, _ in kept.values())
