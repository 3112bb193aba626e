"""Coordinate descent over a few shared numbers (bench/search_sweep.py, bench/lookup_sweep.py): each number in
turn tried at a few multiples of its value, the best kept when it gains at least `--min-gain`."""

from __future__ import annotations

import argparse
from collections.abc import Callable

MULTIPLES = (0.5, 0.7, 1.4, 2.0)


def arguments(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--min-gain", type=int, default=3)
    p.add_argument("--only", default="", help="the numbers to sweep, by name, comma-separated")
    return p.parse_args(argv)


def descend(
    values: dict[str, float],
    score: Callable[[dict[str, float]], tuple[float, str]],
    args: argparse.Namespace,
    step: Callable[[str, float], float | None] = lambda name, v: round(v, 4),
) -> dict[str, float]:
    """The numbers after `args.rounds` rounds (fewer when one changes nothing). `score` gives a setting's
    objective and a line to print; `step` a trial value (rounded, or None where it is not allowed)."""
    values = dict(values)
    best, line = score(values)
    print(f"start: {line}", flush=True)
    names = [k for k in values if not args.only or k in args.only.split(",")]
    for r in range(args.rounds):
        changed = False
        for name in names:
            tried = []
            for m in MULTIPLES:
                v = step(name, values[name] * m)
                if v is None or v == values[name]:
                    continue
                tried.append((*score(dict(values, **{name: v})), v))
            if not tried:
                continue
            gain, line, v = max(tried, key=lambda t: t[0])
            mark = ""
            if gain - best >= args.min_gain:
                values[name], best, changed, mark = v, gain, True, "  kept"
            print(f"round {r + 1} {name}: {values[name]} best try {v} → {line}{mark}", flush=True)
        if not changed:
            break
    return values
