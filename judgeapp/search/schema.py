"""The index's fields and weights, and what a search gives back."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import TYPE_CHECKING, Any

from whoosh.analysis import SpaceSeparatedTokenizer
from whoosh.fields import ID, KEYWORD, STORED, TEXT, Schema
from whoosh.system import pack_uint

if TYPE_CHECKING:
    pass


_space = SpaceSeparatedTokenizer()


class TermsField(TEXT):
    """A text field given its terms already analysed (a list): counted at once, without Whoosh's tokenizer
    (the analysis is SudachiPy's, done before). A string is still split on spaces."""

    def index(self, value: str | Iterable[str], **kwargs: Any) -> Iterator[tuple[bytes, int, float, bytes]]:
        if isinstance(value, str):
            yield from super().index(value, **kwargs)
            return
        for term, freq in Counter(value).items():
            yield term.encode("utf-8"), freq, float(freq), pack_uint(freq)


SCHEMA = Schema(
    id=ID(stored=True, unique=True),
    game=ID(stored=True),
    doc=ID(stored=True),
    number=KEYWORD(scorable=False),
    title=TermsField(analyzer=_space, phrase=False),
    words=TermsField(analyzer=_space, phrase=False),
    reading=TermsField(analyzer=_space, phrase=False),
    part_reading=TermsField(analyzer=_space, phrase=False),  # short units' readings (停止中: テイシ, チュウ)
    grams=TermsField(analyzer=_space, phrase=False),
    syn=TermsField(analyzer=_space, phrase=False),
    kanji=TermsField(analyzer=_space, phrase=False),  # each word's kanji (`kanji_stem`: 繰り下げ → 繰下)
    pairs=TermsField(analyzer=_space, phrase=False),
    counts=TermsField(analyzer=_space, phrase=False),  # a count and the words near it (`count_terms`)
    title_grams=TermsField(analyzer=_space, phrase=False),
    title_topic=KEYWORD(scorable=False),  # the title's topic words as one term (`title_topic`)
    defines=KEYWORD(scorable=False),  # the phrases the section's text defines (`defined_words`: 試合|開始)
    title_text=STORED,
    doc_title=STORED,
    text=STORED,
)

FIELD_BOOST = {"title": 2.0, "words": 1.0, "reading": 0.8, "grams": 0.5}
# How much each signal weighs when a query is ranked with all of them at once (see `SearchIndex.query`).
WEIGHT = {
    "number": 60.0,  # the section number, however written
    # a heading's own number within its parent typed in its form (③ for ③ 【敗北】, ch10-3; Ⅰ for Ⅰ. シャッフルに
    # 関して): beside the parent's words (ペナルティ③) too, whose title holds them and the item's does not
    "number_item": 120.0,
    # a number in another form than typed: an item's own number for a plain number (3: ③ 【敗北】) or another
    # item form, a section's key for an item's form (③: 第 3 章), so that the form typed comes first
    "number_form": 30.0,
    # each word of the text's sentences that refer to a section number its game has none of (第 11 章)
    "mentions": 0.1,
    "all": 1.0,  # every word of the query in the section (added to "any")
    "title": 1.0,  # every word of the query in the section's title
    "topic": 0.5,  # the query's words are the title's topic (シャッフル: Ⅰ. シャッフルに関して)
    # a question what a thing is (マッチって何): each of its phrases the section defines (1b. 用語定義), about
    # a word in the title and the text (4 and 8 were too light to lift a definition over its many mentions)
    "defines": 12.0,
    # a count asked for (何枚, なんにん): a number and that counter within three words of the query's other
    # words (５枚のカードをシールドとして); 3 to 6 were alike, 8 lost a first hit
    "counts": 5.0,
    "most": 0.5,  # all words but one (queries of 3 to 5 words): one noise word does not sink a section
    "segments": 0.8,  # a run of kana read as several of the corpus's readings
    "any": 1.0,  # each word found
    "coord": 1.5,  # each word found, whatever its score (a section with more of the words ranks higher)
    "synonym": 0.35,  # a word of the same SudachiPy synonym group
    "synonym_only": 0.7,  # the same, for a word the corpus does not have in any form (バレる: 発覚)
    "fuzzy": 0.5,  # a katakana word within one edit, a Latin name from its kana reading
    "phrase": 1.0,  # a phrase of rules_corpus/synonyms.yaml (as much as the word it stands for)
    "pairs": 0.5,  # two words side by side as in the text (ヘッドジャッジ|いる: ヘッドジャッジがいない)
    "characters": 1.0,  # a word the corpus does not have, by its character pairs (all of them)
    "grams": 0.4,  # every character pair of the query (card names, abbreviations)
    "some_grams": 0.05,  # some character pairs
    "container": 0.5,  # a section with no text of its own, only subsections: its score times this
    # a section of a game the query names in its words (リセ 遅刻), in a search without a game: its score times this
    "named_game": 1000.0,
}


@dataclass
class IndexDoc:
    """One section as the index sees it."""

    id: str
    game: str
    doc: str
    anchor: str
    title: str
    doc_title: str
    text: str
    numbers: list[str] = dataclass_field(
        default_factory=list
    )  # how judges type its number (`Corpus.number_keys`)
    # an overview section's parent heading (3a. 概要 under 3. 出場停止処分): indexed as the section's title
    # too, for the overview speaks for its chapter (`library.index_docs`); never shown
    context: str = ""


@dataclass
class Hit:
    id: str
    game: str
    doc: str
    title: str
    doc_title: str
    snippet: str
    score: float

    @property
    def url(self) -> str:
        return f"/rules/{self.id}"


@dataclass(frozen=True)
class NamedGame:
    """A game the query names in its words (`search.games`), whose sections come first in a search without a
    game: the name as typed, the game, and whether any of its sections matches the rest of the query (when
    none does, the other games' sections are all there is)."""

    name: str
    game: str
    found: bool


@dataclass
class Results:
    query: str
    total: int
    hits: list[Hit]
    # the games the query names in its words, in the query's order, and the query searched without their names
    named: list[NamedGame] = dataclass_field(default_factory=list)
    rest: str = ""
