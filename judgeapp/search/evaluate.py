"""Evaluating a query over postings decoded once into numpy arrays, with Whoosh's BM25F scores."""

from __future__ import annotations

import operator
import threading
from itertools import accumulate
from typing import TYPE_CHECKING

import numpy as np
from whoosh import query as Q
from whoosh import scoring

if TYPE_CHECKING:
    from whoosh.index import Index


# The memo's entries for the evaluation's scope (`Evaluator.run`'s game) and the count of its documents, and
# the terms the evaluation looked up (`Evaluator.run`'s `terms`).
_WITHIN, _SIZE, _TERMS = "within", "size", "terms"
_NO_POSTINGS = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64))
_NO_POSTINGS[0].flags.writeable = _NO_POSTINGS[1].flags.writeable = False  # shared: never changed in place
_NO_SMALL_POSTINGS: dict[
    int, float
] = {}  # `_small_postings` of a term the index lacks: shared, never changed


class Evaluator:
    """Runs the queries built below over the index's postings with numpy, scoring as Whoosh's BM25F does.

    Whoosh keeps the index on disk and gives the statistics (idf, average and per-document field lengths) and
    the postings; decoding a posting list in pure Python is what made a query slow on a large corpus, so each
    term's postings are decoded once, on first use, into arrays of document numbers and BM25F scores. A query
    is then a handful of numpy operations over arrays the size of the corpus: the top hits, their matched
    terms and the exact number of matches come out of the same pass. Scores and the order of ties (lower
    document number first) are Whoosh's own, so results do not change.
    """

    def __init__(self, ix: Index, terms: dict[str, list[str]] | None = None):
        self.searcher = ix.searcher(weighting=scoring.BM25F())
        self.reader = self.searcher.reader()
        self.n = self.reader.doc_count_all()
        self.weighting = self.searcher.weighting
        self.stored = [self.reader.stored_fields(d) for d in range(self.n)]
        self._lengths: dict[str, np.ndarray] = {}
        self._postings: dict[tuple[str, str], tuple[np.ndarray, np.ndarray]] = {}
        self._lock = threading.Lock()
        # Each field's terms (`build_index` lists them in the lexicon): a term the index lacks is known so
        # at once, without a lookup in Whoosh's terms table. A field not listed is asked of Whoosh.
        self._terms = {name: frozenset(ts) for name, ts in (terms or {}).items()}
        self._kept: dict[int, list] = {}  # `keep`
        self._games: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}  # `_game_docs`
        self._in_game: dict[tuple[str, str, str], tuple[np.ndarray, np.ndarray]] = {}  # `_term`
        self._times: dict[
            tuple[str | None, str, str, float], tuple[np.ndarray, np.ndarray]
        ] = {}  # `_boosted`
        self._small: dict[tuple[str | None, str, str], dict[int, float]] = {}  # `_small_postings`
        self._small_times: dict[tuple[str | None, str, str, float], dict[int, float]] = {}  # `_small_boosted`

    def _field_lengths(self, field: str) -> np.ndarray:
        arr = self._lengths.get(field)
        if arr is None:
            arr = np.array(
                [self.reader.doc_field_length(d, field, 0) for d in range(self.n)], dtype=np.float64
            )
            self._lengths[field] = arr
        return arr

    def postings(self, field: str, text: str) -> tuple[np.ndarray, np.ndarray]:
        """(document numbers, scores) of one term, decoded once."""
        key = (field, text)
        hit = self._postings.get(key)
        if hit is not None:
            return hit
        known = self._terms.get(field)
        if known is not None and text not in known:
            return _NO_POSTINGS  # not kept (see below)
        with self._lock:
            hit = self._postings.get(key)
            if hit is not None:
                return hit
            btext = self.searcher.schema[field].to_bytes(text)
            if (field, btext) not in self.reader:
                # not kept: the terms a query asks for and the index lacks are the judges' (unbounded);
                # what is kept is bounded by the index's own terms
                return _NO_POSTINGS
            else:
                m = self.reader.postings(field, btext)
                items = list(m.items_as("weight"))
                ids = np.fromiter((i for i, _ in items), dtype=np.int64, count=len(items))
                tf = np.fromiter((w for _, w in items), dtype=np.float64, count=len(items))
                if self.searcher.schema[field].scorable:
                    w = self.weighting
                    idf = self.searcher.idf(field, btext)
                    avgfl = self.searcher.avg_field_length(field) or 1
                    fl = self._field_lengths(field)[ids]
                    scores = idf * ((tf * (w.K1 + 1)) / (tf + w.K1 * ((1 - w.B) + w.B * fl / avgfl)))
                else:
                    scores = tf
                hit = (ids, scores)
            self._postings[key] = hit
            return hit

    def evaluate(self, q: Q.Query) -> tuple[np.ndarray, np.ndarray]:
        """(scores, matched mask) over every document (`run`, spread over the whole corpus)."""
        ids, sc = self.run(q)
        scores = np.zeros(self.n)
        scores[ids] = sc
        mask = np.zeros(self.n, dtype=bool)
        mask[ids] = True
        return scores, mask

    def run(
        self, q: Q.Query, memo: dict | None = None, game: str | None = None, terms: dict | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """(matching document numbers, ascending; their scores). Sparse: a query of a few terms costs what
        its posting lists cost, not the corpus's size. Each document's score adds up its parts in the order
        a dense evaluation over the whole corpus would, so the scores are the same to the last bit. A
        sub-query object used in several places of the query (a word in the all-words and the all-but-one
        signals) is evaluated once; a query kept (`keep`) once for all.

        With a `game`, only that game's sections (what `Require(q, Term("game", game))` gives), each term's
        postings cut to them first and numbered among them (0 for the game's first section): every
        operation is a document's own (a document's score is the sum of its own terms' scores), so the
        game's documents come out with the same scores, in the same order, and the rest of a large corpus
        costs nothing.

        `terms`, a dict: filled with every term of the query, as `terms_matched` reads them (so that it need
        not walk the query again): each term the evaluation looked up with its postings in the scope, and
        the terms of what it did not look up (a kept query's, the rest of an And that stopped early) with
        None."""
        if memo is None:
            memo = {_SIZE: self.n}
            if terms is not None:
                memo[_TERMS] = terms
            scope = self._game_docs(game) if game is not None else None
            if game is not None and scope is None:
                return _EMPTY
            if (len(scope[2]) if scope is not None else self.n) <= _SMALL_UP_TO:
                found = self._run_small(q, game, {} if terms is None else {_TERMS: terms})
                if not found:
                    return _EMPTY
                docs = sorted(found)
                return np.array(docs, dtype=np.int64), np.array([found[d] for d in docs], dtype=np.float64)
            if game is not None:
                memo[_WITHIN] = (game, *scope)
                memo[_SIZE] = len(scope[2])
                ids, sc = self.run(q, memo)
                return scope[2][ids], sc  # the game's numbering back to the corpus's
        hit = memo.get(id(q))
        if hit is not None:
            return hit[1]
        kept = self._kept.get(id(q))
        scope = memo.get(_WITHIN)
        if kept is not None:
            out = kept[1].get(scope[0] if scope else None)
            if out is not None:
                self._unvisited(q, memo)
                return out
        out = self._run(q, memo)
        memo[id(q)] = (q, out)  # q kept so that its id is not reused while the memo lives
        if kept is not None:
            kept[1][scope[0] if scope else None] = out
        return out

    def best(
        self, q: Q.Query, game: str | None, limit: int, weights: np.ndarray, terms: dict | None = None
    ) -> tuple[int, dict[int, float]]:
        """(the number of matches, {document: score} of the best `limit`, best first): `run`'s scores times
        each document's weight (`weights`, the corpus's size), ordered as `top_of` orders them. A small
        scope's matches (`_run_small`) are weighed and ordered as Python floats (the same products), without
        making arrays of them."""
        scope = self._game_docs(game) if game is not None else None
        if game is not None and scope is None:
            return 0, {}
        if (len(scope[2]) if scope is not None else self.n) <= _SMALL_UP_TO:
            found = self._run_small(q, game, {} if terms is None else {_TERMS: terms})
            if len(found) <= _SORT_BELOW:
                docs = list(found)
                scored = zip(docs, map(operator.mul, found.values(), weights[docs].tolist()), strict=True)
                return len(found), dict(sorted(scored, key=lambda x: (-x[1], x[0]))[:limit])
            docs = sorted(found)  # (what `run` gives for it)
            ids = np.array(docs, dtype=np.int64)
            scores = np.array([found[d] for d in docs], dtype=np.float64)
        else:
            ids, scores = self.run(q, game=game, terms=terms)
        scores = scores * weights[ids]
        top = self.top_of(ids, scores, limit)
        return len(ids), dict(zip(top, scores[np.searchsorted(ids, top)].tolist(), strict=True))

    def _small_postings(self, game: str | None, field: str, text: str) -> dict[int, float]:
        """A term's postings in a small scope (`_run_small`): {document: score}, cut once per game and term."""
        key = (game, field, text)  # bounded: the index's games and terms (a term it lacks is not kept)
        hit = self._small.get(key)
        if hit is None:
            ids, sc = self.postings(field, text)
            if not len(ids):
                return _NO_SMALL_POSTINGS
            if game is not None:
                keep = self._games[game][0][ids]
                ids, sc = ids[keep], sc[keep]
            hit = self._small[key] = dict(zip(ids.tolist(), sc.tolist(), strict=True))
        return hit

    def _small_boosted(self, game: str | None, field: str, text: str, boost: float) -> dict[int, float]:
        """`_small_postings` times a boost, multiplied once per scope, term and boost (`_boosted`'s bound):
        one look-up a term."""
        key = (game, field, text, boost)
        hit = self._small_times.get(key)
        if hit is None:
            base = self._small_postings(game, field, text)
            if not base:
                return base  # not kept: the terms the index lacks are the judges' (unbounded)
            hit = self._small_times[key] = _dict_times(base, boost)
        return hit

    def _run_small(self, q: Q.Query, game: str | None, memo: dict) -> dict[int, float]:
        """`run` over a scope of a few hundred documents at most (a game's sections, a small corpus), with
        Python dicts {document: score}: numpy's cost per call is more than the work on so few documents.
        Each document's score adds up the same parts in the same order as `_run` (floats are the same
        doubles), so the results are the same. The dicts are shared (memo, kept results): never changed."""
        hit = memo.get(id(q))
        if hit is not None:
            return hit[1]
        kept = self._kept.get(id(q))
        if kept is not None:
            out = kept[1].get(("small", game))
            if out is not None:
                self._unvisited(q, memo)
                return out
        out = self._small_node(q, game, memo)
        memo[id(q)] = (q, out)
        if kept is not None:
            kept[1][("small", game)] = out
        return out

    def _small_node(self, q: Q.Query, game: str | None, memo: dict) -> dict[int, float]:
        kind = type(q)
        subs = q.subqueries if kind is Q.Or or kind is Q.And else ()
        if len(subs) > 1 and kind is Q.Or:
            parts, others = [], []
            times, term = self._small_times, Q.Term
            seen = memo.get(_TERMS)
            for t in subs:  # the term children first, then the others (`_or`'s order)
                if type(t) is term:
                    found = times.get((game, t.fieldname, t.text, t.boost))
                    if found is None:
                        found = self._small_boosted(game, t.fieldname, t.text, t.boost)
                    if seen is not None:
                        seen[(t.fieldname, t.text)] = found
                    if found:
                        parts.append(found)
                else:
                    others.append(t)
            for c in others:
                found = self._run_small(c, game, memo)
                if found:
                    parts.append(found)
            if not parts:
                return {}
            out = parts[0]
            if len(parts) > 1:
                out = dict(out)
                get = out.get
                for part in parts[1:]:
                    for d, s in part.items():
                        out[d] = get(d, 0.0) + s
            return _dict_times(out, q.boost)
        if len(subs) > 1:  # an And
            term = Q.Term
            if all(type(c) is term for c in subs):
                # (each posting times its boost as `_small_boosted` keeps it: the same product)
                parts = [self._small_boosted(game, c.fieldname, c.text, c.boost) for c in subs]
                seen = memo.get(_TERMS)
                if seen is not None:
                    for c, found in zip(subs, parts, strict=True):
                        seen[(c.fieldname, c.text)] = found
            else:
                if not self._may_all(subs, memo):  # (`_and`)
                    for c in subs:
                        self._unvisited(c, memo)
                    return {}
                parts = []
                for i, c in enumerate(subs):
                    found = self._run_small(c, game, memo)
                    if not found:
                        for rest in subs[i + 1 :]:
                            self._unvisited(rest, memo)
                        return {}
                    parts.append(found)
            narrowest = min(parts, key=len)
            out = {}
            for d in narrowest:
                s = 0.0
                for part in parts:
                    x = part.get(d)
                    if x is None:
                        break
                    s += x
                else:
                    out[d] = s
            return _dict_times(out, q.boost)
        if isinstance(q, Q.Term):
            found = self._small_boosted(game, q.fieldname, q.text, q.boost)
            seen = memo.get(_TERMS)
            if seen is not None:
                seen[(q.fieldname, q.text)] = found
            return found
        if isinstance(q, Q.Require):
            a, b = q.subqueries
            fa, fb = self._run_small(a, game, memo), self._run_small(b, game, memo)
            return _dict_times({d: s for d, s in fa.items() if d in fb}, q.boost)
        if isinstance(q, Q.ConstantScoreQuery):
            score = float(q.score)
            return dict.fromkeys(self._run_small(q.child, game, memo), score)
        if isinstance(q, Q.AndMaybe):
            a, b = q.subqueries
            fa, fb = self._run_small(a, game, memo), self._run_small(b, game, memo)
            get = fb.get
            return _dict_times({d: s + get(d, 0.0) for d, s in fa.items()}, q.boost)
        if isinstance(q, (Q.And, Q.Or)) and len(q.subqueries) <= 1:
            return self._run_small(q.subqueries[0], game, memo) if q.subqueries else {}
        if q is Q.NullQuery or isinstance(q, type(Q.NullQuery)):
            return {}
        raise TypeError(f"query type {type(q).__name__} is not evaluated")

    def keep(self, q: Q.Query) -> None:
        """Keep the query's result (per game; and its terms) once evaluated: for a query built once and used
        by many searches, which depends on the index only (a synonym entry's phrases). Bounded by what is
        kept so: the queries of the reviewed list (times the index's games), never what a judge typed."""
        self._kept.setdefault(id(q), [q, {}, None])  # the query (so that its id stays its), results, terms

    def _game_docs(self, game: str) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """A game's documents: whether each document is the game's, its number among the game's, and the
        game's documents (None for a game the index lacks, which is not kept)."""
        hit = self._games.get(game)
        if hit is None:
            ids = self.postings("game", game)[0]
            if not len(ids):
                return None
            mask = np.zeros(self.n, dtype=bool)
            mask[ids] = True
            hit = self._games[game] = (mask, np.cumsum(mask) - 1, ids)
        return hit

    def _term(self, field: str, text: str, memo: dict) -> tuple[np.ndarray, np.ndarray]:
        """A term's postings in the evaluation's scope (`run`'s game), cut once per game and term."""
        ids, sc = self.postings(field, text)
        scope = memo.get(_WITHIN)
        if scope is not None and len(ids):
            key = (scope[0], field, text)  # bounded: the index's games and terms
            hit = self._in_game.get(key)
            if hit is None:
                keep = scope[1][ids]
                hit = self._in_game[key] = (scope[2][ids[keep]], sc[keep])
            ids, sc = hit
        seen = memo.get(_TERMS)
        if seen is not None:
            seen[(field, text)] = ids
        return ids, sc

    def _unvisited(self, q: Q.Query, memo: dict) -> None:
        """The terms of a sub-query the evaluation did not walk (kept, or after an And's empty part), for
        `run`'s `terms` (None: to be looked up)."""
        seen = memo.get(_TERMS)
        if seen is None:
            return
        kept = self._kept.get(id(q))
        if kept is not None:
            if kept[2] is None:
                kept[2] = list(self.leaves(q, None))
            keys = kept[2]
        else:
            keys = self.leaves(q, None)
        for key in keys:
            if key not in seen:
                seen[key] = None

    def _boosted(self, field: str, text: str, boost: float, memo: dict) -> tuple[np.ndarray, np.ndarray]:
        """`_term`'s postings times a boost, multiplied once per scope, term and boost (bounded: the index's
        terms and games, and the query's fixed weights)."""
        ids, sc = self._term(field, text, memo)
        if boost == 1.0 or not len(ids):
            return ids, sc
        scope = memo.get(_WITHIN)
        key = (scope[0] if scope else None, field, text, boost)
        hit = self._times.get(key)
        if hit is None:
            hit = self._times[key] = (ids, sc * boost)
        return hit

    @staticmethod
    def _union(
        parts: list[tuple[np.ndarray, np.ndarray]], n: int, memo: dict | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """The documents (numbered under `n`) of any part, each scoring the sum of its parts' scores (added
        in the parts' order). Counted over the corpus, the union's documents are kept in the `memo` by its
        parts' documents (`_or`'s coordination, an Or of the same results at constant scores, reads them)."""
        parts = [p for p in parts if len(p[0])]
        if not parts:
            return _EMPTY
        if len(parts) == 1:
            return parts[0]
        ids = np.concatenate([p[0] for p in parts])
        weights = np.concatenate([p[1] for p in parts])
        if n <= _DENSE_UP_TO or len(ids) * 64 > n:  # count over the corpus (cheaper than sorting)
            dense = np.bincount(ids, weights=weights, minlength=n)
            if weights.min() > 0:  # (BM25F's and the signals' scores are): in the union iff its sum is > 0
                present = dense > 0
                big = max(parts, key=_ids_len)[0]
                # As many members as the largest part has documents: they are its documents (7 unions in 10
                # here, a word's other forms or a signal's narrower results within another's). Counting them
                # costs less than listing them.
                u = big if np.count_nonzero(present) == len(big) else present.nonzero()[0]
            else:
                present = np.zeros(n, dtype=bool)
                present[ids] = True
                u = present.nonzero()[0]
            if memo is not None:  # (the parts kept with it, so that their ids stay theirs)
                memo[("union", *(id(p[0]) for p in parts))] = (parts, ids, u)
            return u, dense.take(u)
        u, inverse = np.unique(ids, return_inverse=True)
        return u, np.bincount(inverse, weights=weights, minlength=len(u))

    def _run(self, q: Q.Query, memo: dict) -> tuple[np.ndarray, np.ndarray]:
        kind = type(q)
        if (kind is Q.Or or kind is Q.And) and len(q.subqueries) > 1:  # the most frequent nodes, first
            return self._or(q, memo) if kind is Q.Or else self._and(q, memo)
        if isinstance(q, Q.Term):
            return self._boosted(q.fieldname, q.text, q.boost, memo)
        if isinstance(q, Q.Require):
            a, b = q.subqueries
            ia, sa = self.run(a, memo)
            ib, _ = self.run(b, memo)
            keep = _members(ia, ib, memo[_SIZE])
            return ia[keep], _times(sa[keep], q.boost)
        if isinstance(q, Q.ConstantScoreQuery):
            ids, _ = self.run(q.child, memo)
            return ids, np.full(len(ids), float(q.score))
        if isinstance(q, Q.AndMaybe):
            a, b = q.subqueries
            ia, sa = self.run(a, memo)
            if type(b) is Q.Or and len(b.subqueries) > 1 and all(type(t) is Q.Term for t in b.subqueries):
                return ia, _times(sa + self._or_at(b, ia, memo), q.boost)
            ib, sb = self.run(b, memo)
            return ia, _times(sa + _scores_at(ib, sb, ia, memo[_SIZE]), q.boost)
        if isinstance(q, (Q.And, Q.Or)) and len(q.subqueries) <= 1:
            # Whoosh's own behaviour: a compound of one query is that query (its boost is not applied).
            if not q.subqueries:
                return _EMPTY
            return self.run(q.subqueries[0], memo)
        if isinstance(q, Q.Or):
            return self._or(q, memo)
        if isinstance(q, Q.And):
            return self._and(q, memo)
        if q is Q.NullQuery or isinstance(q, type(Q.NullQuery)):
            return _EMPTY
        raise TypeError(f"query type {type(q).__name__} is not evaluated")

    def _or(self, q: Q.Or, memo: dict) -> tuple[np.ndarray, np.ndarray]:
        """An Or of two queries or more."""
        subs = q.subqueries
        if type(subs[0]) is Q.ConstantScoreQuery and all(type(c) is Q.ConstantScoreQuery for c in subs):
            score = float(subs[0].score)
            if (
                all(float(c.score) == score for c in subs)
                and score > 0
                and (score * 1024).is_integer()
                and score * 1024 * len(subs) < 2**40
            ):
                out = self._constant_or(q, score, memo)
                if out is not None:
                    return out
        # the term children first, then the others (the order a dense evaluation adds them in)
        parts = []
        for t in q.subqueries:
            if type(t) is Q.Term:
                ids, sc = self._boosted(t.fieldname, t.text, t.boost, memo)
                if len(ids):  # (an empty part adds nothing)
                    parts.append((ids, sc))
        parts += [self.run(c, memo) for c in q.subqueries if type(c) is not Q.Term]
        ids, sc = self._union(parts, memo[_SIZE], memo)
        return ids, _times(sc, q.boost)

    def _constant_or(self, q: Q.Or, score: float, memo: dict) -> tuple[np.ndarray, np.ndarray] | None:
        """An Or of queries at one constant score (the coordination signal: each word found counts `score`),
        when that score is a multiple of 1/1024: each document's sum, `score` added once for each part it is
        in, is then exactly its count of parts times `score` (every partial sum is such a multiple, well under
        2**52 of them). The parts' documents are counted once, and the union's documents are those of the
        union of the same results counted before (the any-word signal), when there is one. None: not so."""
        n = memo[_SIZE]
        results = [r for r in (self.run(c.child, memo)[0] for c in q.subqueries) if len(r)]
        if not results:
            return _EMPTY
        if len(results) == 1:
            return results[0], _times(np.full(len(results[0]), score), q.boost)
        hit = memo.get(("union", *map(id, results)))
        if hit is not None:
            ids, u = hit[1], hit[2]
        else:
            ids, u = np.concatenate(results), None
            if not (n <= _DENSE_UP_TO or len(ids) * 64 > n):
                return None
        counts = np.bincount(ids, minlength=n)
        if u is None:
            u = (counts > 0).nonzero()[0]
        return u, _times(counts.take(u) * score, q.boost)

    def _or_at(self, q: Q.Or, at: np.ndarray, memo: dict) -> np.ndarray:
        """The scores of an Or of terms at the documents `at` (0 where it does not match): what `_or` gives
        there, each document's parts added in the same order, without counting the union over the corpus
        (the character pairs that only rank an AndMaybe's matches)."""
        parts = []
        for t in q.subqueries:
            ids, sc = self._boosted(t.fieldname, t.text, t.boost, memo)  # (the products kept, the same)
            if len(ids):
                parts.append((ids, sc))
        if not parts or not len(at):
            return np.zeros(len(at))
        ids = np.concatenate([p[0] for p in parts])
        weights = np.concatenate([p[1] for p in parts])
        if memo[_SIZE] <= _DENSE_UP_TO:  # summed over the corpus, then read at `at` (the same sums)
            return _times(np.bincount(ids, weights=weights, minlength=memo[_SIZE]).take(at), q.boost)
        place = np.full(memo[_SIZE], -1, dtype=np.int64)  # each document's place in `at`
        place[at] = np.arange(len(at))
        where = place[ids]
        keep = where >= 0
        return _times(np.bincount(where[keep], weights=weights[keep], minlength=len(at)), q.boost)

    def _and(self, q: Q.And, memo: dict) -> tuple[np.ndarray, np.ndarray]:
        """An And of two queries or more."""
        if all(isinstance(c, Q.Term) for c in q.subqueries):
            parts = [(*self._term(c.fieldname, c.text, memo), c.boost) for c in q.subqueries]
        else:
            if not self._may_all(q.subqueries, memo):
                # a part no section can match (none of its terms in the index: the title signal of a long
                # question, one of whose words no title has) empties the whole: no part need be run
                for c in q.subqueries:
                    self._unvisited(c, memo)
                return _EMPTY
            parts = []
            for i, c in enumerate(q.subqueries):  # an empty child empties the whole: the rest need not be run
                ids, sc = self.run(c, memo)
                if not len(ids):
                    for rest in q.subqueries[i + 1 :]:
                        self._unvisited(rest, memo)
                    return _EMPTY
                parts.append((ids, sc, 1.0))
        common = min((p[0] for p in parts), key=len)
        if not len(common):
            return _EMPTY
        for ids, _, _ in sorted(parts, key=lambda p: len(p[0])):
            if not len(common):
                return _EMPTY
            if ids is not common:
                if len(common) * _SEARCH_BELOW < len(ids):
                    common = common[_members(common, ids, memo[_SIZE])]
                else:
                    common = common[self._spread(ids, None, memo)[common]]
        scores = np.zeros(len(common))
        for ids, sc, boost in parts:
            if ids is common:  # the part no other narrowed
                at = sc
            elif len(common) * _SEARCH_BELOW < len(ids):
                at = _scores_at(ids, sc, common, memo[_SIZE])
            else:
                at = self._spread(ids, sc, memo)[common]
            scores += at * boost if boost != 1.0 else at
        return common, _times(scores, q.boost)

    def may_match(self, q: Q.Query) -> bool:
        """Whether some section may match the query, from the index's terms alone (`lexicon.json`): every
        part of an And, some part of an Or; a term of a field not listed, or a query of another kind, may."""
        kind = type(q)
        if kind is Q.Term:
            known = self._terms.get(q.fieldname)
            return known is None or q.text in known
        if kind is Q.Or:
            return any(self.may_match(c) for c in q.subqueries)
        if kind is Q.And:
            return all(self.may_match(c) for c in q.subqueries)
        if kind is Q.ConstantScoreQuery:
            return self.may_match(q.child)
        return True

    def _may_all(self, subs: list[Q.Query], memo: dict) -> bool:
        """Whether every one of an And's parts may match (`may_match`; a part already run, in the memo, is
        left to its result)."""
        return all(id(c) in memo or self.may_match(c) for c in subs)

    def _spread(self, ids: np.ndarray, scores: np.ndarray | None, memo: dict) -> np.ndarray:
        """A result over the whole corpus: whether each document is in it (`scores` None), or its score (0
        where absent). Made once a query for each result (a word's result is looked up by the all-words
        signal and by each all-but-one signal); the memo keeps the arrays, so that their ids stay theirs."""
        key = ("spread", id(ids), id(scores))
        hit = memo.get(key)
        if hit is None:
            if scores is None:
                out = np.zeros(memo[_SIZE], dtype=bool)
                out[ids] = True
            else:
                out = np.zeros(memo[_SIZE])
                out[ids] = scores
            hit = memo[key] = (ids, scores, out)
        return hit[2]

    def terms_matched(
        self,
        q: Q.Query,
        docnums: list[int],
        fields: set[str],
        few: frozenset[str] = frozenset(),
        game: str | None = None,
        terms: dict | None = None,
    ) -> set[tuple[str, str]]:
        """The query's terms (in `fields`) that any of the documents holds (what the snippets mark), in a
        few array operations for all the terms at once. For a field in `few`, one such term at most (the
        first found): the caller asks only whether there is one. Documents of one `game` are looked up in
        the game's postings (`run`'s scope). `terms`: what `run`'s `terms` gathered for this query and game
        (every term of the query, with its postings when looked up), so that the query is not walked again."""
        if terms is not None:
            leaves = {key: held for key, held in terms.items() if key[0] in fields}
        else:
            leaves = dict.fromkeys(self.leaves(q, fields))
        if not docnums or not leaves:
            return set()
        scope = self._game_docs(game) if game else None
        out: set[tuple[str, str]] = set()
        found_few: set[str] = set()
        if (len(scope[2]) if scope is not None else self.n) <= _SMALL_UP_TO:  # `_run_small`'s postings
            small, scope_game = self._small, game or None
            for key, held in leaves.items():
                if key[0] in found_few:
                    continue
                if held is None:  # (the postings not looked up by the evaluation: its scope's, as there)
                    held = small.get((scope_game, *key))
                    if held is None:
                        held = self._small_postings(scope_game, *key)
                if held and not held.keys().isdisjoint(docnums):
                    out.add(key)
                    if key[0] in few:
                        found_few.add(key[0])
            return out
        memo: dict = {_SIZE: self.n}
        if scope is not None:
            memo = {_WITHIN: (game, *scope), _SIZE: len(scope[2])}
            docnums = scope[1][docnums]  # the game's numbering
        wanted = np.zeros(memo[_SIZE], dtype=bool)
        wanted[docnums] = True
        keys, lists = [], []
        for key, ids in leaves.items():
            if key[0] in found_few:
                continue  # these count only as a whole (one found is enough): the first found ends the search
            if ids is None:
                ids = self._term(*key, memo)[0]
            if not len(ids):
                continue
            if key[0] in few:
                if wanted[ids].any():
                    out.add(key)
                    found_few.add(key[0])
                continue
            keys.append(key)
            lists.append(ids)
        if keys:
            held = wanted[np.concatenate(lists)]
            starts = np.fromiter(accumulate([len(x) for x in lists[:-1]], initial=0), np.int64, len(lists))
            found = np.logical_or.reduceat(held, starts)
            out.update(keys[i] for i in np.flatnonzero(found))
        return out

    def leaves(self, q: Q.Query, fields: set[str] | None) -> dict[tuple[str, str], None]:
        """The query's terms (those in `fields`; all for None), each once. A sub-query shared by several
        signals is walked once, a kept one (`keep`) once for all."""
        leaves: dict[tuple[str, str], None] = {}
        stack = [q]
        walked: set[int] = set()
        term, compound = Q.Term, (Q.And, Q.Or, Q.Require, Q.AndMaybe)
        while stack:
            node = stack.pop()
            kind = type(node)
            if kind is term:
                if fields is None or node.fieldname in fields:
                    leaves[(node.fieldname, node.text)] = None
                continue
            if id(node) in walked:
                continue
            walked.add(id(node))
            kept = self._kept.get(id(node))
            if kept is not None and node is not q:
                if kept[2] is None:
                    kept[2] = list(self.leaves(node, None))
                leaves.update((key, None) for key in kept[2] if fields is None or key[0] in fields)
            elif kind in compound:
                stack.extend(node.subqueries)
            elif kind is Q.ConstantScoreQuery:
                stack.append(node.child)
        return leaves

    def top(self, scores: np.ndarray, mask: np.ndarray, limit: int) -> list[int]:
        """The best `limit` documents of a dense evaluation (`evaluate`)."""
        idx = np.flatnonzero(mask)
        return self.top_of(idx, scores[idx], limit)

    @staticmethod
    def top_of(ids: np.ndarray, scores: np.ndarray, limit: int) -> list[int]:
        """The best `limit` documents: higher score first, then lower document number (as Whoosh orders)."""
        if len(ids) <= _SORT_BELOW:  # (a few: sorted as Python floats, the same order)
            order = sorted(zip(ids.tolist(), scores.tolist(), strict=True), key=lambda x: (-x[1], x[0]))
            return [d for d, _ in order[:limit]]
        if len(ids) > _NARROW_FROM and len(ids) > 16 * limit:
            # First the few at or above a bound that at least `limit` reach (each try one comparison over
            # the matches; a full partition of thousands cost more): the best `limit` and every tie at the
            # cut are among them, so what follows orders the same documents.
            keep = _at_least(scores, limit)
            ids, scores = ids[keep], scores[keep]
            if len(ids) <= _SORT_BELOW:
                order = sorted(zip(ids.tolist(), scores.tolist(), strict=True), key=lambda x: (-x[1], x[0]))
                return [d for d, _ in order[:limit]]
        if len(ids) > limit:
            sel = np.argpartition(-scores, limit - 1)[:limit]
            keep = scores >= scores[sel].min()  # keep every tie at the cut, then order
            ids, scores = ids[keep], scores[keep]
        order = np.lexsort((ids, -scores))
        return [int(d) for d in ids[order][:limit]]


# The fields whose matched terms the snippets mark (`SearchIndex._surfaces`; character pairs as the needle).
MARKED_FIELDS = {"words", "title", "reading", "syn", "grams"}
_EMPTY = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64))


