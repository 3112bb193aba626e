"""Situation lookup quality and speed on the real corpus (judgeapp.lookup).

    .venv/bin/python bench/lookup_bench.py [--no-report] [--misses TABLE ...]

For each table in tests/cases/ (situations*.yaml), prints how often the text's answer (its penalty, or null
where it prescribes none; discretion flagged where the text leaves it open) comes with a citation that
supports it, in the top 3 and first; for the table of situations no text covers (situations_none.yaml), how
often the lookup says it found nothing. Then the lookup's build time and its query time (median, p95) over
every query of every table, and the cold start (a fresh process: corpus, policies, lookup from its cache,
first answer). `--misses TABLE` lists the misses of a table (never shown for the reporting half);
`--no-report` leaves the reporting halves out (while tuning). Last, the lookup across every game (the home
page's, `search_all`) on the tuning halves' stories (and the reporting halves', figures only): how often the
row's game comes first and its first answer is the text's. The reporting halves come last
(the `report` halves of tests/cases/tables.yaml: the writers' situations halves and the later writers' none
tables).
`run()` returns the report's lines (for bench/run.py).
"""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tables import reporting, tuning  # noqa: E402  (tests/cases/tables.yaml)

from judgeapp.corpus import load_corpus  # noqa: E402
from judgeapp.lookup import Lookup, match_json  # noqa: E402
from judgeapp.policy import load_policies  # noqa: E402
from judgeapp.search import load_synonyms  # noqa: E402
from judgeapp.textnorm import squash  # noqa: E402

CASES = ROOT / "tests" / "cases"
# The reporting halves (and the second writer's none table): their figures only, never their rows or misses.
REPORTS = tuple(reporting("situations"))
REPORT = REPORTS[0]
TABLES = [*tuning("situations"), *REPORTS]
NONE_TABLES = tuple(tuning("none"))  # ours and the thirteenth writer's (calibration): rows may be listed
NONE_TABLE = NONE_TABLES[0]
NONE_REPORTS = tuple(reporting("none"))  # fresh writers', never tuned on: figures only


def case_sections(case: dict) -> list[str]:
    """The sections that carry a row's answer (`section`, or a list `sections`)."""
    out = case.get("sections") or case.get("section") or []
    return [out] if isinstance(out, str) else list(out)


def same_penalty(got: str | None, want: str | None) -> bool:
    """The row's penalty as its writer named it: 出場停止 is our 出場停止（1年）, the same penalty with its period."""
    if got is None or want is None:
        return got is want
    # Width, brackets and spaces aside (出場停止 3年 = 出場停止（3年）), or the same penalty without its period.
    return squash(got) == squash(want) or re.sub(r"[（(][^）)]*[）)]", "", got) == want


def supports(result: dict, case: dict) -> bool:
    """The result gives the row's answer with a citation that carries it."""
    if not same_penalty(result["penalty"], case.get("penalty")):
        return False
    if case.get("discretion") and not result["discretion"]:
        return False
    return any(s in result["citations"] for s in case_sections(case))


def score_table(lookup: Lookup, cases: list[dict]) -> tuple[int, int, list[str], int]:
    """First and top-3 answers that support the row, the misses, and the first answers that support it but
    flag discretion where its writer saw none (`supports` does not count that against an answer: a rule that
    flags discretion too readily looks free in top-3 and first, so the bench prints it beside them)."""
    first = top3 = extra = 0
    misses = []
    for case in cases:
        res = lookup.search(case["q"], game=case["game"], limit=3)
        results = [match_json(m) for m in res.matches]
        if results and supports(results[0], case):
            first += 1
            extra += bool(results[0]["discretion"] and not case.get("discretion"))
        if any(supports(r, case) for r in results):
            top3 += 1
        else:
            misses.append(
                f"{case['game']} {case['q']!r}: want {case.get('penalty')} "
                f"d={case.get('discretion')} @ {case_sections(case)}, got "
                f"{[(r['id'], r['penalty'], r['discretion'], r['coverage']) for r in results]}"
                f"{f' NONE cov={res.coverage:.2f}' if res.none else ''}"
            )
    return first, top3, misses, extra


def across_games(lookup: Lookup, names, half: str, print) -> None:  # noqa: A002 (print or collect)
    """The home page's lookup across every game (`search_all`), each row's story without its game: how often
    the row's game comes first, and its first answer is the text's (figures only)."""
    game = answer = n = 0
    for name in names:
        for case in yaml.safe_load((CASES / name).read_text(encoding="utf-8")) or []:
            n += 1
            res = lookup.search_all(case["q"])
            if res.matches and res.matches[0].answer.game == case["game"]:
                game += 1
                answer += supports(match_json(res.matches[0]), case)
    print(
        f"across all games ({half} halves, n={n}): the story's game first {game} = {game / n:.1%}, "
        f"its first answer the text's {answer} = {answer / n:.1%}"
    )


COLD = """
import sys, time
t0, c0 = time.perf_counter(), time.process_time()
sys.path.insert(0, {root!r})
from judgeapp.corpus import load_corpus
from judgeapp.policy import load_policies
from judgeapp.search import load_synonyms
from judgeapp.lookup import Lookup
corpus = load_corpus({root!r} + "/rules_corpus")
policies = load_policies({root!r} + "/infractions", corpus)
t1, c1 = time.perf_counter(), time.process_time()
synonyms = load_synonyms({root!r} + "/rules_corpus/synonyms.yaml")
lookup = Lookup(corpus, policies, synonyms, cache_dir={cache!r})
lookup.search("観客が口出しした", game="ijinden")
t2, c2 = time.perf_counter(), time.process_time()
print(f"{{1000 * (t1 - t0):.0f}} {{1000 * (t2 - t1):.0f}} {{1000 * (c1 - c0):.0f}} {{1000 * (c2 - c1):.0f}}")
"""


