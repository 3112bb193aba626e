"""Sweep the search's weights (`WEIGHT`, `FIELD_BOOST` and BM25F's B and K1) over every TUNING table at once.

`python bench/search_sweep.py [--rounds N] [--min-gain G] [--only KEY,KEY]`

A few dozen numbers weigh the signals against each other. Rules added for one writer's phrasing carry over
little to another writer's reporting half; these numbers are few and shared by every query, so they are
tuned on all the tuning halves together, by coordinate descent: each number in turn is tried at a few
multiples of its value, and the best is kept when it gains at least `--min-gain` queries (recall@5 plus first
hit, summed over the tables). Prints each step and, at the end, the values that differ from schema.py's.
Opens only the halves tests/cases/tables.yaml calls `tune` (`tables.tuning`); the reporting halves are
scored only by bench/search_bench.py.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import yaml
from sweep import arguments, descend
from tables import CASES, refuse, tuning

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from judgeapp.corpus import load_corpus  # noqa: E402
from judgeapp.library import index_docs  # noqa: E402
from judgeapp.search import SearchIndex, build_index, load_synonyms  # noqa: E402
from judgeapp.search.evaluate import Evaluator  # noqa: E402
from judgeapp.search.schema import FIELD_BOOST, WEIGHT  # noqa: E402


def open_index(workdir: Path) -> SearchIndex:
    corpus = load_corpus(ROOT / "rules_corpus")
    build_index(list(index_docs(corpus)), workdir / "ix")
    synonyms = load_synonyms(ROOT / "rules_corpus" / "synonyms.yaml")
    return SearchIndex(workdir / "ix", synonyms, corpus.game_names())


def settings() -> dict[str, float]:
    """Every number swept, by name: `w.<signal>`, `f.<field>`, `bm25.B`, `bm25.K1`."""
    out = {f"w.{k}": v for k, v in WEIGHT.items() if k != "named_game"}
    out.update({f"f.{k}": v for k, v in FIELD_BOOST.items()})
    out.update({"bm25.B": 0.75, "bm25.K1": 1.2})
    return out


def apply(ix: SearchIndex, values: dict[str, float]) -> None:
    """Set the numbers and drop everything made from them (built phrases, kept results, decoded scores)."""
    for name, v in values.items():
        kind, key = name.split(".", 1)
        if kind == "w":
            WEIGHT[key] = v
        elif kind == "f":
            FIELD_BOOST[key] = v
    ev = Evaluator(ix.ix, ix.lexicon.get("terms"))
    ev.weighting.B = values["bm25.B"]
    ev.weighting.K1 = values["bm25.K1"]
    ix._evaluator = ev
    ix._phrase_built.clear()
    ix._named_weights.clear()
    ix._section_weight = ix._container_weights()


def score(ix: SearchIndex, tables: dict[str, list[dict]]) -> dict[str, tuple[int, int]]:
    out = {}
    for name, cases in tables.items():
        top5 = first = 0
        for case in cases:
            ids = [h.id for h in ix.search_uncached(case["q"], game=case.get("game"), limit=5).hits]
            expected = set(case["expect"])
            first += bool(ids) and ids[0] in expected
            top5 += bool(expected & set(ids))
        out[name] = (top5, first)
    return out


def total(s: dict[str, tuple[int, int]]) -> int:
    return sum(a + b for a, b in s.values())


def main(argv: list[str]) -> None:
    args = arguments(argv)
    tables = {}
    for f in tuning("search"):
        refuse(f)
        tables[f] = yaml.safe_load((CASES / f).read_text(encoding="utf-8"))
    n = sum(len(c) for c in tables.values())
    with tempfile.TemporaryDirectory() as tmp:
        ix = open_index(Path(tmp))
        start = settings()
        scored = {}

        def objective(values: dict[str, float]) -> tuple[float, str]:
            apply(ix, values)
            s = scored[tuple(values.items())] = score(ix, tables)
            return total(
                s
            ), f"top5 {sum(a for a, _ in s.values())} first {sum(b for _, b in s.values())} of {n}"

        def step(name: str, v: float) -> float | None:
            return None if name == "bm25.B" and v > 1 else round(v, 4)

        values = descend(start, objective, args, step)
        objective(values)
        print("changed:", {k: v for k, v in values.items() if v != start[k]})
        for f, (a, b) in scored[tuple(values.items())].items():
            print(f"  {f}: top5 {a} first {b} of {len(tables[f])}")


if __name__ == "__main__":
    main(sys.argv[1:])
