"""Search quality and speed: our search against two baselines, same corpus, same queries, same process.

The corpus is the real one, and the real one scaled to N sections (copies of every section under game ids
`<game>~<k>`, so a game filter still selects the original game; a hit on a copy counts as a hit on its
original). Baselines:
- stock Whoosh: NFKC + `NgramTokenizer(2)` and `QueryParser`, as a developer would set it up first;
- SQLite FTS5 with the trigram tokenizer; terms under three characters, which trigram cannot match, take a
  `LIKE '%term%'` path on a plain copy of the text.
Prints recall@5, first-hit rate, query time median/p95, index build time and size, and ours/baseline ratios.
"""

from __future__ import annotations

import re
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
import unicodedata
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from judgeapp.corpus import load_corpus  # noqa: E402
from judgeapp.library import index_docs  # noqa: E402
from judgeapp.search import IndexDoc, SearchIndex, build_index, load_synonyms  # noqa: E402

QUERIES = yaml.safe_load((ROOT / "tests" / "cases" / "search_queries.yaml").read_text(encoding="utf-8"))
COPY_RE = re.compile(r"~\d+")


def scaled_docs(corpus, n_sections: int) -> list[IndexDoc]:
    base = list(index_docs(corpus))
    docs = list(base)
    k = 0
    while len(docs) < n_sections:
        k += 1
        for d in base:
            if len(docs) >= n_sections:
                break
            game = f"{d.game}~{k}"
            docs.append(IndexDoc(id=f"{game}/{d.doc}/{d.anchor}", game=game, doc=d.doc, anchor=d.anchor,
                                 title=d.title, doc_title=d.doc_title, text=d.text))
    return docs


def dir_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _nfkc_filter_class():
    from whoosh.analysis import Filter

    class NFKCFilter(Filter):
        """NFKC and lower case (module level so that Whoosh can pickle the schema)."""

        def __call__(self, tokens):
            for t in tokens:
                t.text = unicodedata.normalize("NFKC", t.text).lower()
                yield t

    return NFKCFilter


NFKCFilter = _nfkc_filter_class()
NFKCFilter.__qualname__ = "NFKCFilter"


# --- engines: each has build(docs, dir) and search(q, game, limit) -> [ids] -------------------------


class Ours:
    name = "ours (Sudachi + readings + synonyms + bigram fallback)"

    def build(self, docs, path: Path):
        build_index(docs, path / "ours")
        self.index = SearchIndex(path / "ours", load_synonyms(ROOT / "rules_corpus" / "synonyms.yaml"))
        return path / "ours"

    def search(self, q, game, limit=5):
        # Uncached: every query is measured as if it were the first of its kind.
        return [h.id for h in self.index.search_uncached(q, game=game, limit=limit).hits]


class StockWhoosh:
    name = "stock Whoosh (NFKC + NgramTokenizer(2) + QueryParser)"

    def build(self, docs, path: Path):
        from whoosh import index
        from whoosh.analysis import NgramTokenizer
        from whoosh.fields import ID, TEXT, Schema
        from whoosh.qparser import QueryParser

        analyzer = NgramTokenizer(2) | NFKCFilter()
        schema = Schema(id=ID(stored=True, unique=True), game=ID(stored=True), content=TEXT(analyzer=analyzer))
        target = path / "stock"
        target.mkdir()
        ix = index.create_in(str(target), schema)
        w = ix.writer(limitmb=256)
        for d in docs:
            w.add_document(id=d.id, game=d.game, content=d.title + "\n" + d.text)
        w.commit()
        self.ix, self.parser, self.searcher = ix, QueryParser("content", schema), ix.searcher()
        from whoosh import query as Q
        self.Q = Q
        return target

    def search(self, q, game, limit=5):
        try:
            parsed = self.parser.parse(unicodedata.normalize("NFKC", q))
        except Exception:  # noqa: BLE001 - a baseline may fail on odd input; count it as no result
            return []
        flt = self.Q.Term("game", game) if game else None
        return [h["id"] for h in self.searcher.search(parsed, limit=limit, filter=flt)]


