"""The rules library: the loaded corpus, the policies and their search indexes, shared by views, the API
and the CLI. Read-only once loaded: several processes can serve from the same files."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from flask import current_app

from .corpus import Corpus, Section, load_corpus
from .decks import DeckRules, load_deck_rules
from .lookup import Lookup
from .policy import Policies, PolicyError, load_policies
from .search import IndexDoc, SearchIndex, ensure_index, load_synonyms


@dataclass
class Library:
    corpus: Corpus
    index: SearchIndex
    policies: Policies | None = None
    lookup: Lookup | None = None  # the situation lookup (judgeapp/lookup.py)
    decks: dict[str, DeckRules] | None = None  # each game's deck construction rules


# A section headed only by its number and this word is its chapter's overview (3a. 概要 under 3. 出場停止処分).
_NUMBER_HEAD = r"(?:\S*[0-9０-９]\S*\s*)"  # a heading's number (3a., 10.)
_OVERVIEW = re.compile(_NUMBER_HEAD + "?概要")


def overview_of(corpus: Corpus, section: Section) -> str:
    """The heading an overview section speaks for: its parent's, when the section is headed 概要 (and its
    number) and the parent has no text of its own; else "". Without the parent's number: that is a number
    key (below), not a word of the title."""
    parent = corpus.sections.get(section.parent) if section.parent else None
    if parent is None or parent.text.strip() or not _OVERVIEW.fullmatch(section.title.strip()):
        return ""
    return re.sub("^" + _NUMBER_HEAD, "", parent.title.strip())


def index_docs(corpus: Corpus) -> Iterator[IndexDoc]:
    """Every section of the corpus as the search index sees it (an overview with its chapter's heading as
    `context`)."""
    for section in corpus.sections.values():
        doc = corpus.documents[f"{section.game}/{section.doc}"]
        context = overview_of(corpus, section)
        numbers = corpus.number_keys(section)
        if context:  # the chapter's number reaches its overview too (第3章 → 3a, not the bare heading 3)
            numbers = numbers + [
                k for k in corpus.number_keys(corpus.sections[section.parent]) if k not in numbers
            ]
        yield IndexDoc(
            id=section.id,
            game=section.game,
            doc=section.doc,
            anchor=section.anchor,
            title=section.title,
            doc_title=doc.title,
            text=section.text,
            numbers=numbers,
            context=context,
        )


def situation_docs(policies: Policies) -> Iterator[IndexDoc]:
    """Every accumulation rule and infraction as a plain word index sees it (the offline lookup's export): a
    rule's words with the levels it names (as judgeapp/lookup.py reads them: 注意 N, 警告 W), an infraction's
    name, description, judges' words and the wizard answers that lead to it."""
    for policy in policies.games.values():
        for rule in policy.file.rules:
            named = [policy.levels[x] for x in [rule.level, *([rule.to] if rule.to else rule.to_any)]]
            yield IndexDoc(
                id=f"{policy.game}/rule:{rule.id}",
                game=policy.game,
                doc="infractions",
                anchor="",
                title=rule.text,
                doc_title=policy.name,
                text="\n".join([" ".join(f"{x.label} {x.mark}" for x in named), "、".join(rule.keywords)]),
            )
        leads: dict[str, list[str]] = {}
        for node in policy.nodes.values():
            for a in node.answers:
                if a.outcome:
                    leads.setdefault(a.outcome, []).append(a.label)
        for inf in policy.infractions.values():
            text = "\n".join([inf.description, "、".join(inf.keywords), *leads.get(inf.id, [])])
            yield IndexDoc(
                id=f"{policy.game}/{inf.id}",
                game=policy.game,
                doc="infractions",
                anchor="",
                title=inf.name,
                doc_title=policy.name,
                text=text,
            )


def open_library(
    corpus_dir: str | Path | list,
    index_dir: str | Path,
    synonyms_path: str | Path | None = None,
    rebuild: bool = False,
    infractions_dir: str | Path | list | None = None,
    situation_index_dir: str | Path | None = None,
) -> Library:
    """Load the corpus (and the policies), build the index when missing or stale (or `rebuild`), open it.

    `corpus_dir` and `infractions_dir` may each be a list of folders: the project's, then extra ones.
    The situation lookup is built in memory from the policies and the corpus; the analysis of its evidence is
    cached in `situation_index_dir` for the next start."""
    corpus = load_corpus(corpus_dir)
    ensure_index(lambda: index_docs(corpus), index_dir, corpus.version, force=rebuild)
    synonyms = []
    if synonyms_path and Path(synonyms_path).exists():
        synonyms = load_synonyms(synonyms_path)  # refuses duplicate keys (judgeapp.yamlload)
    lib = Library(corpus=corpus, index=SearchIndex(index_dir, synonyms, corpus.game_names()))
    if infractions_dir is not None:
        policies = load_policies(infractions_dir, corpus)
        problems: list[str] = []
        lib.decks = load_deck_rules(infractions_dir, corpus, policies, problems)
        if problems:
            raise PolicyError(problems)
        lib.policies = policies
        lib.lookup = Lookup(
            corpus,
            policies,
            synonyms,
            cache_dir=situation_index_dir or Path(index_dir).with_name("situation-index"),
        )
    return lib


def data_dirs(config: Mapping) -> tuple[list[str], list[str]]:
    """The corpus folders and infraction folders a configuration names: CORPUS_DIR then EXTRA_CORPUS_DIRS,
    INFRACTIONS_DIR then EXTRA_INFRACTIONS_DIRS (a game added by data alone lives in the extra folders)."""

    def listed(value: object) -> list[str]:
        if not value:
            return []
        return (
            [str(v) for v in value]
            if isinstance(value, (list, tuple))
            else [v for v in str(value).split(os.pathsep) if v]
        )

    return (
        [str(config["CORPUS_DIR"]), *listed(config.get("EXTRA_CORPUS_DIRS"))],
        [str(config["INFRACTIONS_DIR"]), *listed(config.get("EXTRA_INFRACTIONS_DIRS"))],
    )


def current_library() -> Library:
    """The library of the app handling the request."""
    return current_app.extensions["judgeapp.library"]
