"""tests/cases/tables.yaml lists every query table once, with its half: the benches and the tests read their
tables from it, and the tools made for tuning refuse what it calls a reporting half."""

from __future__ import annotations

from .conftest import CASES_DIR, load_cases, tables

# Tables of other kinds (the wizard's paths, standings, deck rules, spelling pairs, the fixture game).
OTHER = {
    "decks.yaml",
    "fixture_game.yaml",
    "standings.yaml",
    "wizard.yaml",
    "search_spelling.yaml",
    "tables.yaml",
}


def test_every_query_table_is_listed_once_and_exists():
    listed = [t["file"] for kind in load_cases("tables.yaml").values() for t in kind]
    assert len(listed) == len(set(listed))
    present = {p.name for p in CASES_DIR.glob("*.yaml")} - OTHER
    assert present == set(listed)
    assert {t["half"] for kind in load_cases("tables.yaml").values() for t in kind} == {"tune", "report"}


def test_a_tool_made_for_tuning_refuses_a_reporting_half():
    assert tables.is_report("search_unseen_check8.yaml")
    assert tables.is_report("situations_none2.yaml")
    assert not tables.is_report("situations_none.yaml")
    assert not tables.is_report("search_unseen_tune8.yaml")
    assert tables.is_report("situations_report99.yaml")  # not listed: refused, whatever its name
    assert tables.is_report("search_unseen_b10.yaml")
    # a writer's table was split in two: each writer with a reporting half has a tuning half beside it
    for kind in ("search", "situations"):
        writers = {t["writer"] for t in tables.tables(kind, "tune")}
        assert {t["writer"] for t in tables.tables(kind, "report")} <= writers, kind
