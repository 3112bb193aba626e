"""Print the misses of our search on a TUNING table: the query, the expected section, our top 3 and why.

`python bench/search_misses.py tests/cases/search_unseen_tune4.yaml [--all] [--first]`

For each query whose expected section is not first (`--first`: only those not in the top 5; `--all`: every
query), prints the query's words as analysed, the expected section's rank and score, and for our top 3 and
the expected section each signal's share of the score (the query's top-level signals, `SearchIndex.query`)
and which of the query's words the section holds. Refuses the reporting halves (tests/cases/tables.yaml's `report`
half, and any unlisted file whose name has `report`, `check` or `none` in it): their rows are never read while tuning.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import yaml
from tables import refuse  # (tests/cases/tables.yaml)
from whoosh import query as Q

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from judgeapp.corpus import load_corpus  # noqa: E402
from judgeapp.library import index_docs  # noqa: E402
from judgeapp.search import SearchIndex, build_index, load_synonyms  # noqa: E402
from judgeapp.textnorm import clean_query  # noqa: E402


def _label(ev, q: Q.Query, n_words: int) -> str:
    """A short name for a top-level signal (`SearchIndex.query` builds them; see WEIGHT in judgeapp/search/schema.py)."""
    fields = {f for f, _ in ev.leaves(q, None)}
    subs = list(getattr(q, "subqueries", ()))
    if fields == {"defines"}:
        return "defines"
    if fields == {"counts"}:
        return "counts"
    if isinstance(q, Q.ConstantScoreQuery):
        return "number"
    if isinstance(q, Q.Or) and subs and all(isinstance(x, Q.ConstantScoreQuery) for x in subs):
        return "coord"
    if fields == {"pairs"}:
        return "pairs"
    if fields == {"grams"} and isinstance(q, Q.And) and all(isinstance(x, Q.Term) for x in subs):
        return "grams"
    if "title_topic" in fields:
        return "topic"
    if fields <= {"title", "title_grams"}:
        return "title"
    if isinstance(q, Q.And) and len(subs) == n_words:
        return "all"
    if isinstance(q, Q.And) and len(subs) == n_words - 1:
        return "most"
    if isinstance(q, Q.Or) and len(subs) == n_words:
        return "any"
    return "other"


def open_index(workdir: Path) -> SearchIndex:
    corpus = load_corpus(ROOT / "rules_corpus")
    build_index(list(index_docs(corpus)), workdir / "ix")
    synonyms = load_synonyms(ROOT / "rules_corpus" / "synonyms.yaml")
    return SearchIndex(workdir / "ix", synonyms, corpus.game_names())


def explain(ix: SearchIndex, case: dict, show: str) -> bool:
    text = case["q"]
    game = case.get("game")
    expected = case["expect"]
    hits = ix.search_uncached(text, game=game, limit=50).hits
    ids = [h.id for h in hits]
    rank = next((i for i, h in enumerate(ids) if h in expected), None)
    if show == "first" and rank is not None and rank < 5:
        return False
    if show == "miss" and rank == 0:
        return False
    ev = ix._evaluator
    text = clean_query(text)  # as search() reads it
    q = ix.query(text)
    words = ix.analyse(text)
    words, _ = ix._attach_phrases(words, ix.synonym_entries(text, words))
    top = q.subqueries[0] if isinstance(q, Q.AndMaybe) else q
    signals = list(top.subqueries) if isinstance(top, Q.Or) else [top]
    labels = []
    seen: dict[str, int] = {}
    for s in signals:
        lab = _label(ev, s, len(words))
        seen[lab] = seen.get(lab, 0) + 1
        labels.append(lab if seen[lab] == 1 else f"{lab}#{seen[lab]}")
    by_id = {f["id"]: d for d, f in enumerate(ev.stored)}
    print(f"\n=== {text!r}  [{game}] ({case.get('kind', '')})")
    print("  words:", " | ".join(f"{w.word.surface}→{'/'.join(w.word.forms)}" for w in words))
    print(f"  expected {expected} rank {'-' if rank is None else rank + 1}")
    show_ids = ids[:3] + [e for e in expected[:1] if e not in ids[:3]]
    word_qs = [(w.word.surface, ix._word_query(w, "or")) for w in words]
    for sid in show_ids:
        d = by_id.get(sid)
        if d is None:
            print(f"  ? {sid} (not in the index)")
            continue
        title = ev.stored[d]["title_text"]
        mark = "*" if sid in expected else " "
        r = ids.index(sid) + 1 if sid in ids else "-"
        total = 0.0
        parts = []
        for lab, s in zip(labels, signals, strict=True):
            sids, sc = ev.run(s)
            at = sids.searchsorted(d)
            if at < len(sids) and sids[at] == d and sc[at]:
                parts.append(f"{lab}={sc[at]:.2f}")
                total += sc[at]
        held = []
        for surface, wq in word_qs:
            sids, sc = ev.run(wq)
            at = sids.searchsorted(d)
            if at < len(sids) and sids[at] == d:
                held.append(f"{surface}:{sc[at]:.1f}")
        print(f" {mark}{r}. {sid}  {title}  total≈{total:.2f}×{ix._section_weight[d]}")
        print(f"      signals: {', '.join(parts)}")
        print(f"      words held: {', '.join(held) or '-'}")
    return True


def main(argv: list[str]) -> None:
    args = [a for a in argv if not a.startswith("--")]
    show = "all" if "--all" in argv else "first" if "--first" in argv else "miss"
    if not args:
        sys.exit(__doc__)
    for a in args:
        refuse(a)
    with tempfile.TemporaryDirectory(prefix="judgeapp-misses-") as tmp:
        ix = open_index(Path(tmp))
        for a in args:
            cases = yaml.safe_load(Path(a).read_text(encoding="utf-8"))
            n = sum(explain(ix, c, show) for c in cases)
            print(f"\n{a}: {n} of {len(cases)} shown ({show})")


if __name__ == "__main__":
    main(sys.argv[1:])
