"""The query tables of tests/cases/ and their halves, from tests/cases/tables.yaml (one list for the benches
and the tests). A reporting half is never read while tuning: `tuning(kind)` leaves it out, and `refuse()`
stops a tool made for tuning from opening one."""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

CASES = Path(__file__).resolve().parent.parent / "tests" / "cases"
_TABLES = yaml.safe_load((CASES / "tables.yaml").read_text(encoding="utf-8"))


def tables(kind: str, half: str | None = None) -> list[dict]:
    """The tables of a kind (search, situations, none), in the file's order, optionally of one half."""
    return [t for t in _TABLES[kind] if half is None or t["half"] == half]


def files(kind: str, half: str | None = None) -> list[str]:
    return [t["file"] for t in tables(kind, half)]


def tuning(kind: str) -> list[str]:
    return files(kind, "tune")


def reporting(kind: str) -> list[str]:
    return files(kind, "report")


def is_report(file: str) -> bool:
    """Anything but a listed tuning half counts as a reporting half (a table not in tables.yaml yet, a
    mistyped half): a tool made for tuning opens only what tables.yaml calls `tune`."""
    name = Path(file).name
    return not any(t["file"] == name and t["half"] == "tune" for kind in _TABLES for t in _TABLES[kind])


def refuse(file: str) -> None:
    if is_report(file):
        sys.exit(f"refused: {file} is a reporting half (its rows are never read while tuning)")
