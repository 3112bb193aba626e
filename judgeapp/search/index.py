"""An opened index: the query built (`QueryBuilding`), evaluated, and its snippets made."""

from __future__ import annotations

import bisect
import itertools
import json
import re
import threading
from collections import OrderedDict
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from whoosh import index as whoosh_index

from ..textnorm import (
    clean_query,
    fold,
    is_kana,
    squash,
    to_katakana,
)
from .analysis import KANA_COUNT_QUESTION, QUERY_STOP
from .evaluate import MARKED_FIELDS, Evaluator
from .games import ABOUT_A_GAME, GameNames, scope_names, without_names
from .query import QueryBuilding
from .schema import WEIGHT, Hit, NamedGame, Results
from .snippets import Gapless, Marker, best_window, escape_html, span_end

if TYPE_CHECKING:
    pass


def _no_gapless(docnum: int) -> None:
    """No gapless text (a marker without a needle does not read it)."""
    return None


def _hit(f: dict, snippet: str, score: float) -> Hit:
    """A section's stored fields as a hit (in `Hit`'s order: id, game, doc, title, doc_title, snippet, score)."""
    return Hit(f["id"], f["game"], f["doc"], f["title_text"], f["doc_title"], snippet, round(score, 3))


class SearchIndex(QueryBuilding):
    """An opened index: `search()` is safe to call from many threads."""

    CACHE_SIZE = 2048  # recent answers kept (a few MB at most)

    def __init__(
        self,
        path: str | Path,
        synonyms: list[tuple[list[str], list[str]]] | None = None,
        games: dict[str, list[str]] | None = None,
    ):
        """`games`: each game's names as a judge may type them (`Corpus.game_names`), read in a query's words
        (`search.games`)."""
        self.path = Path(path)
        self.ix = whoosh_index.open_dir(str(self.path))
        lex = json.loads((self.path / "lexicon.json").read_text(encoding="utf-8"))
        self.lexicon: dict[str, dict[str, list[str]]] = lex
        self._open_query(lex, synonyms)
        self._evaluator = Evaluator(self.ix, lex.get("terms"))
        # Each section folded once, for the snippets.
        self._folded = [fold(f["text"] or f["title_text"]) for f in self._evaluator.stored]
        self._gapless: dict[int, Gapless] = {}  # each section's folded text without gaps (`Gapless`)
        self._section_weight = self._container_weights()
        self._cache: OrderedDict[tuple, Results] = OrderedDict()
        self._cache_lock = threading.Lock()
        self.game_names = GameNames(games or {}, self.analyzer.bounds)
        # a game's own names in a search of that game (`scope_names`), also typed in hiragana as a whole part
        self._scope_names = GameNames(
            scope_names(games or {}, self.analyzer.words), self.analyzer.bounds, hiragana_parts=True
        )
        self._games_of = np.array([f["game"] for f in self._evaluator.stored])  # each section's game
        # each game's sections with text of their own, in the text's order (`_game_itself`)
        self._game_order: dict[str, list[int]] = {}
        for i, f in enumerate(self._evaluator.stored):
            if (f["text"] or "").strip():
                self._game_order.setdefault(f["game"], []).append(i)
        self._named_weights: dict[frozenset, np.ndarray] = {}  # `_weights`, per set of games named

    # running

    def search(self, query: str, game: str | None = None, limit: int = 10) -> Results:
        """Sections matching a judge's query, best first (answers for recent queries are kept: judges at one
        event search the same words, and the index does not change while the process runs)."""
        key = (clean_query(query, number_forms=True), game, max(1, min(int(limit), 100)))
        with self._cache_lock:
            hit = self._cache.get(key)
            if hit is not None:
                self._cache.move_to_end(key)
                return hit
        results = self.search_uncached(query, game, limit)
        with self._cache_lock:
            self._cache[key] = results
            if len(self._cache) > self.CACHE_SIZE:
                self._cache.popitem(last=False)
        return results

    def search_uncached(
        self, query: str, game: str | None = None, limit: int = 10, read_names: bool = True
    ) -> Results:
        """Sections matching a judge's query, best first; never raises on what a user typed.

        One query with every signal at once (`query()`), evaluated once over the index."""
        text = clean_query(query, number_forms=True)
        limit = max(1, min(int(limit), 100))
        if not text:
            return Results(query=text, total=0, hits=[])
        # Without a game, the games the query names in its words (リセ 遅刻, `search.games`) come first: their
        # sections' scores weigh more, the other games' sections still follow; their names are the judge's
        # scope, not words a section must hold.
        named = self.game_names.read(text) if not game and self.game_names and read_names else []
        asked = without_names(text, named) if named else text
        if game and self._scope_names:
            # in a game's search, its own name narrows nothing (イジンデン 遅延): left out, unless it is all
            own = [n for n in self._scope_names.read(text) if n.game == game]
            if own and self._asks_more(rest := without_names(text, own)):
                asked = rest
            elif own:  # its name alone (DM in dm-senshu's search): its text from the start, as without a game
                return replace(self._game_itself(text, own, limit), named=[], rest="")
        if named and not self._asks_more(asked):
            # nothing but a name, or a name and what asks about the game (リセ, DM, リセってなに, イジンデンのルール)
            return self._game_itself(text, named, limit)
        q = self.query(asked) if squash(asked) else None
        first = list(dict.fromkeys(n.game for n in named))
        if q is None:
            return Results(query=text, total=0, hits=[])
        ev = self._evaluator
        # (as `Require(q, Term("game", game))`), each section's score times its weight
        terms: dict = {}  # the query's terms, gathered by the evaluation (for `terms_matched`)
        total, at = ev.best(q, game or None, limit, self._weights(first), terms)
        needle = squash(asked)
        hits: list[Hit] = []
        short = len(needle) <= 1
        top = list(at)
        every = ev.terms_matched(
            q, top, MARKED_FIELDS, few=frozenset({"grams"}), game=game or None, terms=terms
        )
        if any(fl == "grams" for fl, _ in every) and len(needle) >= 2:
            every.add(("needle", needle))
        marker = self._marker(every, short)
        stored, folded, window = ev.stored, self._folded, self._window
        # (a section's gapless text only for a needle to find: `Marker.spans`)
        gapless = self._gapless_of if marker is not None and marker.needles else _no_gapless
        for docnum in top:
            f = stored[docnum]
            shown = f["text"] or f["title_text"]
            snippet = window(shown, folded[docnum], marker, gapless(docnum))
            hits.append(_hit(f, snippet, at[docnum]))
        if not named:
            return Results(query=text, total=total, hits=hits)
        shown: dict[str, str] = {}  # each game named, by the name it was typed first
        for n in named:
            shown.setdefault(n.game, n.name)
        games_shown = {h.game for h in hits}
        found = {
            g: g in games_shown or (total > len(hits) and ev.best(q, g, 1, self._section_weight)[0] > 0)
            for g in shown
        }
        if not any(found.values()) and all(len(n) <= 2 and n.isascii() for n in shown.values()):
            # DMで暴言, DMが来た: two latin letters naming a game whose text holds nothing of the rest are more
            # likely a direct message than the game; searched as typed, with no line about a game
            return self.search_uncached(query, game, limit, read_names=False)
        return Results(
            query=text,
            total=total,
            hits=hits,
            # (found: a section of the game among the hits or further down, or none at all)
            named=[NamedGame(name, g, found[g]) for g, name in shown.items()],
            rest=asked,
        )

    def _asks_more(self, rest: str) -> bool:
        """Whether what is left of a query without the games' names asks anything of a text (遅刻, 先攻), not only
        about the game itself (って何, とは, ？, のルール, について, a lone kana). Kana that are a word of the corpus
        or a synonym key as a whole, or a count asked for, ask more however SudachiPy cuts them (おくれ as お|くれ,
        なんまい as なん|まい; a review)."""
        words = self.analyzer.words(rest)
        kana = to_katakana(squash(rest))
        if (
            len(kana) >= 2
            and is_kana(kana)
            and not any(w.forms[0] in ABOUT_A_GAME for w in words)  # (るーる: the game's rules, as ルール)
            and (kana in self.readings or kana in self._reading_rank or KANA_COUNT_QUESTION.fullmatch(kana))
        ):
            return True
        return any(
            w.forms[0] not in QUERY_STOP
            and w.forms[0] not in ABOUT_A_GAME
            and not (len(w.surface) == 1 and is_kana(w.surface))
            for w in words
        )

    def _game_itself(self, text: str, named: list, limit: int) -> Results:
        """A query that only names games (リセ, DM, デュエマって何？): the games' sections from the start of their
        text, in its order, several games in turn; headings without text of their own are left out (their
        subsections follow). Each game is named as found, and `rest` is the query itself: the page links to the
        game's library, not to a search."""
        games = list(dict.fromkeys(n.game for n in named))
        stored = self._evaluator.stored
        each = [self._game_order.get(g, []) for g in games]
        # (two games named, リセとDM: their sections in turn, each game's from its start)
        order = [i for turn in itertools.zip_longest(*each) for i in turn if i is not None]
        window, folded = self._window, self._folded
        hits = [
            _hit(stored[d], window(stored[d]["text"], folded[d], None, None), 1.0 - rank / 1000)
            for rank, d in enumerate(order[:limit])
        ]
        shown: dict[str, str] = {}
        for n in named:
            shown.setdefault(n.game, n.name)
        return Results(
            query=text,
            total=len(order),
            hits=hits,
            named=[NamedGame(name, g, True) for g, name in shown.items()],
            rest=text,
        )

    def _container_weights(self) -> np.ndarray:
        """Each section's own weight: a section with no text of its own (a heading over its subsections) carries
        no answer, so it ranks lower (`WEIGHT["container"]`)."""
        return np.array(
            [1.0 if (f["text"] or "").strip() else WEIGHT["container"] for f in self._evaluator.stored]
        )

    def _weights(self, games: list[str]) -> np.ndarray:
        """Each section's weight: a heading without text of its own at half (`WEIGHT["container"]`), a section
        of a game the query names times `WEIGHT["named_game"]`."""
        if not games:
            return self._section_weight
        key = frozenset(games)
        hit = self._named_weights.get(key)
        if hit is None:
            named = np.isin(self._games_of, games)
            hit = self._section_weight * np.where(named, WEIGHT["named_game"], 1.0)
            if len(self._named_weights) < 64:  # (bounded: the sets of games named)
                self._named_weights[key] = hit
        return hit

    # snippets

    def _gapless_of(self, docnum: int) -> Gapless:
        """A section's `Gapless` (made on first use, kept: bounded by the index's sections)."""
        hit = self._gapless.get(docnum)
        if hit is None:
            hit = self._gapless[docnum] = Gapless(self._folded[docnum])
        return hit

    def _surfaces(self, terms: set[tuple[str, str]], short: bool = False) -> list[str]:
        out: set[str] = set()
        for field, term in terms:
            if field in ("words", "title"):
                out.add(term)
                out.update(self.lexicon["words"].get(term, ()))
            elif field in ("reading", "syn"):
                out.update(self.lexicon.get(field, {}).get(term, ()))
        # One-character pieces (の, 数, ち) would mark noise unless the judge typed one character.
        return sorted((x for x in out if x.strip() and (short or len(x) > 1)), key=len, reverse=True)[:300]

    def _marker(self, terms: set[tuple[str, str]], short: bool = False) -> Marker | None:
        """What marks every surface of the query's matched terms (built once a query)."""
        branches = [(re.escape(x), x, False) for x in self._surfaces(terms, short)]
        branches += [
            ("[・･ー\\s]*".join(re.escape(ch) for ch in t), t, True) for f, t in terms if f == "needle"
        ]
        branches.sort(key=lambda b: len(b[0]), reverse=True)
        return Marker([(text, needle) for _, text, needle in branches]) if branches else None

    def _snippet(
        self,
        text: str,
        terms: set[tuple[str, str]],
        width: int = 110,
        short: bool = False,
        folded: str | None = None,
        marker: Marker | None = None,
        gapless: Gapless | None = None,
    ) -> str:
        """A short passage with the matched words in <mark>; everything else escaped."""
        folded = fold(text) if folded is None else folded
        marks = marker if marker is not None else self._marker(terms, short)
        return self._window(text, folded, marks, gapless, width)

    @staticmethod
    def _window(
        text: str, folded: str, marks: Marker | None, gapless: Gapless | None, width: int = 110
    ) -> str:
        """`_snippet` of a section's text and its folded text, with the query's marker."""
        spans = marks.spans(folded, gapless) if marks is not None else []
        start = 0
        if spans:
            # The window that holds the most marks (spans come in order of their start).
            start = max(0, best_window(spans, width) - 20)
        end = min(len(text), start + width)
        out = ["…" if start > 0 else ""]
        pos = start
        # (the spans do not overlap, in order: their ends too; the first that ends after the window's start,
        # up to the first that starts at its end or after)
        first = bisect.bisect_right(spans, start, key=span_end) if spans and spans[0][1] <= start else 0
        window = text[start:end]
        if "&" in window or "<" in window or ">" in window or '"' in window or "'" in window:
            esc = escape_html
        else:  # (no piece of the window has a character to escape: each is as it is)
            esc = str
        for a, b in itertools.islice(spans, first, None):
            if a >= end:
                break
            a, b = max(a, start), min(b, end)
            if a < pos:
                continue
            out.append(esc(text[pos:a]))
            out.append("<mark>" + esc(text[a:b]) + "</mark>")
            pos = b
        out.append(esc(text[pos:end]))
        out.append("…" if end < len(text) else "")
        return "".join(out).replace("\n", " ")
