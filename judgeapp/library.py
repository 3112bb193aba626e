"""The rules library: the loaded corpus, the policies and their search indexes, shared by views, the API
and the CLI. Read-only once loaded: several processes can serve from the same files."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from flask import current_app

from .corpus import Corpus, load_corpus
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


def index_docs(corpus: Corpus):
    """Every section of the corpus as the search index sees it."""
    for section in corpus.sections.values():
        doc = corpus.documents[f"{section.game}/{section.doc}"]
        yield IndexDoc(id=section.id, game=section.game, doc=section.doc, anchor=section.anchor,
                       title=section.title, doc_title=doc.title, text=section.text)


def open_library(corpus_dir: str | Path, index_dir: str | Path, synonyms_path: str | Path | None = None,
                 rebuild: bool = False, infractions_dir: str | Path | None = None,
                 situation_index_dir: str | Path | None = None) -> Library:
    """Load the corpus (and the policies), build the index when missing or stale (or `rebuild`), open it.

    The situation lookup is built in memory from the policies and the corpus; the analysis of its evidence is
    cached in `situation_index_dir` for the next start."""
    corpus = load_corpus(corpus_dir)
    ensure_index(lambda: index_docs(corpus), index_dir, corpus.version, force=rebuild)
    synonyms = load_synonyms(synonyms_path) if synonyms_path and Path(synonyms_path).exists() else []
    lib = Library(corpus=corpus, index=SearchIndex(index_dir, synonyms))
    if infractions_dir is not None:
        policies = load_policies(infractions_dir, corpus)
        problems: list[str] = []
        lib.decks = load_deck_rules(infractions_dir, corpus, policies, problems)
        if problems:
            raise PolicyError(problems)
        lib.policies = policies
        lib.lookup = Lookup(corpus, policies, synonyms,
                            cache_dir=situation_index_dir or Path(index_dir).with_name("situation-index"))
    return lib


def current_library() -> Library:
    return current_app.extensions["judgeapp.library"]