def cold_start() -> str:
    """A fresh process to its first answer, the lookup's cache written by an earlier process (and the app's
    bytecode present, as installed: ./judge compiles it)."""
    import compileall

    compileall.compile_dir(str(ROOT / "judgeapp"), quiet=1)
    with tempfile.TemporaryDirectory() as cache:
        code = COLD.format(root=str(ROOT), cache=cache)
        subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)  # writes the cache
        runs = []
        for _ in range(3):
            out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
            runs.append(tuple(int(x) for x in out.stdout.split()))
    load, first, cpu_load, cpu_first = min(runs, key=lambda r: r[0] + r[1])
    return (
        f"cold start (fresh process, best of 3): corpus and policies {load} ms, "
        f"lookup from its cache and the first answer {first} ms, {load + first} ms in all "
        f"(CPU {cpu_load} + {cpu_first} = {cpu_load + cpu_first} ms; load average {os.getloadavg()[0]:.1f})"
    )


def run(show: set[str] = frozenset(), no_report: bool = False) -> list[str]:
    """The report's lines."""
    lines: list[str] = []
    print_ = lines.append
    _run(show, print_, no_report)
    return lines


def main(argv: list[str]) -> None:
    show = set(argv[argv.index("--misses") + 1 :]) if "--misses" in argv else set()
    _run(show, print, "--no-report" in argv)


def _run(show: set[str], print, no_report: bool = False) -> None:  # noqa: A002 (print or collect)
    t0 = time.perf_counter()
    corpus = load_corpus(ROOT / "rules_corpus")
    policies = load_policies(ROOT / "infractions", corpus)
    synonyms = load_synonyms(ROOT / "rules_corpus" / "synonyms.yaml")
    t1 = time.perf_counter()
    lookup = Lookup(corpus, policies, synonyms)
    t2 = time.perf_counter()
    print(
        f"load corpus+policies {1000 * (t1 - t0):.0f} ms, build lookup {1000 * (t2 - t1):.0f} ms "
        f"({len(lookup.answers)} answers)"
    )
    queries = []

    def table(name: str) -> None:
        path = CASES / name
        if not path.exists():
            print(f"{name}: (not present)")
            return
        cases = yaml.safe_load(path.read_text(encoding="utf-8"))
        queries.extend((c["q"], c["game"]) for c in cases)
        first, top3, misses, extra = score_table(lookup, cases)
        n = len(cases)
        print(
            f"{name}: n={n} top-3 {top3}/{n} = {top3 / n:.1%}, first {first}/{n} = {first / n:.1%}"
            f" (of those first, {extra} flag discretion the writer did not)"
        )
        if name.removesuffix(".yaml") in show or name in show:
            if name in REPORTS:
                print("  (misses of a reporting half are not shown)")
            else:
                for m in misses:
                    print("  miss:", m)

    for name in TABLES:
        if name not in REPORTS:
            table(name)

    def none_table(name: str) -> list[dict]:
        path = CASES / name
        if not path.exists():
            return []
        cases = yaml.safe_load(path.read_text(encoding="utf-8"))
        said = [c for c in cases if lookup.search(c["q"], game=c.get("game")).none]
        n = len(cases)
        print(f"{name}: n={n} nothing found {len(said)}/{n} = {len(said) / n:.1%}")
        queries.extend((c["q"], c.get("game")) for c in cases)
        return cases

    for name in NONE_TABLES:
        cases = none_table(name)
        if not cases or not ("none" in show or name in show or name.removesuffix(".yaml") in show):
            continue
        for c in cases:
            r = lookup.search(c["q"], game=c.get("game"), limit=3)
            if not r.none:
                print(
                    "  listed:",
                    c.get("game"),
                    repr(c["q"]),
                    r.coverage,
                    [m.answer.key for m in r.matches],
                )
    across_games(lookup, tuning("situations"), "tuning", print)
    if not no_report:  # last, and only their figures
        for name in REPORTS:
            table(name)
        for name in NONE_REPORTS:
            none_table(name)
        across_games(lookup, REPORTS, "reporting", print)
    times, cpu = [], []
    for _ in range(3):
        for q, g in queries:
            t, c = time.perf_counter(), time.process_time()
            lookup.search(q, game=g, limit=10)
            times.append(1000 * (time.perf_counter() - t))
            cpu.append(1000 * (time.process_time() - c))
    times.sort()
    cpu.sort()
    # Wall time includes waiting for a core on a shared machine; CPU time is the lookup's own cost.
    print(
        f"query (limit 10): n={len(times)} wall median {statistics.median(times):.2f} ms, "
        f"p95 {times[int(0.95 * len(times)) - 1]:.2f} ms; CPU median {statistics.median(cpu):.2f} ms, "
        f"p95 {cpu[int(0.95 * len(cpu)) - 1]:.2f} ms; load average {os.getloadavg()[0]:.1f}"
    )
    print(cold_start())


if __name__ == "__main__":
    main(sys.argv[1:])