def _ids_len(part: tuple[np.ndarray, np.ndarray]) -> int:
    return len(part[0])


def _times(scores: np.ndarray, boost: float) -> np.ndarray:
    """Scores times a boost (the same array for 1: x × 1 is x; arrays of results are never changed)."""
    return scores if boost == 1.0 else scores * boost


# Looking documents up in a result: by a binary search each when they are far fewer than the result's
# documents, otherwise through an array the corpus's size (filling and reading one costs a few microseconds;
# a binary search per document, a few thousand of them, costs far more).
_SEARCH_BELOW = 16
# Up to this many sections, a union is counted over the whole corpus however few its documents (sorting
# them, `np.unique`, costs more until the corpus is larger).
_DENSE_UP_TO = 20_000


# Up to this many documents in a search's scope (a game's sections; the whole of a small corpus), the query
# is evaluated with Python dicts (`Evaluator._run_small`): numpy's cost per call is more than the work.
_SMALL_UP_TO = 400


# Up to this many matches, the best are sorted in Python (`Evaluator.top_of`).
_SORT_BELOW = 64
# From this many matches, the best are first narrowed down by a bound on their score (`_at_least`).
_NARROW_FROM = 256


def _at_least(scores: np.ndarray, limit: int) -> np.ndarray:
    """A mask of the scores at or above a bound that at least `limit` of them reach, so that it holds the best
    `limit` and every score equal to the `limit`-th best: the `limit`-th best of every eighth score (those
    are scores too, so at least `limit` reach it), which about eight times `limit` of them reach."""
    sample = scores[::8]
    bound = np.partition(sample, len(sample) - limit)[len(sample) - limit]
    return scores >= bound


