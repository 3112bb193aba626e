"""Sweep the situation lookup's numbers (judgeapp/lookup.py's weights, thresholds and BM25's K1 and B) over
every TUNING table at once.

`python bench/lookup_sweep.py [--rounds N] [--min-gain G] [--only NAME,NAME]`

As bench/search_sweep.py does for the search: a few numbers shared by every story, tuned on all the tuning
halves together by coordinate descent (each number tried at a few multiples of its value, the best kept when
it gains at least `--min-gain`). The objective adds, over the situation tuning tables, the stories answered
in the top 3 and first (bench/lookup_bench.py's `supports`), and twice the calibration none-cases answered
"nothing fits" (so that a none-case weighs as a story's two figures); a number that loses one case of
situations_none.yaml (the table the tests hold whole) is never taken. Opens only the halves
tests/cases/tables.yaml calls `tune`.
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml
from sweep import arguments, descend
from tables import CASES, refuse, tuning

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from lookup_bench import score_table  # noqa: E402

import judgeapp.lookup as L  # noqa: E402
from judgeapp.corpus import load_corpus  # noqa: E402
from judgeapp.policy import load_policies  # noqa: E402
from judgeapp.search import load_synonyms  # noqa: E402

NAMES = (
    "PHRASE_WEIGHT",
    "PHRASE_WORDS",
    "NONE_THRESHOLD",
    "NONE_THRESHOLD_WORDS",
    "NONE_MASS",
    "NONE_MASS_FLOOR",
    "RRF_K",
    "RERANK",
    "COVERAGE_POWER",
    "CITED_WEIGHT",
    "QUOTED_WEIGHT",
    "LIGHT_WEIGHT",
    "IDF_POWER",
    "K1",
    "B",
    "WEIGHTS.own",
    "WEIGHTS.passage",
    "WEIGHTS.grams",
    "WEIGHTS.section",
)
INTS = {"PHRASE_WORDS", "RERANK"}
NONE_WHOLE = "situations_none.yaml"


def get(name: str) -> float:
    if name.startswith("WEIGHTS."):
        return L.WEIGHTS[name.split(".", 1)[1]]
    return getattr(L, name)


def put(name: str, v: float) -> None:
    if name.startswith("WEIGHTS."):
        L.WEIGHTS[name.split(".", 1)[1]] = v
    else:
        setattr(L, name, v)


def main(argv: list[str]) -> None:
    args = arguments(argv)
    corpus = load_corpus(ROOT / "rules_corpus")
    policies = load_policies(ROOT / "infractions", corpus)
    synonyms = load_synonyms(ROOT / "rules_corpus" / "synonyms.yaml")

    def load(kind: str) -> dict[str, list[dict]]:
        out = {}
        for f in tuning(kind):
            refuse(f)
            out[f] = yaml.safe_load((CASES / f).read_text(encoding="utf-8"))
        return out

    situations, nones = load("situations"), load("none")

    def objective(values: dict[str, float]) -> tuple[float, str]:
        for name, v in values.items():
            put(name, v)
        lookup = L.Lookup(corpus, policies, synonyms)
        top3 = first = 0
        for cases in situations.values():
            f, t, _, _ = score_table(lookup, cases)
            first, top3 = first + f, top3 + t
        said = {
            f: sum(lookup.search(c["q"], game=c.get("game")).none for c in cases)
            for f, cases in nones.items()
        }
        none = sum(said.values())
        # the table of situations no text covers that tests/test_lookup.py holds whole: a number that loses
        # one of it is not taken, whatever it gains
        whole = said[NONE_WHOLE] == len(nones[NONE_WHOLE])
        return (top3 + first + 2 * none) if whole else -1, f"top3 {top3} first {first} none {none}"

    def step(name: str, v: float) -> float | None:
        if name == "B" and v > 1:
            return None
        return max(1, round(v)) if name in INTS else round(v, 4)

    start = {n: get(n) for n in NAMES}
    values = descend(start, objective, args, step)
    print("changed:", {k: v for k, v in values.items() if v != start[k]})
    print("end:", objective(values)[1])


if __name__ == "__main__":
    main(sys.argv[1:])
