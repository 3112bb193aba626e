"""Duplicate keys in any data file fail loading, naming the file and the key (judgeapp/yamlload.py)."""

from __future__ import annotations

import pytest

from judgeapp.cli import main as cli
from judgeapp.library import open_library
from judgeapp.yamlload import DuplicateKeyError, load_yaml


def test_a_duplicate_key_names_the_file_the_key_and_both_lines():
    with pytest.raises(DuplicateKeyError) as err:
        load_yaml("name: a\nlevels:\n  - id: x\n    label: 注意\n    label: 警告\n", "p.yaml")
    assert str(err.value).startswith("p.yaml: duplicate key 'label' on line 5 (first on line 4)")


def test_merges_and_equal_keys_in_different_mappings_are_fine():
    data = load_yaml("base: &b {id: x, n: 1}\na: {<<: *b, n: 2}\nb: [{id: 1}, {id: 2}]\n")
    assert data["a"] == {"id": "x", "n": 2} and [x["id"] for x in data["b"]] == [1, 2]


# (file in a copy of the data, the line to duplicate, what `judgeapp check` prints)
CASES = [
    (
        "rules_corpus",
        "lycee/_game.yaml",
        "documents: [guideline]",
        "rules_corpus/lycee/_game.yaml: duplicate key 'documents'",
    ),
    (
        "rules_corpus",
        "ijinden/floor-rules.md",
        "publisher: 大創出版株式会社",
        "rules_corpus/ijinden/floor-rules.md: front matter: duplicate key 'publisher'",
    ),
    (
        "infractions",
        "lycee/wizard.yaml",
        "start: start",
        "lycee/wizard.yaml: duplicate key 'start' on line 2",
    ),
    (
        "infractions",
        "ijinden/training.yaml",
        "scenarios:",
        "ijinden/training.yaml: duplicate key 'scenarios'",
    ),
    (
        "infractions",
        "lycee/deck.yaml",
        "format: 公認大会（２本先取でスペアカードを使う場合を含む）",
        "lycee/deck.yaml: duplicate key 'format'",
    ),
    (
        "infractions",
        "dm-senshu/policy.yaml",
        "ladder: false",
        "dm-senshu/policy.yaml: duplicate key 'ladder'",
    ),
]


@pytest.mark.parametrize("root, name, line, expected", CASES, ids=[c[1] for c in CASES])
def test_check_refuses_a_duplicate_key(runner, broken_corpus, broken_infractions, root, name, line, expected):
    folder = broken_corpus if root == "rules_corpus" else broken_infractions
    path = folder / name
    text = path.read_text(encoding="utf-8")
    assert f"\n{line}\n" in f"\n{text}", f"{line!r} is no line of {name}"
    if line.endswith(":"):  # a mapping key whose value follows: give the duplicate a value of its own
        text = text.replace(f"\n{line}\n", f"\n{line} []\n{line}\n", 1)
    else:
        text = text.replace(f"{line}\n", f"{line}\n{line}\n", 1)
    path.write_text(text, encoding="utf-8")
    result = runner.invoke(
        cli, ["check", "--corpus", str(broken_corpus), "--infractions", str(broken_infractions)]
    )
    assert result.exit_code == 1
    assert expected in result.output, result.output


def test_a_duplicate_key_in_the_synonyms_stops_the_library(broken_corpus, tmp_path):
    path = broken_corpus / "synonyms.yaml"
    text = path.read_text(encoding="utf-8")
    doubled = text.replace("  means: [電子機器]\n", "  means: [電子機器]\n  means: [携帯]\n", 1)
    path.write_text(doubled, encoding="utf-8")
    line = text.splitlines().index("  means: [電子機器]") + 2  # the doubled key, below the first
    with pytest.raises(DuplicateKeyError, match=f"synonyms.yaml: duplicate key 'means' on line {line}"):
        open_library(broken_corpus, tmp_path / "ix", path)
