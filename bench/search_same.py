"""Whether a speed change left every answer of every search table the same, reporting halves included,
without anyone reading a reporting half's rows.

`python bench/search_same.py dump OUT.json [--code DIR] [--workdir DIR]`: for every query of every
`tests/cases/search_*.yaml` table, with its game and without, limit 10, on the real corpus and on 10,000
sections (scaled as `bench/search_bench.py` scales it), a hash of the answer (total, and each hit's id,
rounded score and snippet), keyed by a hash of the table, query, game and size: the dump holds no query
text and no hit, so it can be compared but not read. `--code DIR`: the repository whose `judgeapp` answers
(another worktree: the code before a change). The indexes are built once in the workdir and kept.
`python bench/search_same.py compare A.json B.json`: how many answers differ, per table kind (tuning or
reporting) and size; never which queries.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent.parent


def _h(x) -> str:
    return hashlib.sha1(json.dumps(x, ensure_ascii=False).encode("utf-8")).hexdigest()


def dump(out: Path, code: Path, workdir: Path) -> None:
    sys.path.insert(0, str(code))
    import judgeapp.search as S  # (first: `search_bench` puts this repository on the path)

    sys.path.insert(0, str(HERE / "bench"))
    from search_answers import scaled_indexes  # (the scaling only; the engine is `code`'s)
    from tables import is_report

    assert Path(S.__file__).resolve().is_relative_to(code.resolve()), S.__file__
    files = sorted((HERE / "tests" / "cases").glob("search_*.yaml"))
    answers: dict[str, list[str]] = {}
    for size, ix in scaled_indexes(code, workdir):
        for f in files:
            kind = "report" if is_report(f.name) else "tune"
            for c in yaml.safe_load(f.read_text("utf-8")) or []:
                for game in dict.fromkeys([c.get("game"), None]):
                    r = ix.search_uncached(c["q"], game=game, limit=10)
                    key = f"{kind}|{size}|" + _h([f.name, c["q"], game])
                    answers[key] = _h([r.total, [(h.id, h.score, h.snippet) for h in r.hits]])
    out.write_text(json.dumps(answers), encoding="utf-8")
    print(f"{len(answers)} answers in {out}")


def compare(a_path: Path, b_path: Path) -> int:
    a, b = (json.loads(p.read_text(encoding="utf-8")) for p in (a_path, b_path))
    if a.keys() != b.keys():
        print("the two dumps do not hold the same queries")
        return 1
    counts: dict[str, list[int]] = {}
    for key, va in a.items():
        group = "|".join(key.split("|")[:2])
        c = counts.setdefault(group, [0, 0])
        c[0] += 1
        c[1] += va != b[key]
    for group, (n, d) in sorted(counts.items()):
        print(f"{group}: {n} answers, {d} differ")
    differ = sum(d for _, d in counts.values())
    print(f"{len(a)} answers compared, {differ} differ")
    return 1 if differ else 0


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("action", choices=["dump", "compare"])
    p.add_argument("files", nargs="+")
    p.add_argument("--code", default=str(HERE))
    p.add_argument("--workdir", default=str(Path(tempfile.gettempdir()) / "judgeapp-same"))
    args = p.parse_args(argv)
    if args.action == "dump":
        Path(args.workdir).mkdir(parents=True, exist_ok=True)
        dump(Path(args.files[0]), Path(args.code), Path(args.workdir))
        return 0
    return compare(Path(args.files[0]), Path(args.files[1]))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
