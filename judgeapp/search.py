"""Japanese full-text search over rule sections. Whoosh stays behind this one module.

How a judge's query is read (docs/corpus.md, "Search"):
- words: SudachiPy splits the text into words (long and short units) and gives each word's normalized form
  and reading; particles and auxiliaries are dropped. Index and query are folded the same way (NFKC,
  case, hiragana→katakana), so 引いた finds 引く, すりーぶ finds スリーブ.
- readings: a query typed in kana also matches the words' readings, so けいこく finds 警告 and ぼち 墓地.
- synonyms: judges' words that the texts do not use (rules_corpus/synonyms.yaml) add the texts' words.
- section numbers as typed (6b-iii, 301, 第9章) go straight to their section.
- characters: when the words find fewer than asked, the query is matched character by character (bigrams)
  with the middle dot, long-vowel mark and brackets ignored, so バイスホール and ボルバル find the cards.
Queries are built in code, never parsed from the user's text, so no input is a syntax error.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import numpy as np
import yaml
from markupsafe import escape
from whoosh import index as whoosh_index
from whoosh import query as Q
from whoosh import scoring
from whoosh.analysis import SpaceSeparatedTokenizer
from whoosh.fields import ID, KEYWORD, STORED, TEXT, Schema

from .textnorm import clean_query, fold, is_kana, squash, squash_map, to_katakana

# Bump when the analysis changes: an index built by another version (of this code or of SudachiPy and its
# dictionary) is rebuilt on start.
ANALYZER_VERSION = "4"


def _analysis_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    parts = [ANALYZER_VERSION]
    for package in ("sudachipy", "sudachidict-core"):
        try:
            parts.append(f"{package}={version(package)}")
        except PackageNotFoundError:
            parts.append(f"{package}=?")
    return " ".join(parts)

_DROP_POS = {"助詞", "助動詞", "補助記号", "空白", "記号"}
# Words that carry no meaning in a judge's query (normalized forms, folded).
_QUERY_STOP = {fold(w) for w in ("為る", "居る", "有る", "成る", "仕舞う", "事", "物", "様", "ところ", "れる", "られる", "せる", "させる", "ない", "て", "た")}

_space = SpaceSeparatedTokenizer()
SCHEMA = Schema(
    id=ID(stored=True, unique=True),
    game=ID(stored=True),
    doc=ID(stored=True),
    number=KEYWORD(scorable=False),
    title=TEXT(analyzer=_space, phrase=False),
    words=TEXT(analyzer=_space, phrase=False),
    reading=TEXT(analyzer=_space, phrase=False),
    grams=TEXT(analyzer=_space, phrase=False),
    title_text=STORED,
    doc_title=STORED,
    text=STORED,
)

FIELD_BOOST = {"title": 2.5, "words": 1.0, "reading": 0.8, "grams": 0.5}


@dataclass
class IndexDoc:
    """One section as the index sees it."""

    id: str
    game: str
    doc: str
    anchor: str
    title: str
    doc_title: str
    text: str


@dataclass
class Hit:
    id: str
    game: str
    doc: str
    title: str
    doc_title: str
    snippet: str
    score: float

    @property
    def url(self) -> str:
        return f"/rules/{self.id}"


@dataclass
class Results:
    query: str
    total: int
    hits: list[Hit]


# --- analysis --------------------------------------------------------------------------------------


@dataclass
class Word:
    """One content word: the forms it can be matched by, its reading, and its surface in the text."""

    surface: str
    forms: tuple[str, ...]
    reading: str
    parts: tuple[str, ...]  # short-unit forms when the long unit splits


class Analyzer:
    """SudachiPy behind a lock: a Sudachi tokenizer cannot be used by two threads at once."""

    def __init__(self) -> None:
        from sudachipy import Dictionary, SplitMode

        self._split_a = SplitMode.A
        self._tokenizer = Dictionary(dict="core").tokenizer(SplitMode.C)
        self._lock = threading.Lock()

    def words(self, text: str) -> list[Word]:
        out: list[Word] = []
        for line in text.splitlines():
            for start in range(0, len(line), 4000):  # Sudachi limits one input's size
                chunk = line[start : start + 4000]
                if chunk.strip():
                    with self._lock:
                        morphemes = list(self._tokenizer.tokenize(chunk))
                        out.extend(self._word(m) for m in morphemes if m.part_of_speech()[0] not in _DROP_POS)
        return [w for w in out if w.forms]

    def _word(self, m) -> Word:
        surface = m.surface()
        forms = dict.fromkeys(f for f in (fold(m.normalized_form()), fold(surface), fold(m.dictionary_form())) if f.strip())
        parts = tuple(
            fold(p.normalized_form()) for p in m.split(self._split_a)
            if p.part_of_speech()[0] not in _DROP_POS
        )
        return Word(surface=surface, forms=tuple(forms), reading=fold(m.reading_form()),
                    parts=parts if len(parts) > 1 else ())


_analyzer: Analyzer | None = None
_analyzer_lock = threading.Lock()


def analyzer() -> Analyzer:
    """The process's one analyzer (loading the dictionary takes a moment)."""
    global _analyzer
    with _analyzer_lock:
        if _analyzer is None:
            _analyzer = Analyzer()
    return _analyzer


