"""Every benchmark, one command: `.venv/bin/python bench/run.py` (about 8 minutes on 2 cores).

Runs the search benchmark (the real corpus, 10,000 and 50,000 sections), the situation lookup's benchmark
(bench/lookup_bench.py: top-3 and first on every table, the reporting half last; "nothing found" on the none
table; query time; cold start), then pages under load, concurrent recording on SQLite and PostgreSQL, and
cold start; prints the report and writes it into docs/performance.md
between the "last run" markers. Nothing here is a test: no figure fails anything.
"""

from __future__ import annotations

import os
import platform
import sys
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

import load_bench  # noqa: E402
import lookup_bench  # noqa: E402
import record_bench  # noqa: E402
import search_bench  # noqa: E402

START = "<!-- last run: start -->"
END = "<!-- last run: end -->"


def main(argv: list[str]) -> None:
    sizes = [None, 10_000, 50_000] if "--quick" not in argv else [None, 10_000]
    requests = 3000 if "--quick" not in argv else 1000
    t0 = time.perf_counter()
    lines = [
        f"Last run: {date.today().isoformat()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        "`.venv/bin/python bench/run.py`.",
        "",
        "## Search quality and speed",
        "",
    ]
    lines += search_bench.run(sizes)
    lines += ["## Situation lookup", ""]
    lines += [f"- {line}" for line in lookup_bench.run()] + [""]
    lines += ["## Pages, recording, cold start", ""]
    lines += load_bench.run(requests)
    lines += record_bench.run(80)
    lines.append(f"Whole run: {time.perf_counter() - t0:.0f} s.")
    report = "\n".join(lines)
    print(report)
    doc = ROOT / "docs" / "performance.md"
    text = doc.read_text(encoding="utf-8")
    if START in text and END in text:
        head, rest = text.split(START, 1)
        _, tail = rest.split(END, 1)
        doc.write_text(f"{head}{START}\n{report}\n{END}{tail}", encoding="utf-8")
        print(f"\nwritten to {doc}")


if __name__ == "__main__":
    main(sys.argv[1:])
