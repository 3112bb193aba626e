"""Two versions of our search timed in one process, interleaved query by query.

`python bench/search_pair.py COMMIT INDEX_DIR`: the `judgeapp` package of COMMIT (from `git archive`, as
`judgeapp_base`) and of the working tree, each opening the same index (for example one that
`bench/search_answers.py` built); every non-reporting query, with its game, limit 10, run by both in
alternating order, nine times; each query's fastest run in thread CPU time. Prints the mean, median and
p95 of each and the ratios. On a shared machine single benchmark runs swing by more than a small change is
worth (tantivy's own p95 moves by 2× between runs): here both versions see the same load.
"""

from __future__ import annotations

import inspect
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from search_answers import QUERY_TABLES as TABLES  # noqa: E402


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__)
        return 2
    commit, index = argv[0], Path(argv[1])
    pkgs = Path(tempfile.mkdtemp(prefix="judgeapp-pair-"))
    try:
        subprocess.run(
            f"git -C {ROOT} archive {commit} judgeapp | tar -x -C {pkgs} && mv {pkgs}/judgeapp {pkgs}/judgeapp_base",
            shell=True,
            check=True,
        )
        sys.path.insert(0, str(pkgs))
        sys.path.insert(0, str(ROOT))
        import judgeapp_base.search as base

        import judgeapp.search as new

        cases = [c for f in TABLES for c in yaml.safe_load((ROOT / "tests" / "cases" / f).read_text("utf-8"))]
        synonyms = new.load_synonyms(ROOT / "rules_corpus" / "synonyms.yaml")
        from judgeapp.corpus import load_corpus

        games = load_corpus(ROOT / "rules_corpus").game_names()

        def opened(package):  # (each version's SearchIndex as it takes the games' names, if it does)
            if "games" in inspect.signature(package.SearchIndex).parameters:
                return package.SearchIndex(index, synonyms, games)
            return package.SearchIndex(index, synonyms)

        indexes = {"before": opened(base), "after": opened(new)}
        for ix in indexes.values():
            for c in cases:
                ix.search_uncached(c["q"], c.get("game"), 10)
        best = {k: [float("inf")] * len(cases) for k in indexes}
        clock = time.thread_time
        for r in range(9):
            for i, c in enumerate(cases):
                for k in ("before", "after") if (i + r) % 2 else ("after", "before"):
                    t = clock()
                    indexes[k].search_uncached(c["q"], c.get("game"), 10)
                    best[k][i] = min(best[k][i], clock() - t)
        figures = {}
        for k, times in best.items():
            ms = sorted(x * 1e3 for x in times)
            none = [times[i] * 1e3 for i, c in enumerate(cases) if not c.get("game")]
            figures[k] = (
                sum(ms) / len(ms),
                ms[len(ms) // 2],
                ms[int(len(ms) * 0.95) - 1],
                sum(none) / len(none),
            )
            print(
                f"{k}: mean {figures[k][0]:.3f} median {figures[k][1]:.3f} p95 {figures[k][2]:.3f} ms;"
                f" without a game, mean {figures[k][3]:.3f} ms"
            )
        ratios = (a / b for a, b in zip(figures["after"], figures["before"], strict=True))
        print("after / before: mean {:.3f}, median {:.3f}, p95 {:.3f}, without a game {:.3f}".format(*ratios))
        return 0
    finally:
        shutil.rmtree(pkgs, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