def number_keys(anchor: str) -> list[str]:
    """How judges type a section's number: 6b-iii / 6biii, 301, 第9章 / 9章 / ch9."""
    anchor = anchor.lower()
    if re.fullmatch(r"\d+[a-z]?(-[ivx]+)?", anchor):
        return sorted({anchor, anchor.replace("-", "")})
    m = re.fullmatch(r"ch(\d+)", anchor)
    if m:
        n = m.group(1)
        return [f"ch{n}", f"第{n}章", f"{n}章"]
    return []


def _contains(ids: np.ndarray, docnum: int) -> bool:
    """Whether a term's (sorted) posting list holds the document."""
    i = int(np.searchsorted(ids, docnum))
    return i < len(ids) and int(ids[i]) == docnum


def _bigrams(text: str) -> list[str]:
    s = squash(text)
    return [s[i : i + 2] for i in range(len(s) - 1)] if len(s) > 1 else ([s] if s else [])


# --- building ----------------------------------------------------------------------------------------


def build_index(docs: Iterable[IndexDoc], path: str | Path, version: str = "") -> int:
    """Build a fresh index at `path` (replacing what is there once complete); return the section count."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    ix = whoosh_index.create_in(str(tmp), SCHEMA)
    lexicon: dict[str, dict[str, set[str]]] = {"words": {}, "reading": {}}
    an = analyzer()
    count = 0
    writer = ix.writer(limitmb=256)
    try:
        for d in docs:
            body_words = an.words(d.text)
            title_words = an.words(d.title)
            for w in body_words + title_words:
                surface = fold(w.surface)
                for f in w.forms + w.parts:
                    lexicon["words"].setdefault(f, set()).add(surface)
                lexicon["reading"].setdefault(w.reading, set()).add(surface)

            def terms(ws: list[Word]) -> str:
                return " ".join(t for w in ws for t in w.forms + w.parts)

            writer.add_document(
                id=d.id, game=d.game, doc=d.doc, number=" ".join(number_keys(d.anchor)),
                title=terms(title_words), words=terms(body_words),
                reading=" ".join(w.reading for w in body_words + title_words),
                grams=" ".join(_bigrams(d.title) + _bigrams(d.text)),
                title_text=d.title, doc_title=d.doc_title, text=d.text,
            )
            count += 1
        writer.commit(optimize=True)
    except BaseException:
        writer.cancel()
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    (tmp / "lexicon.json").write_text(
        json.dumps({f: {t: sorted(s) for t, s in m.items()} for f, m in lexicon.items()}, ensure_ascii=False),
        encoding="utf-8",
    )
    (tmp / "meta.json").write_text(json.dumps({"corpus": version, "analyzer": _analysis_version(), "sections": count}))
    old = path.with_name(f".{path.name}.old-{os.getpid()}")
    if path.exists():
        path.rename(old)
    tmp.rename(path)
    shutil.rmtree(old, ignore_errors=True)
    return count


def index_is_current(path: str | Path, version: str) -> bool:
    meta = Path(path) / "meta.json"
    try:
        data = json.loads(meta.read_text())
    except (OSError, ValueError):
        return False
    return data.get("corpus") == version and data.get("analyzer") == _analysis_version()


def ensure_index(docs_factory, path: str | Path, version: str, force: bool = False) -> bool:
    """Build the index if it is missing or was built from another corpus (or `force`); True when built.

    Several server processes may start at once, or `judgeapp index` may run beside them: a file lock lets
    one build while the others wait. A running server keeps the index it opened until it restarts.
    """
    path = Path(path)
    if not force and index_is_current(path, version):
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(f".{path.name}.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not force and index_is_current(path, version):
            return False
        build_index(docs_factory(), path, version)
        return True


def load_synonyms(path: str | Path) -> list[tuple[list[str], list[str]]]:
    """The reviewed synonym list: (judges' words, phrases the texts use)."""
    data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or []
    out = []
    for i, entry in enumerate(data):
        if not isinstance(entry, dict) or set(entry) != {"words", "means"}:
            raise ValueError(f"{path}: entry {i}: needs exactly 'words' and 'means'")
        out.append(([str(w) for w in entry["words"]], [str(m) for m in entry["means"]]))
    return out


# --- evaluating ------------------------------------------------------------------------------------------


class _Evaluator:
    """Runs the queries built below over the index's postings with numpy, scoring as Whoosh's BM25F does.

    Whoosh keeps the index on disk and gives the statistics (idf, average and per-document field lengths) and
    the postings; decoding a posting list in pure Python is what made a query slow on a large corpus, so each
    term's postings are decoded once, on first use, into arrays of document numbers and BM25F scores. A query
    is then a handful of numpy operations over arrays the size of the corpus: the top hits, their matched
    terms and the exact number of matches come out of the same pass. Scores and the order of ties (lower
    document number first) are Whoosh's own, so results do not change.
    """

    def __init__(self, ix):
        self.searcher = ix.searcher(weighting=scoring.BM25F())
        self.reader = self.searcher.reader()
        self.n = self.reader.doc_count_all()
        self.weighting = self.searcher.weighting
        self.stored = [self.reader.stored_fields(d) for d in range(self.n)]
        self._lengths: dict[str, np.ndarray] = {}
        self._postings: dict[tuple[str, str], tuple[np.ndarray, np.ndarray]] = {}
        self._lock = threading.Lock()

    def _field_lengths(self, field: str) -> np.ndarray:
        arr = self._lengths.get(field)
        if arr is None:
            arr = np.array([self.reader.doc_field_length(d, field, 0) for d in range(self.n)], dtype=np.float64)
            self._lengths[field] = arr
        return arr

    def postings(self, field: str, text: str) -> tuple[np.ndarray, np.ndarray]:
        """(document numbers, scores) of one term, decoded once."""
        key = (field, text)
        hit = self._postings.get(key)
        if hit is not None:
            return hit
        with self._lock:
            hit = self._postings.get(key)
            if hit is not None:
                return hit
            btext = self.searcher.schema[field].to_bytes(text)
            if (field, btext) not in self.reader:
                hit = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64))
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
        """(scores, matched mask) over every document."""
        n = self.n
        if isinstance(q, Q.Term):
            ids, sc = self.postings(q.fieldname, q.text)
            scores = np.zeros(n)
            scores[ids] = sc * q.boost
            mask = np.zeros(n, dtype=bool)
            mask[ids] = True
            return scores, mask
        if isinstance(q, Q.Require):
            a, b = q.subqueries
            sa, ma = self.evaluate(a)
            _, mb = self.evaluate(b)
            mask = ma & mb
            return np.where(mask, sa, 0.0) * q.boost, mask
        if isinstance(q, (Q.And, Q.Or)) and len(q.subqueries) <= 1:
            # Whoosh's own behaviour: a compound of one query is that query (its boost is not applied).
            if not q.subqueries:
                return np.zeros(n), np.zeros(n, dtype=bool)
            return self.evaluate(q.subqueries[0])
        if isinstance(q, Q.Or):
            terms = [c for c in q.subqueries if isinstance(c, Q.Term)]
            others = [c for c in q.subqueries if not isinstance(c, Q.Term)]
            scores = np.zeros(n)
            mask = np.zeros(n, dtype=bool)
            if terms:  # every term child at once: one bincount instead of one pass each
                parts = [self.postings(t.fieldname, t.text) for t in terms]
                ids = np.concatenate([p[0] for p in parts])
                if len(ids):
                    weights = np.concatenate([p[1] * t.boost for t, p in zip(terms, parts)])
                    scores += np.bincount(ids, weights=weights, minlength=n)
                    mask[ids] = True
            for c in others:
                sc, mc = self.evaluate(c)
                scores += sc
                mask |= mc
            return scores * q.boost, mask
        if isinstance(q, Q.And):
            scores = np.zeros(n)
            mask = np.ones(n, dtype=bool)
            for c in q.subqueries:
                sc, mc = self.evaluate(c)
                scores += sc
                mask &= mc
            return np.where(mask, scores, 0.0) * q.boost, mask
        if q is Q.NullQuery or isinstance(q, type(Q.NullQuery)):
            return np.zeros(n), np.zeros(n, dtype=bool)
        raise TypeError(f"query type {type(q).__name__} is not evaluated")

    def matched_terms(self, q: Q.Query, docnum: int) -> set[tuple[str, str]] | None:
        """The terms that made the document match (only the branches that match it), or None."""
        if isinstance(q, Q.Term):
            ids, _ = self.postings(q.fieldname, q.text)
            return {(q.fieldname, q.text)} if _contains(ids, docnum) else None
        if isinstance(q, Q.Require):
            a = self.matched_terms(q.subqueries[0], docnum)
            return a if a is not None and self.matched_terms(q.subqueries[1], docnum) is not None else None
        if isinstance(q, Q.And):
            out: set[tuple[str, str]] = set()
            for c in q.subqueries:
                t = self.matched_terms(c, docnum)
                if t is None:
                    return None
                out |= t
            return out if q.subqueries else None
        if isinstance(q, Q.Or):
            found = [t for c in q.subqueries if (t := self.matched_terms(c, docnum)) is not None]
            return set().union(*found) if found else None
        return None

    def top(self, scores: np.ndarray, mask: np.ndarray, limit: int) -> list[int]:
        """The best `limit` documents: higher score first, then lower document number (as Whoosh orders)."""
        idx = np.flatnonzero(mask)
        if len(idx) > limit:
            sel = np.argpartition(-scores[idx], limit - 1)[:limit]
            cut = scores[idx][sel].min()
            idx = idx[scores[idx] >= cut]  # keep every tie at the cut, then order
        order = np.lexsort((idx, -scores[idx]))
        return [int(d) for d in idx[order][:limit]]


