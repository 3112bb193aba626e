"""Docs stay honest: every CLI command and every API endpoint is documented."""

from __future__ import annotations

from judgeapp import ROOT
from judgeapp.cli import main as cli


def test_every_cli_command_is_documented():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    corpus_doc = (ROOT / "docs" / "corpus.md").read_text(encoding="utf-8")
    for name in cli.commands:
        assert f"`{name}" in readme or f"judgeapp {name}" in corpus_doc, name


def test_every_api_endpoint_is_documented(app):
    api_doc = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    for rule in app.url_map.iter_rules():
        if rule.rule.startswith("/api/"):
            documented = rule.rule.replace("<path:section_id>", "<id>")
            assert documented in api_doc, rule.rule


def test_readme_has_exactly_the_two_commands():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("## Quick start", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    commands = [line.split("#")[0].strip() for line in block.strip().splitlines()]
    assert commands == ["./judge serve", "./judge test"]
    assert "./judge test" in (ROOT / ".ci" / "run").read_text()
