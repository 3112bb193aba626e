"""Japanese full-text search over rule sections. Whoosh stays behind this package.

How a judge's query is read (docs/corpus.md, "Search"):
- words: SudachiPy splits the text into words (long and short units) and gives each word's normalized form
  and reading; particles and auxiliaries are dropped. Index and query are folded the same way (NFKC,
  case, hiragana→katakana), so 引いた finds 引く, すりーぶ finds スリーブ.
- readings: a query typed in kana also matches the words' readings, so けいこく finds 警告 and ぼち 墓地.
- synonyms: judges' words that the texts do not use (rules_corpus/synonyms.yaml) add the texts' words.
- section numbers as typed (6b-iii, 301, 第9章, 第3条) go straight to their section; how each game numbers
  its sections is its data (`_game.yaml`, `numbering`; `Corpus.number_keys`), read into `IndexDoc.numbers`.
- games named: without a game chosen, a game's name typed as a whole word of the query (リセ, DM, 大会規定: its
  `_game.yaml` name, short name and aliases, `Game.names`) is taken out of the query and weighs that game's
  sections first; the other games' still follow (`games`).
- characters: when the words find fewer than asked, the query is matched character by character (bigrams)
  with the middle dot, long-vowel mark and brackets ignored, so バイスホール and ボルバル find the cards.
Queries are built in code, never parsed from the user's text, so no input is a syntax error.

The package, along its seams: `schema` (fields, weights, what a search gives back), `analysis` (SudachiPy's
words, folding, numbers, the spelling maps derived from the corpus), `build` (writing the index),
`query` (a judge's words to one query), `games` (the games a query names), `evaluate` (the query over numpy
postings, BM25F), `snippets`, and
`index` (`SearchIndex`: an opened index, which the rest of the app uses).
"""

from .analysis import (
    ANALYZER_VERSION,
    LIGHT_WORDS,
    NUMBERING,
    QUERY_STOP,
    QUESTION_WORDS,
    TITLE_LIGHT,
    Analyzer,
    Word,
    analyzer,
    number_terms,
    title_topic,
)
from .build import build_index, ensure_index, index_is_current, load_synonyms
from .index import SearchIndex
from .schema import Hit, IndexDoc, NamedGame, Results

__all__ = [
    "ANALYZER_VERSION",
    "LIGHT_WORDS",
    "NUMBERING",
    "QUERY_STOP",
    "QUESTION_WORDS",
    "TITLE_LIGHT",
    "Analyzer",
    "Hit",
    "IndexDoc",
    "NamedGame",
    "Results",
    "SearchIndex",
    "Word",
    "analyzer",
    "build_index",
    "ensure_index",
    "index_is_current",
    "load_synonyms",
    "number_terms",
    "title_topic",
]