class Fts5Trigram:
    name = "SQLite FTS5 trigram (+ LIKE for terms under 3 characters)"

    def build(self, docs, path: Path):
        target = path / "fts5.sqlite"
        db = sqlite3.connect(target, check_same_thread=False)
        db.execute("CREATE TABLE sections(rowid INTEGER PRIMARY KEY, id TEXT, game TEXT, title TEXT, text TEXT)")
        db.execute("CREATE VIRTUAL TABLE fts USING fts5(title, text, content='sections', content_rowid='rowid',"
                   " tokenize='trigram')")
        db.executemany("INSERT INTO sections(id, game, title, text) VALUES (?,?,?,?)",
                       [(d.id, d.game, unicodedata.normalize("NFKC", d.title),
                         unicodedata.normalize("NFKC", d.text)) for d in docs])
        db.execute("INSERT INTO fts(fts) VALUES ('rebuild')")
        db.commit()
        self.db = db
        return target

    def search(self, q, game, limit=5):
        terms = unicodedata.normalize("NFKC", q).split()
        long_terms = [t for t in terms if len(t) >= 3]
        short_terms = [t for t in terms if len(t) < 3]
        where, args = [], []
        if game:
            where.append("s.game = ?")
            args.append(game)
        for t in short_terms:
            where.append("(s.title LIKE ? OR s.text LIKE ?)")
            args += [f"%{t}%", f"%{t}%"]
        if long_terms:
            match = " AND ".join('"' + t.replace('"', '""') + '"' for t in long_terms)
            sql = ("SELECT s.id FROM fts JOIN sections s ON s.rowid = fts.rowid WHERE fts MATCH ?"
                   + "".join(" AND " + w for w in where) + " ORDER BY bm25(fts) LIMIT ?")
            rows = self.db.execute(sql, [match] + args + [limit]).fetchall()
        elif short_terms:
            sql = ("SELECT s.id FROM sections s WHERE " + " AND ".join(where)
                   + " ORDER BY (length(s.text) - length(replace(s.text, ?, ''))) DESC LIMIT ?")
            rows = self.db.execute(sql, args + [short_terms[0], limit]).fetchall()
        else:
            rows = []
        return [r[0] for r in rows]


# --- measuring -----------------------------------------------------------------------------------------


def measure(engine, docs, workdir: Path, repeats: int = 3) -> dict:
    start = time.perf_counter()
    built = engine.build(docs, workdir)
    build_s = time.perf_counter() - start
    size = dir_size(built) if built.is_dir() else built.stat().st_size
    first = top5 = 0
    for case in QUERIES:
        ids = [COPY_RE.sub("", i) for i in engine.search(case["q"], case.get("game"), 5)]
        expected = set(case["expect"])
        first += bool(ids) and ids[0] in expected
        top5 += bool(expected & set(ids))
    times = []
    for _ in range(repeats):
        for case in QUERIES:
            t = time.perf_counter()
            engine.search(case["q"], case.get("game"), 10)
            times.append((time.perf_counter() - t) * 1000)
    times.sort()
    n = len(QUERIES)
    return {"engine": engine.name, "recall@5": top5 / n, "first": first / n,
            "median_ms": statistics.median(times), "p95_ms": times[int(len(times) * 0.95) - 1],
            "build_s": build_s, "size_mb": size / 1e6}


def run(sizes=(None, 10_000)) -> list[str]:
    """Run every engine on every corpus size; return the report's lines (Markdown)."""
    corpus = load_corpus(ROOT / "rules_corpus")
    lines = [f"Query table: {len(QUERIES)} queries (tests/cases/search_queries.yaml).", ""]
    for size in sizes:
        docs = scaled_docs(corpus, size or len(corpus.sections))
        lines += [f"### {len(docs):,} sections" + (" (the real corpus)" if size is None else " (scaled)"), "",
                  "| engine | recall@5 | first hit | median ms | p95 ms | build s | index MB |",
                  "| --- | --- | --- | --- | --- | --- | --- |"]
        results = []
        for engine_cls in (Ours, StockWhoosh, Fts5Trigram):
            workdir = Path(tempfile.mkdtemp(prefix="judgeapp-bench-"))
            try:
                r = measure(engine_cls(), docs, workdir)
            finally:
                shutil.rmtree(workdir, ignore_errors=True)
            results.append(r)
            lines.append(f"| {r['engine']} | {r['recall@5']:.1%} | {r['first']:.1%} | {r['median_ms']:.2f} | "
                         f"{r['p95_ms']:.2f} | {r['build_s']:.1f} | {r['size_mb']:.1f} |")
            print(lines[-1], flush=True)
        ours = results[0]
        lines.append("")
        for base in results[1:]:
            lines.append(f"- ours / {base['engine'].split(' (')[0]}: recall@5 {ours['recall@5'] / max(base['recall@5'], 1e-9):.2f}×, "
                         f"p95 {ours['p95_ms'] / base['p95_ms']:.2f}×, median {ours['median_ms'] / base['median_ms']:.2f}×, "
                         f"build {ours['build_s'] / base['build_s']:.2f}×, size {ours['size_mb'] / base['size_mb']:.2f}×")
        lines.append("")
    return lines


if __name__ == "__main__":
    sizes = [None] + [int(a) for a in sys.argv[1:]] if len(sys.argv) > 1 else [None, 10_000]
    print("\n".join(run(sizes)))
