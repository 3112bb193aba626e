"""The rules library: the loaded corpus and its search index, shared by views, the API and the CLI."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from flask import current_app

from .corpus import Corpus, load_corpus
from .search import IndexDoc, SearchIndex, ensure_index, load_synonyms


@dataclass
class Library:
    corpus: Corpus
    index: SearchIndex


def index_docs(corpus: Corpus):
    """Every section of the corpus as the search index sees it."""
    for section in corpus.sections.values():
        doc = corpus.documents[f"{section.game}/{section.doc}"]
        yield IndexDoc(id=section.id, game=section.game, doc=section.doc, anchor=section.anchor,
                       title=section.title, doc_title=doc.title, text=section.text)


def open_library(corpus_dir: str | Path, index_dir: str | Path, synonyms_path: str | Path | None = None,
                 rebuild: bool = False) -> Library:
    """Load the corpus, build the index when it is missing or stale (or `rebuild`), open it."""
    corpus = load_corpus(corpus_dir)
    ensure_index(lambda: index_docs(corpus), index_dir, corpus.version, force=rebuild)
    synonyms = load_synonyms(synonyms_path) if synonyms_path and Path(synonyms_path).exists() else []
    return Library(corpus=corpus, index=SearchIndex(index_dir, synonyms))


def current_library() -> Library:
    return current_app.extensions["judgeapp.library"]
