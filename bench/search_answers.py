"""Our search's answers, dumped to compare a speed change with the code before it (nothing may change).

`python bench/search_answers.py dump OUT.json [WORKDIR]`: for every query of the old table, the tuning
tables and the spelling table (never a reporting half), with its game and without, limits 5 and 10, on the
real corpus and on 10,000 sections (scaled as `bench/search_bench.py` scales it): the total and, for each
hit, its id, unrounded score, snippet and title. The indexes are built in WORKDIR once and kept there (a
speed change to the query side leaves them as they are; delete them after a change to the build).
`python bench/search_answers.py compare A.json B.json`: the answers that differ (scores to 1e-9).
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from tables import tuning  # noqa: E402  (tests/cases/tables.yaml)

# Every query table but the reporting halves (never run by a tool made for tuning): the old table and the
# tuning halves (search_pair.py times these), then the spelling table.
QUERY_TABLES = tuning("search")
TABLES = [*QUERY_TABLES, "search_spelling.yaml"]


def scaled_indexes(code: Path, workdir: Path):
    """(size, index) on the real corpus (size None) and on 10,000 sections, as `code`'s judgeapp builds and
    opens them (built once in `workdir` and kept there)."""
    from search_bench import scaled_docs

    import judgeapp.search as S
    from judgeapp.corpus import load_corpus

    corpus = load_corpus(code / "rules_corpus")
    for size in (None, 10_000):
        ixdir = workdir / f"ix-{size or 'real'}"
        if not ixdir.exists():
            S.build_index(scaled_docs(corpus, size or len(corpus.sections)), ixdir)
        yield (
            size,
            S.SearchIndex(
                ixdir, S.load_synonyms(code / "rules_corpus" / "synonyms.yaml"), corpus.game_names()
            ),
        )


def dump(out: Path, workdir: Path) -> None:
    import judgeapp.search.index as SI

    SI.round = lambda x, n=None: x  # the hits' scores unrounded (the module's `round`, for this process)
    cases = [c for f in TABLES for c in yaml.safe_load((ROOT / "tests" / "cases" / f).read_text("utf-8"))]
    answers = {}
    for size, ix in scaled_indexes(ROOT, workdir):
        for c in cases:
            for game in dict.fromkeys([c.get("game"), None]):
                for limit in (5, 10):
                    r = ix.search_uncached(c["q"], game=game, limit=limit)
                    answers[f"{size}|{game}|{limit}|{c['q']}"] = [
                        r.total,
                        [(h.id, h.score, h.snippet, h.title) for h in r.hits],
                    ]
    out.write_text(json.dumps(answers, ensure_ascii=False), encoding="utf-8")
    print(f"{len(answers)} answers in {out}")


def compare(a_path: Path, b_path: Path) -> int:
    a, b = (json.loads(p.read_text(encoding="utf-8")) for p in (a_path, b_path))
    if a.keys() != b.keys():
        print("the two dumps do not hold the same queries")
        return 1
    differ = 0
    for key, (ta, ha) in a.items():
        tb, hb = b[key]
        same = ta == tb and len(ha) == len(hb)
        same = same and all(
            x[0] == y[0] and abs(x[1] - y[1]) <= 1e-9 and x[2:] == y[2:] for x, y in zip(ha, hb, strict=True)
        )
        if not same:
            differ += 1
            if differ <= 10:
                print("differs:", key, ta, tb, [h[:2] for h in ha[:3]], [h[:2] for h in hb[:3]])
    print(f"{len(a)} answers compared, {differ} differ")
    return 1 if differ else 0


def main(argv: list[str]) -> int:
    if len(argv) >= 2 and argv[0] == "dump":
        workdir = Path(argv[2]) if len(argv) > 2 else Path(tempfile.gettempdir()) / "judgeapp-answers"
        workdir.mkdir(parents=True, exist_ok=True)
        dump(Path(argv[1]), workdir)
        return 0
    if len(argv) == 3 and argv[0] == "compare":
        return compare(Path(argv[1]), Path(argv[2]))
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