def _dict_times(found: dict[int, float], boost: float) -> dict[int, float]:
    """`_times` for a small scope's result (the same dict for 1)."""
    return found if boost == 1.0 else {d: s * boost for d, s in found.items()}


def _members(ids: np.ndarray, of: np.ndarray, n: int) -> np.ndarray:
    """Which of the (sorted) `ids` are in the (sorted) array `of` (document numbers under `n`): booleans."""
    if not len(of):
        return np.zeros(len(ids), dtype=bool)
    if len(ids) * _SEARCH_BELOW < len(of):
        pos = np.searchsorted(of, ids)
        pos[pos == len(of)] = 0
        return of[pos] == ids
    mask = np.zeros(n, dtype=bool)
    mask[of] = True
    return mask[ids]


def _scores_at(ids: np.ndarray, scores: np.ndarray, at: np.ndarray, n: int) -> np.ndarray:
    """The scores of the documents `at` in a sparse result (0 where absent; document numbers under `n`)."""
    if not len(ids):
        return np.zeros(len(at))
    if len(at) * _SEARCH_BELOW < len(ids):
        pos = np.searchsorted(ids, at)
        pos[pos == len(ids)] = 0
        return np.where(ids[pos] == at, scores[pos], 0.0)
    spread = np.zeros(n)
    spread[ids] = scores
    return spread[at]