# --- searching -----------------------------------------------------------------------------------------


class SearchIndex:
    """An opened index: `search()` is safe to call from many threads."""

    CACHE_SIZE = 2048  # recent answers kept (a few MB at most)

    def __init__(self, path: str | Path, synonyms: list[tuple[list[str], list[str]]] | None = None):
        self.path = Path(path)
        self.ix = whoosh_index.open_dir(str(self.path))
        lex = json.loads((self.path / "lexicon.json").read_text(encoding="utf-8"))
        self.lexicon: dict[str, dict[str, list[str]]] = lex
        self.readings = set(lex["reading"])
        self.max_reading = max((len(r) for r in self.readings), default=1)
        self.synonyms = synonyms or []
        self.analyzer = analyzer()
        # Each entry with its keys' dictionary forms, longest key first.
        self._synonym_entries = []
        self._synonym_readings: list[tuple[str, list[str]]] = []
        for keys, means in self.synonyms:
            keys = sorted(keys, key=len, reverse=True)
            self._synonym_entries.append(
                ([squash(k) for k in keys], [[w.forms[0] for w in self.analyzer.words(k)] for k in keys], means))
            # What each key sounds like, so that a query typed in kana (しっかく) finds the entry (失格).
            for k in keys:
                reading = "".join(w.reading for w in self.analyzer.words(k))
                if len(reading) >= 3:
                    self._synonym_readings.append((reading, means))

        self._evaluator = _Evaluator(self.ix)
        self._cache: OrderedDict[tuple, Results] = OrderedDict()
        self._cache_lock = threading.Lock()

    # query building

    def _word_query(self, w: Word, mode: str = "and") -> Q.Query:
        alts: list[Q.Query] = []
        for f in w.forms:
            alts.append(Q.Term("words", f, boost=FIELD_BOOST["words"]))
            alts.append(Q.Term("title", f, boost=FIELD_BOOST["title"]))
        if w.parts:
            parts = [Q.Term("words", p) for p in w.parts]
            alts.append(Q.And(parts) if mode == "and" else Q.Or(parts, boost=0.5))
        if is_kana(w.surface):
            alts.append(Q.Term("reading", w.reading, boost=FIELD_BOOST["reading"]))
        return Q.Or(alts)

    def _kana_chunk_query(self, chunk: str) -> Q.Query | None:
        """A run of kana: the whole run as a word or a reading, or split into known readings."""
        k = fold(to_katakana(chunk))
        alts: list[Q.Query] = [
            Q.Term("words", k, boost=FIELD_BOOST["words"]),
            Q.Term("title", k, boost=FIELD_BOOST["title"]),
            Q.Term("reading", k, boost=FIELD_BOOST["reading"]),
        ]
        pieces = self._segment_reading(k)
        if pieces and len(pieces) > 1:
            alts.append(Q.And([Q.Term("reading", p, boost=FIELD_BOOST["reading"]) for p in pieces]))
        words = [w for w in self.analyzer.words(chunk) if w.forms[0] not in _QUERY_STOP]
        if words:
            alts.append(Q.And([self._word_query(w) for w in words]))
        return Q.Or(alts)

    def _segment_reading(self, k: str) -> list[str]:
        """Greedy longest match of a katakana string against the corpus's word readings (2+ chars)."""
        pieces, i, covered = [], 0, 0
        while i < len(k):
            for j in range(min(len(k), i + self.max_reading), i + 1, -1):
                if k[i:j] in self.readings:
                    pieces.append(k[i:j])
                    covered += j - i
                    i = j
                    break
            else:
                i += 1
        return pieces if covered >= 0.7 * len(k) else []

    def _text_query(self, text: str, mode: str = "and", boost: float = 1.0) -> Q.Query | None:
        parts: list[Q.Query] = []
        for chunk in text.split():
            if is_kana(chunk):
                q = self._kana_chunk_query(chunk)
                if q is not None:
                    parts.append(q)
                continue
            words = [w for w in self.analyzer.words(chunk) if w.forms[0] not in _QUERY_STOP]
            parts.extend(self._word_query(w, mode) for w in words)
        if not parts:
            return None
        parts = parts[:24]
        return Q.And(parts, boost=boost) if mode == "and" else Q.Or(parts, boost=boost)

    def _synonym_texts(self, text: str) -> list[str]:
        """The query again with each judge's word replaced by the phrases the texts use for it.

        A judge's word is found as typed (ignoring width, kana, dots) or by its dictionary form
        (投げた finds the entry for 投げる). For each word found: its phrases with the rest of the query,
        its phrases alone; and, when several are found, all replaced at once.
        """
        s, where = squash_map(text)
        words = self.analyzer.words(text)
        lemmas = [w.forms[0] for w in words]
        found: list[tuple[list[str], str]] = []  # (phrases, rest of the query)
        for keys, key_lemmas, means in self._synonym_entries:
            rest = None
            for key, kl in zip(keys, key_lemmas):
                at = s.find(key) if key else -1
                if at >= 0 and not (key.isascii() and re.search(
                        rf"(?<![a-z0-9]){re.escape(key)}(?![a-z0-9])", s) is None):
                    a, b = where[at], where[at + len(key) - 1] + 1
                    rest = f"{text[:a]} {text[b:]}"
                    break
                for i in range(len(lemmas) - len(kl) + 1) if kl else ():
                    if lemmas[i : i + len(kl)] == kl:
                        rest = " ".join(w.surface for j, w in enumerate(words) if not i <= j < i + len(kl))
                        break
                if rest is not None:
                    break
            if rest is not None:
                rest = "" if is_kana(rest.replace(" ", "")) else rest.strip()
                found.append((means, rest))
        if not found and is_kana(s):
            spoken = to_katakana(s)
            found.extend((means, "") for reading, means in self._synonym_readings if reading in spoken)
        out: list[str] = []
        for means, rest in found:
            out.extend(f"{m} {rest}".strip() for m in means)
            if rest:
                out.extend(means)
        if len(found) > 1:
            out.append(" ".join(means[0] for means, _ in found))
        return list(dict.fromkeys(out))[:16]

    def _gram_query(self, text: str) -> Q.Query | None:
        grams = _bigrams(text)
        if not grams:
            return None
        return Q.And([Q.Term("grams", g) for g in dict.fromkeys(grams)])

    # running

    def search(self, query: str, game: str | None = None, limit: int = 10) -> Results:
        """Sections matching a judge's query, best first (answers for recent queries are kept: judges at one
        event search the same words, and the index does not change while the process runs)."""
        key = (clean_query(query), game, max(1, min(int(limit), 100)))
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

    def search_uncached(self, query: str, game: str | None = None, limit: int = 10) -> Results:
        """Sections matching a judge's query, best first; never raises on what a user typed.

        Tiers, in order: the section number as typed; the words (all of them, with the synonym list's
        phrases as weaker alternatives; any of them when all find nothing); the query as a character string.
        """
        text = clean_query(query)
        limit = max(1, min(int(limit), 100))
        if not text:
            return Results(query=text, total=0, hits=[])
        ev = self._evaluator
        flt = Q.Term("game", game) if game else None
        found: dict[int, tuple[dict, float, set[tuple[str, str]]]] = {}
        matching: set[int] = set()  # every matching section, for the total

        def run(q: Q.Query | None, n: int, check=None, extra_terms=()) -> None:
            if q is None:
                return
            if flt is not None:
                q = Q.Require(q, flt)
            scores, mask = ev.evaluate(q)
            if check is None:
                matching.update(np.flatnonzero(mask).tolist())
            for docnum in ev.top(scores, mask, n if check is None else n):
                fields = ev.stored[docnum]
                if check and not check(fields):
                    continue
                matching.add(docnum)
                if docnum not in found:
                    terms = ev.matched_terms(q, docnum) or set()
                    terms = {(f, t) for f, t in terms if f != "game"}
                    found[docnum] = (fields, float(scores[docnum]), terms | set(extra_terms))

        key = squash(text)
        if len(key) <= 12:
            run(Q.Term("number", key), limit)
        numbered = len(found)
        alternatives = [self._text_query(text)] + [self._text_query(t, boost=0.4) for t in self._synonym_texts(text)]
        alternatives = [q for q in alternatives if q is not None]
        if alternatives:
            run(Q.Or(alternatives), limit)
        if len(found) == numbered:
            run(self._text_query(text, mode="or"), limit)
        needle = squash(text)
        if len(found) < limit and len(needle) >= 2:
            def contiguous(fields) -> bool:
                return needle in squash(fields["title_text"]) or needle in squash(fields["text"])
            run(self._gram_query(text), max(limit * 3, 30), check=contiguous, extra_terms=[("needle", needle)])
        hits: list[Hit] = []
        ranked = list(found.values())[:limit]
        top = max((score for _, score, _ in ranked[numbered:]), default=0.0)
        previous = float("inf")
        for i, (f, score, terms) in enumerate(ranked):
            # Scores follow the order: a number match ranks above every word match.
            score = min(top + 1.0 if i < numbered else score, previous)
            previous = score
            hits.append(Hit(id=f["id"], game=f["game"], doc=f["doc"], title=f["title_text"],
                            doc_title=f["doc_title"], score=round(score, 3),
                            snippet=self._snippet(f["text"] or f["title_text"], terms, short=len(needle) <= 1)))
        return Results(query=text, total=max(len(matching), len(hits)), hits=hits)

    # snippets

    def _surfaces(self, terms: set[tuple[str, str]], short: bool = False) -> list[str]:
        out: set[str] = set()
        for field, term in terms:
            if field in ("words", "title"):
                out.add(term)
                out.update(self.lexicon["words"].get(term, ()))
            elif field == "reading":
                out.update(self.lexicon["reading"].get(term, ()))
        # One-character pieces (の, 数, ち) would mark noise unless the judge typed one character.
        return sorted((x for x in out if x.strip() and (short or len(x) > 1)), key=len, reverse=True)[:300]

    def _snippet(self, text: str, terms: set[tuple[str, str]], width: int = 110, short: bool = False) -> str:
        """A short passage with the matched words in <mark>; everything else escaped."""
        folded = fold(text)
        patterns = [re.escape(x) for x in self._surfaces(terms, short)]
        patterns += ["[・･ー\\s]*".join(re.escape(ch) for ch in t) for f, t in terms if f == "needle"]
        spans: list[tuple[int, int]] = []
        if patterns:
            regex = re.compile("|".join(sorted(patterns, key=len, reverse=True)))
            spans = [m.span() for m in regex.finditer(folded) if m.end() > m.start()]
        start = 0
        if spans:
            best = max(spans, key=lambda sp: sum(1 for o in spans if sp[0] - 20 <= o[0] < sp[0] + width - 20))
            start = max(0, best[0] - 20)
        end = min(len(text), start + width)
        out = ["…" if start > 0 else ""]
        pos = start
        for a, b in spans:
            if b <= start or a >= end:
                continue
            a, b = max(a, start), min(b, end)
            if a < pos:
                continue
            out.append(str(escape(text[pos:a])))
            out.append(f"<mark>{escape(text[a:b])}</mark>")
            pos = b
        out.append(str(escape(text[pos:end])))
        out.append("…" if end < len(text) else "")
        return "".join(out).replace("\n", " ")
