"""Japanese full-text search over rule sections. Whoosh stays behind this one module.

How a judge's query is read (docs/corpus.md, "Search"):
- words: SudachiPy splits the text into words (long and short units) and gives each word's normalized form
  and reading; particles and auxiliaries are dropped. Index and query are folded the same way (NFKC,
  case, hiragana→katakana), so 引いた finds 引く, すりーぶ finds スリーブ.
- readings: a query typed in kana also matches the words' readings, so けいこく finds 警告 and ぼち 墓地.
- synonyms: judges' words that the texts do not use (rules_corpus/synonyms.yaml) add the texts' words.
- section numbers as typed (6b-iii, 301, 第9章, 第3条) go straight to their section; how each game numbers
  its sections is its data (`_game.yaml`, `numbering`; `Corpus.number_keys`), read into `IndexDoc.numbers`.
- characters: when the words find fewer than asked, the query is matched character by character (bigrams)
  with the middle dot, long-vowel mark and brackets ignored, so バイスホール and ボルバル find the cards.
Queries are built in code, never parsed from the user's text, so no input is a syntax error.
"""

from __future__ import annotations

import bisect
import copy
import dataclasses
import fcntl
import itertools
import json
import operator
import os
import re
import shutil
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from itertools import accumulate
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from whoosh import index as whoosh_index
from whoosh import query as Q
from whoosh import scoring
from whoosh.analysis import SpaceSeparatedTokenizer
from whoosh.fields import ID, KEYWORD, STORED, TEXT, Schema
from whoosh.system import pack_uint

from .textnorm import (
    clean_query,
    deletions,
    fold,
    is_kana,
    kana_consonants,
    kana_skeleton,
    latin_consonants,
    section_number_keys,
    spelled_letters,
    squash,
    squash_map,
    to_katakana,
)
from .yamlload import load_yaml

if TYPE_CHECKING:
    from sudachipy import Morpheme
    from whoosh.codec.whoosh3 import W3FieldWriter
    from whoosh.index import Index

# Bump when the analysis changes: an index built by another version (of this code or of SudachiPy and its
# dictionary) is rebuilt on start.
ANALYZER_VERSION = "12"


def _analysis_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    parts = [ANALYZER_VERSION]
    for package in ("sudachipy", "sudachidict-core"):
        try:
            parts.append(f"{package}={version(package)}")
        except PackageNotFoundError:
            parts.append(f"{package}=?")
    return " ".join(parts)


_DROP_POS = {"助詞", "助動詞", "補助記号", "空白", "記号"}
# Words that carry no meaning in what a judge types, query or story (normalized forms, folded): light verbs and
# nouns, auxiliaries, and the question and filler words both share. Search and the situation lookup each add
# their own (`_QUERY_STOP` below, `lookup.STOP`).
LIGHT_WORDS = frozenset(
    fold(w)
    for w in (
        "為る", "居る", "有る", "成る", "仕舞う", "事", "物", "様", "ところ", "れる", "られる", "せる", "させる",
        "ない", "て", "た", "出来る", "何", "如何", "何処", "何故", "良い", "いい", "言う", "思う", "貰う",
        "呉れる", "欲しい", "ちゃう", "此れ", "其れ",
    )
)  # fmt: skip
# A query's own: the question words a judge wraps a query in (〜って何, どうすればいい, 〜できない).
_QUERY_STOP = LIGHT_WORDS | {
    fold(w) for w in ("何時", "誰", "分かる", "知る", "教える", "下さい", "って", "です", "ます", "彼れ")
}
# Question words typed in kana, as SudachiPy normalizes them (どこ, not 何処).
_KANA_QUESTION = {
    fold(w) for w in ("どう", "どれ", "どっち", "どちら", "どこ", "いつ", "どんな", "どの", "どういう")
}
_QUERY_STOP |= _KANA_QUESTION | {
    # the formal noun こと, and the courtesy and filler words a judge opens with (すみません, ちょっと, えっと)
    fold(w)
    for w in ("こと", "幾つ", "すむ", "一寸", "あの", "えっと", "エート", "願う", "質問")
}

# Question words (normalized forms, folded): a run of kana that ends with one is cut before it.
_QUESTION = {fold(w) for w in ("何", "如何", "何処", "何時", "誰", "何故")} | _KANA_QUESTION
# A run of kana that a question ends, as typed: a particle and a question word (〜ってどうなるの, 〜はなに), or
# 何 (and 誰) with what follows (〜って何, 〜何個): the run is a word of its own, the question is not.
_KANA_QUESTION_TAIL = (
    re.compile(
        "^([ぁ-んァ-ヶー]{2,})((?:って|は|のは)"
        "(?:(?:なに|なん|どう|どれ|どっち|どちら|どこ|いつ|だれ|いくつ|なぜ)[ぁ-んー]*|[何誰].{0,6}))$"
    ),
    re.compile("^([ぁ-んァ-ヶー]{2,})([何誰].{0,6})$"),
)
# The counters a judge asks about in kana after なん (なんてん: 何点), by their readings (rendaku included).
_COUNTERS = {
    to_katakana(k): v
    for k, v in {
    "てん": "点", "にん": "人", "まい": "枚", "かい": "回", "ねん": "年", "ふん": "分", "ぷん": "分",
    "びょう": "秒", "しょう": "勝", "はい": "敗", "ぱい": "敗", "こ": "個", "ばん": "番", "ど": "度",
    "じかん": "時間", "せん": "戦", "ほん": "本", "ぼん": "本", "ぽん": "本", "めい": "名", "にち": "日",
    "しゅう": "週", "ぶ": "部", "さい": "歳",
    }.items()
}  # fmt: skip
_KANA_COUNT_QUESTION = re.compile("ナン(" + "|".join(sorted(_COUNTERS, key=len, reverse=True)) + ")")
_HIRAGANA_RUN = re.compile("[ぁ-んー]{3,}")
_PARTICLE_CHARS = frozenset("のにをでがはともへ")
# A run of kana that starts with a katakana word and goes on in hiragana (スコアキーパいないとダメ).
_KATAKANA_THEN_HIRAGANA = re.compile("^([ァ-ヶー]{3,})([ぁ-ん][ぁ-んァ-ヶー]+)$")
# What separates a query's parts as a space does: the punctuation a judge types between them (すみません、…).
_CHUNK_BREAK = re.compile(r"[\s、。，．,!?！？…]+")

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
    grams=TermsField(analyzer=_space, phrase=False),
    syn=TermsField(analyzer=_space, phrase=False),
    kanji=TermsField(analyzer=_space, phrase=False),  # each word's kanji (`kanji_stem`: 繰り下げ → 繰下)
    pairs=TermsField(analyzer=_space, phrase=False),
    title_grams=TermsField(analyzer=_space, phrase=False),
    title_topic=KEYWORD(scorable=False),  # the title's topic words as one term (`title_topic`)
    title_text=STORED,
    doc_title=STORED,
    text=STORED,
)

FIELD_BOOST = {"title": 2.0, "words": 1.0, "reading": 0.8, "grams": 0.5}
# How much each signal weighs when a query is ranked with all of them at once (see `SearchIndex.query`).
WEIGHT = {
    "number": 60.0,  # the section number, however written
    "all": 1.0,  # every word of the query in the section (added to "any")
    "title": 1.0,  # every word of the query in the section's title
    "topic": 0.5,  # the query's words are the title's topic (シャッフル: Ⅰ. シャッフルに関して)
    "most": 0.5,  # all words but one (queries of 3 to 5 words): one noise word does not sink a section
    "segments": 0.8,  # a run of kana read as several of the corpus's readings
    "any": 1.0,  # each word found
    "coord": 1.5,  # each word found, whatever its score (a section with more of the words ranks higher)
    "synonym": 0.35,  # a word of the same SudachiPy synonym group
    "fuzzy": 0.5,  # a katakana word within one edit, a Latin name from its kana reading
    "phrase": 1.0,  # a phrase of rules_corpus/synonyms.yaml (as much as the word it stands for)
    "pairs": 0.5,  # two words side by side as in the text (ヘッドジャッジ|いる: ヘッドジャッジがいない)
    "characters": 1.0,  # a word the corpus does not have, by its character pairs (all of them)
    "grams": 0.4,  # every character pair of the query (card names, abbreviations)
    "some_grams": 0.05,  # some character pairs
    "container": 0.5,  # a section with no text of its own, only subsections: its score times this
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


@dataclass
class Results:
    query: str
    total: int
    hits: list[Hit]


# --- analysis --------------------------------------------------------------------------------------


@dataclass
class Word:
    """One content word: the forms it can be matched by, its reading, and its surface in the text."""

    surface: str
    forms: tuple[str, ...]
    reading: str
    parts: tuple[str, ...]  # short-unit forms when the long unit splits
    synonyms: tuple[int, ...] = ()  # SudachiPy synonym group ids (of the word, or of its short units)
    # a grammatical word in a content word's place: a verb that can be auxiliary right after て/で (〜てくる,
    # 〜てあげる, 〜てしまう) or an auxiliary's stem (負けそう, 〜よう); the situation lookup weighs it as nothing
    aux: bool = False
    suffix: bool = False  # a suffix after a word (後 in マッチ後, 中 in ゲーム中; not a counter: 2枚)


class Analyzer:
    """SudachiPy behind a lock: a Sudachi tokenizer cannot be used by two threads at once.

    Each dictionary word is turned into a `Word` once: SudachiPy cuts every text, and the forms, reading,
    short units and synonym groups of a word it has seen before (same dictionary entry, same surface, same
    place after て/で) come from a memo rather than from SudachiPy again. A corpus repeats its words, so an
    index build asks SudachiPy for each word's details about once per distinct word."""

    MEMO_SIZE = 200_000  # distinct words kept (cleared when full)

    def __init__(self) -> None:
        from sudachipy import Dictionary, SplitMode

        self._split_a = SplitMode.A
        self._tokenizer = Dictionary(dict="core").tokenizer(SplitMode.C)
        self._lock = threading.Lock()
        self._memo: dict[tuple, Word] = {}
        self._pos: dict[int, tuple[bool, bool, bool, bool]] = {}

    def _pos_kind(self, m: Morpheme) -> tuple[bool, bool, bool, bool, bool, bool]:
        """(dropped, an auxiliary's stem, a verb that may be auxiliary, a particle or auxiliary, a suffix, a
        numeral) of a part of speech, read once per part-of-speech id."""
        pid = m.part_of_speech_id()
        kind = self._pos.get(pid)
        if kind is None:
            pos = m.part_of_speech()
            kind = self._pos[pid] = (
                pos[0] in _DROP_POS,
                pos[:2] == ("形状詞", "助動詞語幹"),
                pos[1] == "非自立可能" and pos[0] == "動詞",
                pos[0] in ("助詞", "助動詞"),
                pos[0] == "接尾辞",
                pos[1] == "数詞",
            )
        return kind

    def words(self, text: str) -> list[Word]:
        out: list[Word] = []
        memo = self._memo
        pos_kind = self._pos_kind
        for line in text.splitlines():
            for start in range(0, len(line), 4000):  # Sudachi limits one input's size
                chunk = line[start : start + 4000]
                if chunk.strip():
                    with self._lock:
                        before = None  # (surface, kind) of the morpheme before
                        for m in self._tokenizer.tokenize(chunk):
                            kind = pos_kind(m)
                            surface = m.surface()
                            if not kind[0]:
                                # _is_aux, from the part-of-speech kinds (see `Word.aux`)
                                aux = kind[1] or (
                                    kind[2]
                                    and before is not None
                                    and before[0] in ("て", "で")
                                    and before[1][3]
                                    and m.dictionary_form() not in ("見る", "みる")
                                )
                                # a suffix after a word (後 in マッチ後), not a counter after a number (2枚)
                                suffix = kind[4] and before is not None and not before[1][5]
                                key = (
                                    m.word_id(),
                                    m.part_of_speech_id(),
                                    surface,
                                    m.reading_form(),
                                    m.normalized_form(),
                                    m.dictionary_form(),
                                    aux,
                                    suffix,
                                )
                                w = memo.get(key)
                                if w is None:
                                    if len(memo) >= self.MEMO_SIZE:
                                        memo.clear()
                                    w = memo[key] = self._word(m, aux)
                                    w.suffix = suffix
                                if w.forms:
                                    out.append(w)
                            before = (surface, kind)
        return out

    def morphemes(self, text: str) -> list[tuple[int, int, str, bool]]:
        """SudachiPy's morphemes of a short text: (begin, end, folded normalized form, a content word)."""
        with self._lock:
            return [
                (m.begin(), m.end(), fold(m.normalized_form()), not self._pos_kind(m)[0])
                for m in self._tokenizer.tokenize(text[:4000])
            ]

    def parts_of_speech(self, text: str) -> list[tuple[int, int, str, str]]:
        """SudachiPy's morphemes of a short text as (begin, end, part of speech, its subdivision)."""
        with self._lock:
            return [
                (m.begin(), m.end(), *m.part_of_speech()[:2]) for m in self._tokenizer.tokenize(text[:4000])
            ]

    def particle_starts(self, text: str) -> set[int]:
        """Where SudachiPy reads a particle or an auxiliary beginning in a short text (offsets into it)."""
        with self._lock:
            return {m.begin() for m in self._tokenizer.tokenize(text[:4000]) if self._pos_kind(m)[3]}

    def _word(self, m: Morpheme, aux: bool = False) -> Word:
        surface = m.surface()
        forms = dict.fromkeys(
            f for f in (fold(m.normalized_form()), fold(surface), fold(m.dictionary_form())) if f.strip()
        )
        short = [p for p in m.split(self._split_a) if p.part_of_speech()[0] not in _DROP_POS]
        parts = tuple(fold(p.normalized_form()) for p in short)
        groups = tuple(m.synonym_group_ids()) or tuple(g for p in short for g in p.synonym_group_ids())
        return Word(
            surface=surface,
            forms=tuple(forms),
            reading=fold(m.reading_form()),
            parts=parts if len(parts) > 1 else (),
            synonyms=tuple(dict.fromkeys(groups)),
            aux=aux,
        )


_analyzer: Analyzer | None = None
_analyzer_lock = threading.Lock()


def analyzer() -> Analyzer:
    """The process's one analyzer (loading the dictionary takes a moment)."""
    global _analyzer
    with _analyzer_lock:
        if _analyzer is None:
            _analyzer = Analyzer()
    return _analyzer


def number_terms(numbers: Iterable[str]) -> list[str]:
    """The index terms of a section's numbers as its game's data writes them (`Corpus.number_keys`, from
    `_game.yaml`'s `numbering`): each key in every written form (`textnorm.section_number_keys`: 第10章,
    10章 and ch10 give 10; 6b-iii gives 6.b.3), and the key itself squashed (art3, which no reading finds)."""
    out: list[str] = []
    for key in numbers:
        out += section_number_keys(key)
        out.append(squash(key))
    return [t for t in dict.fromkeys(out) if t]


# A written section number that says it is one (第/章/節, a letter or a separator between its parts: 6b3, ch10,
# 7-1), so that it is read as a number at the start of a longer query part (6b3って何, 第11章のペナルティ);
# a plain 5 there is a count (5枚), not a section.
_MARKED_NUMBER = re.compile(r"[第章節]|\d\s*[a-zⅰ-ⅿⅠ-Ⅿ]|[a-z]\s*\d|\d\s*[-‐.・]\s*\d|\d[①-⑳]", re.IGNORECASE)


def query_number_terms(text: str) -> list[str]:
    """What a query may be as a section number (the same forms as `number_terms`); [] for a long query.
    A part of the query that begins with a marked number (`_MARKED_NUMBER`) gives that number too."""
    raw = squash(text) if any(ch.isdigit() for ch in squash(text)) else ""  # art3; not a plain word
    keys = section_number_keys(text) if len(squash(text)) <= 16 else []
    if not keys:
        for chunk in _CHUNK_BREAK.split(text):
            if not _MARKED_NUMBER.search(chunk[:12]):
                continue
            for end in range(min(len(chunk), 12), 1, -1):  # its longest such start
                head = chunk[:end]
                if _MARKED_NUMBER.search(head) and (found := section_number_keys(head)):
                    keys.extend(found)
                    break
    if raw and len(squash(text)) <= 16:
        keys.append(raw)
    return list(dict.fromkeys(keys))


def spelling_maps(readings: Iterable[str], forms: Iterable[str]) -> dict[str, dict[str, list[str]]]:
    """What loose spellings may stand for, derived from the corpus's own words and readings (docs/corpus.md,
    "Spelling tolerance"): katakana skeletons and their one-deletion neighbours, Latin words by the consonant
    classes of how they are said, acronyms by their letters' names."""
    skeletons: dict[str, list[str]] = {}  # kana skeleton → corpus readings
    for r in sorted(readings):
        if len(r) >= 3 and is_kana(r):
            skeletons.setdefault(kana_skeleton(r), []).append(r)
    deletes: dict[str, list[str]] = {}
    for sk in skeletons:
        if len(sk) >= 4:
            for d in sorted(deletions(sk)):
                deletes.setdefault(d, []).append(sk)
    latin: dict[str, list[str]] = {}
    letters: dict[str, list[str]] = {}
    for form in sorted(forms):
        if form.isascii() and form.isalpha() and len(form) >= 2:
            if len(form) >= 4:
                cons = latin_consonants(form)
                if len(cons) >= 2:
                    latin.setdefault(cons, []).append(form)
            if len(form) <= 5:
                letters.setdefault(spelled_letters(form), []).append(form)
    return {"skeletons": skeletons, "deletes": deletes, "latin": latin, "letters": letters}


def _katakana_word(form: str, shortest: int = 3) -> bool:
    return len(form) >= shortest and all("\u30a1" <= ch <= "\u30fa" or ch == "ー" for ch in form)


def clip_map(pairs: Iterable[str], compounds: Iterable[tuple[str, tuple[str, ...]]]) -> dict[str, list[str]]:
    """Clipped compounds, as judges shorten two loan words to the starts of each (ダブエリ for ダブル
    エリミネーション, スイドロ for スイスドロー): each two neighbouring katakana words of the corpus (a word pair,
    `word_pairs`, or the short units of one long word) by their first two or three characters each → the
    index term they stand for (`pairs:ダブル|エリミネーション`, `words:<long word>`)."""
    out: dict[str, list[str]] = {}

    def add(a: str, b: str, term: str) -> None:
        if not (_katakana_word(a) and _katakana_word(b)):
            return
        for i in (2, 3):
            for j in (2, 3):
                if len(a) > i and len(b) > j and a[i - 1] != "ー" and b[j - 1] != "ー":
                    key = a[:i] + b[:j]
                    if term not in out.setdefault(key, []):
                        out[key].append(term)

    for p in pairs:
        a, _, b = p.partition("|")
        add(a, b, "pairs:" + p)
    for form, parts in compounds:
        for a, b in zip(parts, parts[1:], strict=False):
            add(a, b, "words:" + form)
    return out


_KANJI_WORD = re.compile(r"[\u4e00-\u9fff々]{2,4}")
_KANJI_THEN_KANA = re.compile(r"([\u4e00-\u9fff々]{1,4})([ァ-ヶー]*)")
_NO_READING_START = frozenset("ャュョァィゥェォッンーヮヵヶ")


def _reading_splits(reading: str, n: int) -> Iterator[tuple[str, ...]]:
    """The ways to cut a reading into n pieces of one to four kana, none starting with a small kana, ン or ー."""
    if n == 1:
        if 1 <= len(reading) <= 4 and reading[0] not in _NO_READING_START:
            yield (reading,)
        return
    for k in range(1, min(4, len(reading) - n + 1) + 1):
        if reading[0] in _NO_READING_START:
            return
        for rest in _reading_splits(reading[k:], n - 1):
            yield (reading[:k], *rest)


def kanji_readings(reading_surfaces: dict[str, Iterable[str]], rounds: int = 4) -> dict[str, list[str]]:
    """How the corpus reads each of its kanji, from its words' readings (the lexicon's reading → surfaces):
    each word of one to four kanji (okurigana after them cut off its reading) is cut into one piece of its
    reading per kanji in every way it can be, and the pieces are weighed by how well they agree with the
    other words' (a few rounds of expectation-maximisation: 処理, 管理 and 理由 agree that 理 reads リ). The
    pieces that carry a quarter of the kanji's best piece's weight and half a word's or more are kept."""
    items: list[tuple[str, list[tuple[str, ...]]]] = []
    for reading, surfaces in sorted(reading_surfaces.items()):
        for surface in surfaces:
            m = _KANJI_THEN_KANA.fullmatch(surface)
            if not m:
                continue
            kanji, tail = m.groups()
            if tail and not reading.endswith(tail):
                continue
            cuts = list(_reading_splits(reading[: len(reading) - len(tail)], len(kanji)))
            if cuts:
                items.append((kanji, cuts))
    prob: dict[str, dict[str, float]] | None = None
    votes: dict[str, dict[str, float]] = {}
    for _ in range(rounds):
        votes = {}
        for kanji, cuts in items:
            if prob is None:
                weights = [1.0] * len(cuts)
            else:
                weights = []
                for cut in cuts:
                    w = 1.0
                    for ch, piece in zip(kanji, cut, strict=True):
                        w *= prob[ch].get(piece, 0.0) + 1e-3
                    weights.append(w)
            total = sum(weights)
            for cut, w in zip(cuts, weights, strict=True):
                for ch, piece in zip(kanji, cut, strict=True):
                    per = votes.setdefault(ch, {})
                    per[piece] = per.get(piece, 0.0) + w / total
        prob = {ch: {p: x / sum(v.values()) for p, x in v.items()} for ch, v in votes.items()}
    out = {}
    for ch, v in sorted(votes.items()):
        top = max(v.values())
        kept = sorted((p for p, x in v.items() if x >= 0.25 * top and x >= 0.5), key=lambda p: (-v[p], p))
        if kept:
            out[ch] = kept
    return out


def kanji_masks(forms: Iterable[str], pairs: Iterable[str]) -> dict[str, list[str]]:
    """The corpus's words of two to four kanji, and two neighbouring words that make one (観戦|者), by each
    spelling with one kanji left out (観?者): what a query word with one wrong kanji of the same reading may
    be (観選者, 権理). → the index terms they stand for (`words:権利`, `pairs:観戦|者`)."""
    out: dict[str, list[str]] = {}

    def add(word: str, term: str) -> None:
        for i in range(len(word)):
            key = word[:i] + "?" + word[i + 1 :]
            if term not in out.setdefault(key, []):
                out[key].append(term)

    have = set()
    for f in sorted(forms):
        if _KANJI_WORD.fullmatch(f):
            have.add(f)
            add(f, "words:" + f)
    for p in sorted(pairs):
        a, _, b = p.partition("|")
        if _KANJI_WORD.fullmatch(a + b) and a + b not in have:
            add(a + b, "pairs:" + p)
    return out


def _weighted(q: Q.Query, weight: float) -> Q.Query:
    """The query with its score multiplied by `weight`. Whoosh ignores the boost of a compound of one
    query (it runs the child alone), so the weight goes down to the first query that uses it."""
    while isinstance(q, (Q.And, Q.Or)) and len(q.subqueries) == 1:
        q = q.subqueries[0]
    copied = object.__new__(type(q))  # a shallow copy (what copy.copy makes of a query, without its detour)
    copied.__dict__.update(q.__dict__)
    copied.boost = q.boost * weight
    return copied


def _katakana(ch: str) -> bool:
    """One katakana character (or the long-vowel mark): not a word boundary inside a katakana word."""
    return len(ch) == 1 and ("\u30a1" <= ch <= "\u30fa" or ch == "ー")


def _inside_katakana_word(text: str, a: int, b: int) -> bool:
    """Whether text[a : b + 1] begins or ends inside a longer katakana word (ペナ in ペナルティ)."""
    return (_katakana(text[a]) and _katakana(text[a - 1 : a] if a else "")) or (
        _katakana(text[b]) and _katakana(text[b + 1 : b + 2])
    )


def _without_question_tail(chunk: str, words: list[Word]) -> str:
    """A run of kana without the question it ends with (ダイバーってなに → ダイバー): cut after the last content
    word that a question word follows; the run as typed when no question word ends it (まきもどし)."""
    pos, end, tail = 0, None, False
    for w in words:
        at = chunk.find(w.surface, pos)
        if at < 0:
            return chunk
        pos = at + len(w.surface)
        if w.forms[0] in _KANA_QUESTION and at == end:
            # a question word in kana right after a word, with no particle between, may be part of it
            # (でんどう is 殿堂, not でん + どう)
            end, tail = pos, False
        elif w.forms[0] in _QUESTION:
            tail = True
        elif w.forms[0] not in _QUERY_STOP:
            end, tail = pos, False
    return chunk[:end] if tail and end else chunk


# Words of a title that name no topic: how headings are worded (〜に関して, 〜について, 〜による, 〜の皆さんへ).
_TITLE_LIGHT = {
    fold(w)
    for w in ("関する", "付く", "因る", "依る", "対する", "当たる", "於ける", "皆", "さん", "第", "章", "節")
}
_NUMBERING = re.compile(r"[0-9]+|[a-z]{1,2}|[ivxlc]+")


_KANJI_RE = re.compile(r"[\u4e00-\u9fff々]")


def kanji_stem(surface: str) -> str:
    """A word's kanji, when it has two or more: the words of one family share them whatever their okurigana
    and inflection (繰り下がる, 繰り下げ, 繰下げ → 繰下; 間違えて, 間違い → 間違)."""
    stem = "".join(_KANJI_RE.findall(surface))
    return stem if len(stem) >= 2 else ""


def word_stem(w: Word) -> str:
    """A word's kanji family (`kanji_stem`): of its surface, or, when it is written in kana, of its
    dictionary's normalized form (まちがえて → 間違える → 間違)."""
    return kanji_stem(w.surface) or kanji_stem(w.forms[0])


def title_topic(words: list[Word]) -> str:
    """A title's topic as one term: its words' first forms, sorted, without the section number and the
    heading's wording (Ⅰ. シャッフルに関して → シャッフル). A query whose words are the topic, and nothing else
    of the title is missing, asks for that section rather than for one that mentions the words."""
    forms = {
        w.forms[0]
        for w in words
        if w.forms[0] not in _TITLE_LIGHT
        and w.forms[0] not in _QUERY_STOP
        and not _NUMBERING.fullmatch(w.forms[0])
    }
    return "|".join(sorted(forms))


def word_pairs(words: list[Word]) -> list[str]:
    """Each two neighbouring words (their first form), the order kept: where a query's words stand side by
    side in a section, as they do in the judge's phrase, the section is the likelier answer."""
    return [f"{a.forms[0]}|{b.forms[0]}" for a, b in zip(words, words[1:], strict=False)]


def _bigrams(text: str) -> list[str]:
    s = squash(text)
    return [s[i : i + 2] for i in range(len(s) - 1)] if len(s) > 1 else ([s] if s else [])


# --- building ----------------------------------------------------------------------------------------


def _counts(terms: Iterable[str]) -> dict[bytes, int]:
    """A field's terms as Whoosh stores them: each term's bytes and its frequency in the section."""
    return {t.encode("utf-8"): f for t, f in Counter(terms).items()}


def _analyse_doc(an: Analyzer, d: IndexDoc, lexicon: dict, seen: dict) -> dict:
    """One section's fields as the index stores them (term fields as term bytes → frequency), and its
    words' surfaces added to the lexicon. Each analysed word is handled once: the analyzer hands back the
    same `Word` for a word it has seen, and `seen` keeps, by word, its index terms as bytes (forms and
    short units, reading, synonym groups)."""
    body_words = an.words(d.text)
    title_words = an.words(d.title)
    if d.context:  # an overview: its chapter's heading is its title too (and the topic is the chapter's)
        context_words = an.words(d.context)
        title_words = title_words + context_words
    terms = []
    for ws in (body_words, title_words):
        out = []
        for w in ws:
            t = seen.get(id(w))
            if t is None:
                surface = fold(w.surface)
                for f in w.forms + w.parts:
                    lexicon["words"].setdefault(f, set()).add(surface)
                lexicon["reading"].setdefault(w.reading, set()).add(surface)
                for g in w.synonyms:
                    lexicon["syn"].setdefault(str(g), set()).add(surface)
                t = seen[id(w)] = (
                    w,  # kept, so that its id is not reused while `seen` lives
                    tuple(f.encode("utf-8") for f in w.forms + w.parts),
                    w.reading.encode("utf-8"),
                    tuple(str(g).encode("utf-8") for g in w.synonyms),
                )
            out.append(t)
        terms.append(out)
    body, title = terms
    title_grams = _bigrams(d.title) + (_bigrams(d.context) if d.context else [])
    return {
        "id": d.id,
        "game": d.game,
        "doc": d.doc,
        "number": " ".join(number_terms(d.numbers)),
        "syn": Counter(g for t in body + title for g in t[3]),
        "kanji": _counts(k for w in body_words + title_words if (k := word_stem(w))),
        "pairs": _counts(word_pairs(body_words) + word_pairs(title_words)),
        "title": Counter(f for t in title for f in t[1]),
        "words": Counter(f for t in body for f in t[1]),
        "reading": Counter(t[2] for t in body + title),
        "grams": _counts(title_grams + _bigrams(d.text)),
        "title_grams": _counts(title_grams),
        "title_topic": title_topic(context_words if d.context else title_words),
        "title_text": d.title,
        "doc_title": d.doc_title,
        "text": d.text,
    }


# The fields given as counted terms (`TermsField`): their postings travel and are written as arrays.
_COUNTED = tuple(sorted(n for n in SCHEMA.names() if isinstance(SCHEMA[n], TermsField)))


@dataclass
class _Batch:
    """Analysed sections, ready for the writer: each section's row of the other fields (ids, numbers, the
    title's topic) and, per counted field, its postings as arrays (the batch's terms, then per posting its
    term's place among them, its section's place in the batch and its frequency), in section order."""

    rows: list[dict]
    columns: dict[str, tuple[list[bytes], np.ndarray, np.ndarray, np.ndarray]]


def _batch(rows: list[dict]) -> _Batch:
    """Take the counted fields out of the rows, as arrays."""
    columns = {}
    for name in _COUNTED:
        vocab: dict[bytes, int] = {}
        place = vocab.setdefault
        tids: list[int] = []
        docs: list[int] = []
        freqs: list[int] = []
        for i, row in enumerate(rows):
            value = row.pop(name, None)
            if not value:
                continue
            if not isinstance(value, dict):  # terms not yet counted: as TermsField.index counts them
                value = _counts(value.split() if isinstance(value, str) else value)
            tids += [place(t, len(vocab)) for t in value]
            freqs += value.values()
            docs += [i] * len(value)
        columns[name] = (
            list(vocab),
            np.array(tids, dtype=np.int32),
            np.array(docs, dtype=np.int32),
            np.array(freqs, dtype=np.int32),
        )
    return _Batch(rows, columns)


def _merged(batches: list[_Batch], name: str, count: int):
    """A counted field's postings over all batches: the terms in byte order, and per term (in that order)
    the slice of the posting arrays (documents, frequencies) that holds its postings in document order;
    and each document's length (its frequencies' sum)."""
    vocab: dict[bytes, int] = {}
    place = vocab.setdefault
    parts_t, parts_d, parts_f = [], [], []
    offset = 0
    for b in batches:
        terms, tids, docs, freqs = b.columns[name]
        ids = np.array([place(t, len(vocab)) for t in terms], dtype=np.int64)
        parts_t.append(ids[tids] if len(tids) else tids.astype(np.int64))
        parts_d.append(docs.astype(np.int64) + offset)
        parts_f.append(freqs.astype(np.int64))
        offset += len(b.rows)
    terms = list(vocab)
    tids = np.concatenate(parts_t) if parts_t else np.zeros(0, np.int64)
    docs = np.concatenate(parts_d) if parts_d else np.zeros(0, np.int64)
    freqs = np.concatenate(parts_f) if parts_f else np.zeros(0, np.int64)
    order = sorted(range(len(terms)), key=terms.__getitem__)
    rank = np.empty(len(terms), dtype=np.int64)
    rank[order] = np.arange(len(terms))
    ranks = rank[tids]
    by = np.argsort(ranks, kind="stable")  # grouped by term (in byte order), each term's in document order
    bounds = np.zeros(len(terms) + 1, dtype=np.int64)
    np.cumsum(np.bincount(ranks, minlength=len(terms)), out=bounds[1:])
    lengths = np.bincount(docs, weights=freqs, minlength=count).astype(np.int64)
    return [terms[i] for i in order], bounds, docs[by], freqs[by], lengths


_LENGTH_OF_BYTE = None


def _stored_lengths(lengths: np.ndarray) -> np.ndarray:
    """What the lengths column gives back for each length (`byte_to_length(length_to_byte(n))`, 0 for 0)."""
    global _LENGTH_OF_BYTE
    from whoosh.util.numeric import _length_byte_cache

    if _LENGTH_OF_BYTE is None:
        _LENGTH_OF_BYTE = np.array(_length_byte_cache, dtype=np.int64)
    table = _LENGTH_OF_BYTE
    b = np.where(lengths >= 106374, 255, np.searchsorted(table, lengths, side="left"))
    return np.where(lengths > 0, table[np.minimum(b, 255)], 0)


# A counted field's postings while they are encoded (`_encode_terms`), read by the forked encoding workers.
_ENCODING: dict[str, tuple] = {}


def _encode_terms(task: tuple[str, int, int, int, int]) -> list[tuple[bytes, tuple]]:
    """Terms `lo` to `hi` (in byte order) of a counted field, encoded as `W3PostingsWriter` encodes them:
    per term, its postings' bytes (block by block: each block's pickled ids, weights and values,
    compressed, after its pickled block info) and its term info's figures (weight, document count, least
    and most length, highest weight, first and last document). The blocks' figures (deltas, highest and
    lowest frequency and length, sums) are computed for the range at once; each block's lists are slices
    of them."""
    import pickle
    import zlib

    from whoosh.codec.whoosh3 import WHOOSH3_HEADER_MAGIC
    from whoosh.system import pack_int
    from whoosh.util.numeric import length_to_byte

    name, lo, hi, limit, level = task
    terms, bounds, docs, freqs, lens = _ENCODING[name]
    bounds = bounds[lo : hi + 1].tolist()
    base = bounds[0]
    docs = docs[base : bounds[-1]]
    freqs = freqs[base : bounds[-1]]
    lens = lens[base : bounds[-1]]
    bounds = [x - base for x in bounds]
    if not len(docs):
        return []
    starts: list[int] = []
    for k in range(len(bounds) - 1):
        starts += range(bounds[k], bounds[k + 1], limit)
    at = np.array(starts, dtype=np.int64)
    deltas = np.diff(docs, prepend=0)
    deltas[at] = docs[at]  # each block's ids from 0 (`delta_encode` of the block)
    fmax = np.maximum.reduceat(freqs, at).tolist()
    fmin = np.minimum.reduceat(freqs, at).tolist()
    fsum = np.add.reduceat(freqs, at).tolist()
    lmax = np.maximum.reduceat(lens, at).tolist()
    big = np.iinfo(np.int64).max
    lmin = np.minimum.reduceat(np.where(lens > 0, lens, big), at).tolist()
    deltas = deltas.tolist()
    weights = freqs.astype(np.float64).tolist()
    values = freqs.astype(">u4").tobytes()
    docs = docs.tolist()
    dumps = pickle.dumps
    compress = zlib.compress
    encoded = []
    j = 0  # the block
    for k in range(len(bounds) - 1):
        first, end = bounds[k], bounds[k + 1]
        out = [WHOOSH3_HEADER_MAGIC]
        weight = 0.0
        minlength = None
        maxlength = 0
        maxweight = 0
        for a in range(first, end, limit):
            b = min(a + limit, end)
            top, low = fmax[j], fmin[j]
            w = None if top == 1 else float(top) if low == top else tuple(weights[a:b])
            data = dumps((tuple(deltas[a:b]), w, values[4 * a : 4 * b]), 2)
            if level:
                data = compress(data, level)
            bmin = None if lmin[j] == big else lmin[j]
            bmax = lmax[j]
            info = dumps(
                (b - a, docs[b - 1], float(top), level, length_to_byte(bmin), length_to_byte(bmax)), 2
            )
            size = len(info) + len(data)
            out += [pack_int(-size if b == end else size), info, data]
            weight += fsum[j]
            minlength = bmin if minlength is None else min(minlength, bmin)
            maxlength = max(maxlength, bmax)
            maxweight = max(maxweight, float(top))
            j += 1
        stats = (float(weight), end - first, minlength, maxlength, maxweight, docs[first], docs[end - 1])
        encoded.append((b"".join(out), stats))
    return encoded


def _encoding_tasks(
    name: str, limit: int, level: int, parts: int = 2
) -> list[tuple[str, int, int, int, int]]:
    """A counted field's terms cut into `parts` ranges of about as many postings each."""
    terms, bounds = _ENCODING[name][:2]
    cuts = np.searchsorted(bounds, [bounds[-1] * i / parts for i in range(1, parts)]).tolist()
    edges = [0, *(min(max(c, 0), len(terms)) for c in cuts), len(terms)]
    return [(name, a, b, limit, level) for a, b in zip(edges, edges[1:], strict=False) if b > a]


def _write_encoded(fw: W3FieldWriter, terms: list[bytes], encoded: list[tuple[bytes, tuple]]) -> None:
    """Write a counted field's encoded terms (`_encode_terms`) as `W3FieldWriter.finish_term` does: the
    postings, then the term's info (with where its postings are) in the terms table."""
    from whoosh.codec.whoosh3 import W3TermInfo
    from whoosh.system import pack_ushort

    postfile = fw._postfile
    tindex_add = fw._tindex.add
    fieldid = pack_ushort(fw._fieldid)
    start = postfile.tell()
    for tbytes, (blob, stats) in zip(terms, encoded, strict=True):
        postfile.write(blob)
        ti = W3TermInfo()
        ti._weight, ti._df, ti._minlength, ti._maxlength, ti._maxweight, ti._minid, ti._maxid = stats
        ti.set_extent(start, len(blob))
        tindex_add(fieldid + tbytes, ti.to_bytes())
        start += len(blob)


def _write_segment(
    ix: Index, docs: list[IndexDoc], batches: Iterable[_Batch], vocabulary: dict[str, list[str]] | None = None
) -> int:
    """Write the sections as the index's one segment, through Whoosh's codec API (the per-document writer
    for stored fields and lengths, the field writer for the postings, then the table of contents), exactly
    as `SegmentWriter.add_document` and `commit` would write them: the same files, read by Whoosh's own
    searcher with the same results. What it leaves out is the writer's general machinery (a posting pool
    of one tuple per posting, sorted, then each posting's length read back from disk), which took most of a
    large build; the term fields come already counted, as arrays (`_Batch`), and each term's posting blocks
    are encoded from slices of them (`_encode_terms`). `vocabulary`, when given, receives each indexed field's
    terms (but the ids'), for the searcher to know which terms the index has without asking Whoosh."""
    from whoosh.codec import default_codec
    from whoosh.index import TOC, clean_files
    from whoosh.util.numeric import byte_to_length, length_to_byte

    schema = ix.schema
    storage = ix.storage
    codec = default_codec()
    generation = ix.latest_generation() + 1
    segment = codec.new_segment(storage, ix.indexname)
    perdoc = codec.per_document_writer(storage, segment)
    names = sorted(schema.names())
    fields = {name: schema[name] for name in names}
    batches = list(batches)
    count = sum(len(b.rows) for b in batches)
    merged = {name: _merged(batches, name, count) for name in _COUNTED}
    # The counted fields' postings are encoded while the documents are written: in two forked workers for
    # a large build (as its analysis is), here otherwise.
    _ENCODING.clear()
    for name, (terms, bounds, pdocs, pfreqs, doc_lengths) in merged.items():
        _ENCODING[name] = (terms, bounds, pdocs, pfreqs, _stored_lengths(doc_lengths)[pdocs])
    tasks = [t for name in _COUNTED for t in _encoding_tasks(name, codec._blocklimit, codec._compression)]
    tasks.sort(key=lambda t: _ENCODING[t[0]][1][t[1]] - _ENCODING[t[0]][1][t[2]])  # the largest first
    collect = _in_workers(_encode_terms, tasks) if _can_fork(count) else None
    # the other indexed fields, per field: term bytes → its postings in document order (document, weight,
    # value bytes)
    postings: dict[str, dict[bytes, list]] = {n: {} for n in names if fields[n].indexed and n not in merged}
    lengths: dict[str, list[int | None]] = {n: [None] * count for n in postings}
    counted_lengths = {name: m[4].tolist() for name, m in merged.items()}
    stored = {"title_text": "title", "doc_title": "doc_title", "text": "text"}
    rows = (row for b in batches for row in b.rows)
    for docnum, (row, d) in enumerate(zip(rows, docs, strict=True)):
        perdoc.start_doc(docnum)
        for name in names:
            field = fields[name]
            if name in merged:
                perdoc.add_field(name, field, None, counted_lengths[name][docnum])
                continue
            value = getattr(d, stored[name]) if name in stored else row.get(name)
            if value is None:
                continue
            length = 0
            if field.indexed:
                field_postings = postings[name]
                for tbytes, freq, weight, vbytes in field.index(value):
                    if field.scorable:
                        length += freq
                    plist = field_postings.get(tbytes)
                    if plist is None:
                        field_postings[tbytes] = [(docnum, weight, vbytes)]
                    else:
                        plist.append((docnum, weight, vbytes))
                if length:
                    lengths[name][docnum] = byte_to_length(length_to_byte(length))
            perdoc.add_field(name, field, value if field.stored else None, length)
        perdoc.finish_doc()
    perdoc.close()
    segment.set_doc_count(count)

    try:
        results = collect() if collect is not None else [_encode_terms(t) for t in tasks]
    finally:
        _ENCODING.clear()
    encoded: dict[str, list] = {name: [] for name in merged}
    for task, part in sorted(zip(tasks, results, strict=True), key=lambda tr: tr[0][:2]):
        encoded[task[0]] += part
    writer = codec.field_writer(storage, segment)
    for name in sorted([*postings, *merged]):
        writer.start_field(name, fields[name])
        if vocabulary is not None and name != "id":
            vocabulary[name] = [
                t.decode("utf-8") for t in (merged[name][0] if name in merged else postings[name])
            ]
        if name in merged:
            _write_encoded(writer, merged[name][0], encoded[name])
        else:
            field_lengths = lengths[name]
            add = writer.add
            field_postings = postings[name]
            for tbytes in sorted(field_postings):
                writer.start_term(tbytes)
                for docnum, weight, vbytes in field_postings[tbytes]:
                    add(docnum, weight, vbytes if vbytes is not None else b"", field_lengths[docnum])
                writer.finish_term()
        writer.finish_field()
    writer.close()
    if segment.should_assemble():
        segment.create_compound_file(storage)
        segment.compound = True
    TOC(schema, [segment], generation).write(storage, ix.indexname)
    clean_files(storage, ix.indexname, generation, [segment])
    storage.temp_storage(f"{ix.indexname}.tmp").destroy()
    return count


# A build of at least this many sections analyses them in two worker processes (in batches, kept in order),
# then this process writes them while two workers encode the postings; the real corpus (a few hundred
# sections) is analysed and encoded here.
PARALLEL_FROM = 2000
_BATCH = 250
_STORED_ROW = ("title_text", "doc_title", "text")


def _can_fork(sections: int) -> bool:
    """Whether a build of this many sections works in forked workers (see `PARALLEL_FROM`)."""
    import multiprocessing

    return (
        sections >= PARALLEL_FROM
        and threading.active_count() == 1  # forking is safe only without other threads
        and "fork" in multiprocessing.get_all_start_methods()
    )


def _in_workers(fn: Callable[[Any], Any], items: list):
    """`fn` over `items` in two forked worker processes, started now; the function returned collects the
    results, in order. A worker that dies (the OOM killer, a signal) does not hang the build: the executor
    reports it (BrokenProcessPool) and what is missing is done here, in this process."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    executor = ProcessPoolExecutor(max_workers=2, mp_context=multiprocessing.get_context("fork"))
    futures = [executor.submit(fn, item) for item in items]

    def collect() -> list:
        try:
            out = []
            for item, f in zip(items, futures, strict=True):
                try:
                    out.append(f.result())
                except BrokenProcessPool:
                    out.append(fn(item))
            return out
        finally:
            executor.shutdown(wait=True, cancel_futures=True)

    return collect


def _analyse_batch(docs: list[IndexDoc]) -> tuple[_Batch, dict]:
    """A part of a build (a worker's, in a large one): the batch's rows (without the stored texts, which
    the writer has) and postings arrays, and the batch's lexicon."""
    lexicon: dict[str, dict[str, set[str]]] = {"words": {}, "reading": {}, "syn": {}}
    an, seen = analyzer(), {}
    rows = []
    for d in docs:
        row = _analyse_doc(an, d, lexicon, seen)
        for key in _STORED_ROW:
            del row[key]
        rows.append(row)
    return _batch(rows), lexicon


def _analysed_batches(docs: list[IndexDoc], lexicon: dict) -> list[_Batch]:
    """The sections analysed, in order, in batches (`_Batch`), their words added to `lexicon`."""

    if not _can_fork(len(docs)):
        results = [_analyse_batch(docs)]
    else:
        analyzer()  # loaded once, before the workers are forked
        batches = [docs[i : i + _BATCH] for i in range(0, len(docs), _BATCH)]
        # Every batch is collected before any is written: while this thread waits, the pool's result
        # thread has the interpreter to itself (consumed one by one, each batch's transfer waited for
        # the writing thread to let go of it, which made the build slower than a serial one).
        results = _in_workers(_analyse_batch, batches)()
    out = []
    for batch, lex in results:
        for field, entries in lex.items():
            mine = lexicon[field]
            for term, surfaces in entries.items():
                have = mine.get(term)
                if have is None:
                    mine[term] = surfaces
                else:
                    have |= surfaces
        out.append(batch)
    return out


def build_index(docs: Iterable[IndexDoc], path: str | Path, version: str = "") -> int:
    """Build a fresh index at `path` (replacing what is there once complete); return the section count."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    lexicon: dict[str, dict[str, set[str]]] = {"words": {}, "reading": {}, "syn": {}}
    docs = list(docs)
    try:
        ix = whoosh_index.create_in(str(tmp), SCHEMA)
        terms: dict[str, list[str]] = {}
        count = _write_segment(ix, docs, _analysed_batches(docs, lexicon), terms)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    lex = {f: {t: sorted(s) for t, s in m.items()} for f, m in lexicon.items()}
    lex["spellings"] = spelling_maps(lex["reading"], lex["words"])
    long_words = [f for f in lex["words"] if len(f) >= 6 and _katakana_word(f)]
    an = analyzer()
    compounds = [(f, parts) for f in long_words for w in an.words(f)[:1] if len(parts := w.parts) > 1]
    lex["spellings"]["clips"] = clip_map(terms.get("pairs", ()), compounds)
    lex["spellings"]["kanji_readings"] = kanji_readings(lex["reading"])
    lex["spellings"]["kanji_masks"] = kanji_masks(lex["words"], terms.get("pairs", ()))
    lex["terms"] = terms
    (tmp / "lexicon.json").write_text(json.dumps(lex, ensure_ascii=False), encoding="utf-8")
    (tmp / "meta.json").write_text(
        json.dumps({"corpus": version, "analyzer": _analysis_version(), "sections": count})
    )
    old = path.with_name(f".{path.name}.old-{os.getpid()}")
    if path.exists():
        path.rename(old)
    tmp.rename(path)
    shutil.rmtree(old, ignore_errors=True)
    return count


def index_is_current(path: str | Path, version: str) -> bool:
    meta = Path(path) / "meta.json"
    try:
        data = json.loads(meta.read_text())
    except (OSError, ValueError):
        return False
    return data.get("corpus") == version and data.get("analyzer") == _analysis_version()


def ensure_index(
    docs_factory: Callable[[], Iterable[IndexDoc]], path: str | Path, version: str, force: bool = False
) -> bool:
    """Build the index if it is missing or was built from another corpus (or `force`); True when built.

    Several server processes may start at once, or `judgeapp index` may run beside them: a file lock lets
    one build while the others wait. A running server keeps the index it opened until it restarts.
    """
    path = Path(path)
    if not force and index_is_current(path, version):
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(f".{path.name}.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not force and index_is_current(path, version):
            return False
        build_index(docs_factory(), path, version)
        return True


def load_synonyms(path: str | Path) -> list[tuple[list[str], list[str]]]:
    """The reviewed synonym list: (judges' words, phrases the texts use)."""
    data = load_yaml(Path(path)) or []  # strict: a duplicate key is refused, naming the file
    out = []
    for i, entry in enumerate(data):
        if not isinstance(entry, dict) or set(entry) != {"words", "means"}:
            raise ValueError(f"{path}: entry {i}: needs exactly 'words' and 'means'")
        out.append(([str(w) for w in entry["words"]], [str(m) for m in entry["means"]]))
    return out


# --- evaluating ------------------------------------------------------------------------------------------


# The memo's entries for the evaluation's scope (`_Evaluator.run`'s game) and the count of its documents.
_WITHIN, _SIZE = "within", "size"
_NO_POSTINGS = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64))
_NO_POSTINGS[0].flags.writeable = _NO_POSTINGS[1].flags.writeable = False  # shared: never changed in place
_NO_SMALL_POSTINGS: dict[
    int, float
] = {}  # `_small_postings` of a term the index lacks: shared, never changed


class _Evaluator:
    """Runs the queries built below over the index's postings with numpy, scoring as Whoosh's BM25F does.

    Whoosh keeps the index on disk and gives the statistics (idf, average and per-document field lengths) and
    the postings; decoding a posting list in pure Python is what made a query slow on a large corpus, so each
    term's postings are decoded once, on first use, into arrays of document numbers and BM25F scores. A query
    is then a handful of numpy operations over arrays the size of the corpus: the top hits, their matched
    terms and the exact number of matches come out of the same pass. Scores and the order of ties (lower
    document number first) are Whoosh's own, so results do not change.
    """

    def __init__(self, ix: Index, terms: dict[str, list[str]] | None = None):
        self.searcher = ix.searcher(weighting=scoring.BM25F())
        self.reader = self.searcher.reader()
        self.n = self.reader.doc_count_all()
        self.weighting = self.searcher.weighting
        self.stored = [self.reader.stored_fields(d) for d in range(self.n)]
        self._lengths: dict[str, np.ndarray] = {}
        self._postings: dict[tuple[str, str], tuple[np.ndarray, np.ndarray]] = {}
        self._lock = threading.Lock()
        # Each field's terms (`build_index` lists them in the lexicon): a term the index lacks is known so
        # at once, without a lookup in Whoosh's terms table. A field not listed is asked of Whoosh.
        self._terms = {name: frozenset(ts) for name, ts in (terms or {}).items()}
        self._kept: dict[int, list] = {}  # `keep`
        self._games: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}  # `_game_docs`
        self._in_game: dict[tuple[str, str, str], tuple[np.ndarray, np.ndarray]] = {}  # `_term`
        self._times: dict[
            tuple[str | None, str, str, float], tuple[np.ndarray, np.ndarray]
        ] = {}  # `_boosted`
        self._small: dict[tuple[str | None, str, str], dict[int, float]] = {}  # `_small_postings`
        self._small_times: dict[tuple[str | None, str, str, float], dict[int, float]] = {}  # `_small_boosted`

    def _field_lengths(self, field: str) -> np.ndarray:
        arr = self._lengths.get(field)
        if arr is None:
            arr = np.array(
                [self.reader.doc_field_length(d, field, 0) for d in range(self.n)], dtype=np.float64
            )
            self._lengths[field] = arr
        return arr

    def postings(self, field: str, text: str) -> tuple[np.ndarray, np.ndarray]:
        """(document numbers, scores) of one term, decoded once."""
        key = (field, text)
        hit = self._postings.get(key)
        if hit is not None:
            return hit
        known = self._terms.get(field)
        if known is not None and text not in known:
            return _NO_POSTINGS  # not kept (see below)
        with self._lock:
            hit = self._postings.get(key)
            if hit is not None:
                return hit
            btext = self.searcher.schema[field].to_bytes(text)
            if (field, btext) not in self.reader:
                # not kept: the terms a query asks for and the index lacks are the judges' (unbounded);
                # what is kept is bounded by the index's own terms
                return _NO_POSTINGS
            else:
                m = self.reader.postings(field, btext)
                items = list(m.items_as("weight"))
                ids = np.fromiter((i for i, _ in items), dtype=np.int64, count=len(items))
                tf = np.fromiter((w for _, w in items), dtype=np.float64, count=len(items))
                if self.searcher.schema[field].scorable:
                    w = self.weighting
                    idf = self.searcher.idf(field, btext)
                    avgfl = self.searcher.avg_field_length(field) or 1
                    fl = self._field_lengths(field)[ids]
                    scores = idf * ((tf * (w.K1 + 1)) / (tf + w.K1 * ((1 - w.B) + w.B * fl / avgfl)))
                else:
                    scores = tf
                hit = (ids, scores)
            self._postings[key] = hit
            return hit

    def evaluate(self, q: Q.Query) -> tuple[np.ndarray, np.ndarray]:
        """(scores, matched mask) over every document (`run`, spread over the whole corpus)."""
        ids, sc = self.run(q)
        scores = np.zeros(self.n)
        scores[ids] = sc
        mask = np.zeros(self.n, dtype=bool)
        mask[ids] = True
        return scores, mask

    def run(
        self, q: Q.Query, memo: dict | None = None, game: str | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """(matching document numbers, ascending; their scores). Sparse: a query of a few terms costs what
        its posting lists cost, not the corpus's size. Each document's score adds up its parts in the order
        a dense evaluation over the whole corpus would, so the scores are the same to the last bit. A
        sub-query object used in several places of the query (a word in the all-words and the all-but-one
        signals) is evaluated once; a query kept (`keep`) once for all.

        With a `game`, only that game's sections (what `Require(q, Term("game", game))` gives), each term's
        postings cut to them first and numbered among them (0 for the game's first section): every
        operation is a document's own (a document's score is the sum of its own terms' scores), so the
        game's documents come out with the same scores, in the same order, and the rest of a large corpus
        costs nothing."""
        if memo is None:
            memo = {_SIZE: self.n}
            scope = self._game_docs(game) if game is not None else None
            if game is not None and scope is None:
                return _EMPTY
            if (len(scope[2]) if scope is not None else self.n) <= _SMALL_UP_TO:
                found = self._run_small(q, game, {})
                if not found:
                    return _EMPTY
                docs = sorted(found)
                return np.array(docs, dtype=np.int64), np.array([found[d] for d in docs], dtype=np.float64)
            if game is not None:
                memo[_WITHIN] = (game, *scope)
                memo[_SIZE] = len(scope[2])
                ids, sc = self.run(q, memo)
                return scope[2][ids], sc  # the game's numbering back to the corpus's
        hit = memo.get(id(q))
        if hit is not None:
            return hit[1]
        kept = self._kept.get(id(q))
        scope = memo.get(_WITHIN)
        if kept is not None:
            out = kept[1].get(scope[0] if scope else None)
            if out is not None:
                return out
        out = self._run(q, memo)
        memo[id(q)] = (q, out)  # q kept so that its id is not reused while the memo lives
        if kept is not None:
            kept[1][scope[0] if scope else None] = out
        return out

    def best(
        self, q: Q.Query, game: str | None, limit: int, weights: np.ndarray
    ) -> tuple[int, dict[int, float]]:
        """(the number of matches, {document: score} of the best `limit`, best first): `run`'s scores times
        each document's weight (`weights`, the corpus's size), ordered as `top_of` orders them. A small
        scope's matches (`_run_small`) are weighed and ordered as Python floats (the same products), without
        making arrays of them."""
        scope = self._game_docs(game) if game is not None else None
        if game is not None and scope is None:
            return 0, {}
        if (len(scope[2]) if scope is not None else self.n) <= _SMALL_UP_TO:
            found = self._run_small(q, game, {})
            if len(found) <= _SORT_BELOW:
                docs = list(found)
                scored = zip(docs, map(operator.mul, found.values(), weights[docs].tolist()), strict=True)
                return len(found), dict(sorted(scored, key=lambda x: (-x[1], x[0]))[:limit])
            docs = sorted(found)  # (what `run` gives for it)
            ids = np.array(docs, dtype=np.int64)
            scores = np.array([found[d] for d in docs], dtype=np.float64)
        else:
            ids, scores = self.run(q, game=game)
        scores = scores * weights[ids]
        top = self.top_of(ids, scores, limit)
        return len(ids), dict(zip(top, scores[np.searchsorted(ids, top)].tolist(), strict=True))

    def _small_postings(self, game: str | None, field: str, text: str) -> dict[int, float]:
        """A term's postings in a small scope (`_run_small`): {document: score}, cut once per game and term."""
        key = (game, field, text)  # bounded: the index's games and terms (a term it lacks is not kept)
        hit = self._small.get(key)
        if hit is None:
            ids, sc = self.postings(field, text)
            if not len(ids):
                return _NO_SMALL_POSTINGS
            if game is not None:
                keep = self._games[game][0][ids]
                ids, sc = ids[keep], sc[keep]
            hit = self._small[key] = dict(zip(ids.tolist(), sc.tolist(), strict=True))
        return hit

    def _small_boosted(self, game: str | None, field: str, text: str, boost: float) -> dict[int, float]:
        """`_small_postings` times a boost, multiplied once per scope, term and boost (`_boosted`'s bound):
        one look-up a term."""
        key = (game, field, text, boost)
        hit = self._small_times.get(key)
        if hit is None:
            base = self._small_postings(game, field, text)
            if not base:
                return base  # not kept: the terms the index lacks are the judges' (unbounded)
            hit = self._small_times[key] = _dict_times(base, boost)
        return hit

    def _run_small(self, q: Q.Query, game: str | None, memo: dict) -> dict[int, float]:
        """`run` over a scope of a few hundred documents at most (a game's sections, a small corpus), with
        Python dicts {document: score}: numpy's cost per call is more than the work on so few documents.
        Each document's score adds up the same parts in the same order as `_run` (floats are the same
        doubles), so the results are the same. The dicts are shared (memo, kept results): never changed."""
        hit = memo.get(id(q))
        if hit is not None:
            return hit[1]
        kept = self._kept.get(id(q))
        if kept is not None:
            out = kept[1].get(("small", game))
            if out is not None:
                return out
        out = self._small_node(q, game, memo)
        memo[id(q)] = (q, out)
        if kept is not None:
            kept[1][("small", game)] = out
        return out

    def _small_node(self, q: Q.Query, game: str | None, memo: dict) -> dict[int, float]:
        kind = type(q)
        subs = q.subqueries if kind is Q.Or or kind is Q.And else ()
        if len(subs) > 1 and kind is Q.Or:
            parts, others = [], []
            times, term = self._small_times, Q.Term
            for t in subs:  # the term children first, then the others (`_or`'s order)
                if type(t) is term:
                    found = times.get((game, t.fieldname, t.text, t.boost))
                    if found is None:
                        found = self._small_boosted(game, t.fieldname, t.text, t.boost)
                    if found:
                        parts.append(found)
                else:
                    others.append(t)
            for c in others:
                found = self._run_small(c, game, memo)
                if found:
                    parts.append(found)
            if not parts:
                return {}
            out = parts[0]
            if len(parts) > 1:
                out = dict(out)
                get = out.get
                for part in parts[1:]:
                    for d, s in part.items():
                        out[d] = get(d, 0.0) + s
            return _dict_times(out, q.boost)
        if len(subs) > 1:  # an And
            term = Q.Term
            if all(type(c) is term for c in subs):
                # (each posting times its boost as `_small_boosted` keeps it: the same product)
                parts = [self._small_boosted(game, c.fieldname, c.text, c.boost) for c in subs]
            else:
                parts = []
                for c in subs:
                    found = self._run_small(c, game, memo)
                    if not found:
                        return {}
                    parts.append(found)
            narrowest = min(parts, key=len)
            out = {}
            for d in narrowest:
                s = 0.0
                for part in parts:
                    x = part.get(d)
                    if x is None:
                        break
                    s += x
                else:
                    out[d] = s
            return _dict_times(out, q.boost)
        if isinstance(q, Q.Term):
            return self._small_boosted(game, q.fieldname, q.text, q.boost)
        if isinstance(q, Q.Require):
            a, b = q.subqueries
            fa, fb = self._run_small(a, game, memo), self._run_small(b, game, memo)
            return _dict_times({d: s for d, s in fa.items() if d in fb}, q.boost)
        if isinstance(q, Q.ConstantScoreQuery):
            score = float(q.score)
            return dict.fromkeys(self._run_small(q.child, game, memo), score)
        if isinstance(q, Q.AndMaybe):
            a, b = q.subqueries
            fa, fb = self._run_small(a, game, memo), self._run_small(b, game, memo)
            get = fb.get
            return _dict_times({d: s + get(d, 0.0) for d, s in fa.items()}, q.boost)
        if isinstance(q, (Q.And, Q.Or)) and len(q.subqueries) <= 1:
            return self._run_small(q.subqueries[0], game, memo) if q.subqueries else {}
        if q is Q.NullQuery or isinstance(q, type(Q.NullQuery)):
            return {}
        raise TypeError(f"query type {type(q).__name__} is not evaluated")

    def keep(self, q: Q.Query) -> None:
        """Keep the query's result (per game; and its terms) once evaluated: for a query built once and used
        by many searches, which depends on the index only (a synonym entry's phrases). Bounded by what is
        kept so: the queries of the reviewed list (times the index's games), never what a judge typed."""
        self._kept.setdefault(id(q), [q, {}, None])  # the query (so that its id stays its), results, terms

    def _game_docs(self, game: str) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """A game's documents: whether each document is the game's, its number among the game's, and the
        game's documents (None for a game the index lacks, which is not kept)."""
        hit = self._games.get(game)
        if hit is None:
            ids = self.postings("game", game)[0]
            if not len(ids):
                return None
            mask = np.zeros(self.n, dtype=bool)
            mask[ids] = True
            hit = self._games[game] = (mask, np.cumsum(mask) - 1, ids)
        return hit

    def _term(self, field: str, text: str, memo: dict) -> tuple[np.ndarray, np.ndarray]:
        """A term's postings in the evaluation's scope (`run`'s game), cut once per game and term."""
        ids, sc = self.postings(field, text)
        scope = memo.get(_WITHIN)
        if scope is None or not len(ids):
            return ids, sc
        key = (scope[0], field, text)  # bounded: the index's games and terms
        hit = self._in_game.get(key)
        if hit is None:
            keep = scope[1][ids]
            hit = self._in_game[key] = (scope[2][ids[keep]], sc[keep])
        return hit

    def _boosted(self, field: str, text: str, boost: float, memo: dict) -> tuple[np.ndarray, np.ndarray]:
        """`_term`'s postings times a boost, multiplied once per scope, term and boost (bounded: the index's
        terms and games, and the query's fixed weights)."""
        ids, sc = self._term(field, text, memo)
        if boost == 1.0 or not len(ids):
            return ids, sc
        scope = memo.get(_WITHIN)
        key = (scope[0] if scope else None, field, text, boost)
        hit = self._times.get(key)
        if hit is None:
            hit = self._times[key] = (ids, sc * boost)
        return hit

    @staticmethod
    def _union(
        parts: list[tuple[np.ndarray, np.ndarray]], n: int, memo: dict | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """The documents (numbered under `n`) of any part, each scoring the sum of its parts' scores (added
        in the parts' order). Counted over the corpus, the union's documents are kept in the `memo` by its
        parts' documents (`_or`'s coordination, an Or of the same results at constant scores, reads them)."""
        parts = [p for p in parts if len(p[0])]
        if not parts:
            return _EMPTY
        if len(parts) == 1:
            return parts[0]
        ids = np.concatenate([p[0] for p in parts])
        weights = np.concatenate([p[1] for p in parts])
        if n <= _DENSE_UP_TO or len(ids) * 64 > n:  # count over the corpus (cheaper than sorting)
            dense = np.bincount(ids, weights=weights, minlength=n)
            if weights.min() > 0:  # (BM25F's and the signals' scores are): in the union iff its sum is > 0
                present = dense > 0
                big = max(parts, key=_ids_len)[0]
                # As many members as the largest part has documents: they are its documents (7 unions in 10
                # here, a word's other forms or a signal's narrower results within another's). Counting them
                # costs less than listing them.
                u = big if np.count_nonzero(present) == len(big) else present.nonzero()[0]
            else:
                present = np.zeros(n, dtype=bool)
                present[ids] = True
                u = present.nonzero()[0]
            if memo is not None:  # (the parts kept with it, so that their ids stay theirs)
                memo[("union", *(id(p[0]) for p in parts))] = (parts, ids, u)
            return u, dense.take(u)
        u, inverse = np.unique(ids, return_inverse=True)
        return u, np.bincount(inverse, weights=weights, minlength=len(u))

    def _run(self, q: Q.Query, memo: dict) -> tuple[np.ndarray, np.ndarray]:
        kind = type(q)
        if (kind is Q.Or or kind is Q.And) and len(q.subqueries) > 1:  # the most frequent nodes, first
            return self._or(q, memo) if kind is Q.Or else self._and(q, memo)
        if isinstance(q, Q.Term):
            return self._boosted(q.fieldname, q.text, q.boost, memo)
        if isinstance(q, Q.Require):
            a, b = q.subqueries
            ia, sa = self.run(a, memo)
            ib, _ = self.run(b, memo)
            keep = _members(ia, ib, memo[_SIZE])
            return ia[keep], _times(sa[keep], q.boost)
        if isinstance(q, Q.ConstantScoreQuery):
            ids, _ = self.run(q.child, memo)
            return ids, np.full(len(ids), float(q.score))
        if isinstance(q, Q.AndMaybe):
            a, b = q.subqueries
            ia, sa = self.run(a, memo)
            if type(b) is Q.Or and len(b.subqueries) > 1 and all(type(t) is Q.Term for t in b.subqueries):
                return ia, _times(sa + self._or_at(b, ia, memo), q.boost)
            ib, sb = self.run(b, memo)
            return ia, _times(sa + _scores_at(ib, sb, ia, memo[_SIZE]), q.boost)
        if isinstance(q, (Q.And, Q.Or)) and len(q.subqueries) <= 1:
            # Whoosh's own behaviour: a compound of one query is that query (its boost is not applied).
            if not q.subqueries:
                return _EMPTY
            return self.run(q.subqueries[0], memo)
        if isinstance(q, Q.Or):
            return self._or(q, memo)
        if isinstance(q, Q.And):
            return self._and(q, memo)
        if q is Q.NullQuery or isinstance(q, type(Q.NullQuery)):
            return _EMPTY
        raise TypeError(f"query type {type(q).__name__} is not evaluated")

    def _or(self, q: Q.Or, memo: dict) -> tuple[np.ndarray, np.ndarray]:
        """An Or of two queries or more."""
        subs = q.subqueries
        if type(subs[0]) is Q.ConstantScoreQuery and all(type(c) is Q.ConstantScoreQuery for c in subs):
            score = float(subs[0].score)
            if (
                all(float(c.score) == score for c in subs)
                and score > 0
                and (score * 1024).is_integer()
                and score * 1024 * len(subs) < 2**40
            ):
                out = self._constant_or(q, score, memo)
                if out is not None:
                    return out
        # the term children first, then the others (the order a dense evaluation adds them in)
        parts = []
        for t in q.subqueries:
            if type(t) is Q.Term:
                ids, sc = self._boosted(t.fieldname, t.text, t.boost, memo)
                if len(ids):  # (an empty part adds nothing)
                    parts.append((ids, sc))
        parts += [self.run(c, memo) for c in q.subqueries if type(c) is not Q.Term]
        ids, sc = self._union(parts, memo[_SIZE], memo)
        return ids, _times(sc, q.boost)

    def _constant_or(self, q: Q.Or, score: float, memo: dict) -> tuple[np.ndarray, np.ndarray] | None:
        """An Or of queries at one constant score (the coordination signal: each word found counts `score`),
        when that score is a multiple of 1/1024: each document's sum, `score` added once for each part it is
        in, is then exactly its count of parts times `score` (every partial sum is such a multiple, well under
        2**52 of them). The parts' documents are counted once, and the union's documents are those of the
        union of the same results counted before (the any-word signal), when there is one. None: not so."""
        n = memo[_SIZE]
        results = [r for r in (self.run(c.child, memo)[0] for c in q.subqueries) if len(r)]
        if not results:
            return _EMPTY
        if len(results) == 1:
            return results[0], _times(np.full(len(results[0]), score), q.boost)
        hit = memo.get(("union", *map(id, results)))
        if hit is not None:
            ids, u = hit[1], hit[2]
        else:
            ids, u = np.concatenate(results), None
            if not (n <= _DENSE_UP_TO or len(ids) * 64 > n):
                return None
        counts = np.bincount(ids, minlength=n)
        if u is None:
            u = (counts > 0).nonzero()[0]
        return u, _times(counts.take(u) * score, q.boost)

    def _or_at(self, q: Q.Or, at: np.ndarray, memo: dict) -> np.ndarray:
        """The scores of an Or of terms at the documents `at` (0 where it does not match): what `_or` gives
        there, each document's parts added in the same order, without counting the union over the corpus
        (the character pairs that only rank an AndMaybe's matches)."""
        parts = []
        for t in q.subqueries:
            ids, sc = self._boosted(t.fieldname, t.text, t.boost, memo)  # (the products kept, the same)
            if len(ids):
                parts.append((ids, sc))
        if not parts or not len(at):
            return np.zeros(len(at))
        ids = np.concatenate([p[0] for p in parts])
        weights = np.concatenate([p[1] for p in parts])
        if memo[_SIZE] <= _DENSE_UP_TO:  # summed over the corpus, then read at `at` (the same sums)
            return _times(np.bincount(ids, weights=weights, minlength=memo[_SIZE]).take(at), q.boost)
        place = np.full(memo[_SIZE], -1, dtype=np.int64)  # each document's place in `at`
        place[at] = np.arange(len(at))
        where = place[ids]
        keep = where >= 0
        return _times(np.bincount(where[keep], weights=weights[keep], minlength=len(at)), q.boost)

    def _and(self, q: Q.And, memo: dict) -> tuple[np.ndarray, np.ndarray]:
        """An And of two queries or more."""
        if all(isinstance(c, Q.Term) for c in q.subqueries):
            parts = [(*self._term(c.fieldname, c.text, memo), c.boost) for c in q.subqueries]
        else:
            parts = []
            for c in q.subqueries:  # an empty child empties the whole: the rest need not be run
                ids, sc = self.run(c, memo)
                if not len(ids):
                    return _EMPTY
                parts.append((ids, sc, 1.0))
        common = min((p[0] for p in parts), key=len)
        if not len(common):
            return _EMPTY
        for ids, _, _ in sorted(parts, key=lambda p: len(p[0])):
            if not len(common):
                return _EMPTY
            if ids is not common:
                if len(common) * _SEARCH_BELOW < len(ids):
                    common = common[_members(common, ids, memo[_SIZE])]
                else:
                    common = common[self._spread(ids, None, memo)[common]]
        scores = np.zeros(len(common))
        for ids, sc, boost in parts:
            if ids is common:  # the part no other narrowed
                at = sc
            elif len(common) * _SEARCH_BELOW < len(ids):
                at = _scores_at(ids, sc, common, memo[_SIZE])
            else:
                at = self._spread(ids, sc, memo)[common]
            scores += at * boost if boost != 1.0 else at
        return common, _times(scores, q.boost)

    def _spread(self, ids: np.ndarray, scores: np.ndarray | None, memo: dict) -> np.ndarray:
        """A result over the whole corpus: whether each document is in it (`scores` None), or its score (0
        where absent). Made once a query for each result (a word's result is looked up by the all-words
        signal and by each all-but-one signal); the memo keeps the arrays, so that their ids stay theirs."""
        key = ("spread", id(ids), id(scores))
        hit = memo.get(key)
        if hit is None:
            if scores is None:
                out = np.zeros(memo[_SIZE], dtype=bool)
                out[ids] = True
            else:
                out = np.zeros(memo[_SIZE])
                out[ids] = scores
            hit = memo[key] = (ids, scores, out)
        return hit[2]

    def terms_matched(
        self,
        q: Q.Query,
        docnums: list[int],
        fields: set[str],
        few: frozenset[str] = frozenset(),
        game: str | None = None,
    ) -> set[tuple[str, str]]:
        """The query's terms (in `fields`) that any of the documents holds (what the snippets mark), in a
        few array operations for all the terms at once. For a field in `few`, one such term at most (the
        first found): the caller asks only whether there is one. Documents of one `game` are looked up in
        the game's postings (`run`'s scope)."""
        leaves = self._leaves(q, fields)
        if not docnums or not leaves:
            return set()
        scope = self._game_docs(game) if game else None
        out: set[tuple[str, str]] = set()
        found_few: set[str] = set()
        if (len(scope[2]) if scope is not None else self.n) <= _SMALL_UP_TO:  # `_run_small`'s postings
            small, scope_game = self._small, game or None
            for key in leaves:
                if key[0] in found_few:
                    continue
                held = small.get((scope_game, *key))
                if held is None:
                    held = self._small_postings(scope_game, *key)
                if held and not held.keys().isdisjoint(docnums):
                    out.add(key)
                    if key[0] in few:
                        found_few.add(key[0])
            return out
        memo: dict = {_SIZE: self.n}
        if scope is not None:
            memo = {_WITHIN: (game, *scope), _SIZE: len(scope[2])}
            docnums = scope[1][docnums]  # the game's numbering
        wanted = np.zeros(memo[_SIZE], dtype=bool)
        wanted[docnums] = True
        keys, lists = [], []
        for key in leaves:
            if key[0] in found_few:
                continue  # these count only as a whole (one found is enough): the first found ends the search
            ids = self._term(*key, memo)[0]
            if not len(ids):
                continue
            if key[0] in few:
                if wanted[ids].any():
                    out.add(key)
                    found_few.add(key[0])
                continue
            keys.append(key)
            lists.append(ids)
        if keys:
            held = wanted[np.concatenate(lists)]
            starts = np.fromiter(accumulate([len(x) for x in lists[:-1]], initial=0), np.int64, len(lists))
            found = np.logical_or.reduceat(held, starts)
            out.update(keys[i] for i in np.flatnonzero(found))
        return out

    def _leaves(self, q: Q.Query, fields: set[str] | None) -> dict[tuple[str, str], None]:
        """The query's terms (those in `fields`; all for None), each once. A sub-query shared by several
        signals is walked once, a kept one (`keep`) once for all."""
        leaves: dict[tuple[str, str], None] = {}
        stack = [q]
        walked: set[int] = set()
        term, compound = Q.Term, (Q.And, Q.Or, Q.Require, Q.AndMaybe)
        while stack:
            node = stack.pop()
            kind = type(node)
            if kind is term:
                if fields is None or node.fieldname in fields:
                    leaves[(node.fieldname, node.text)] = None
                continue
            if id(node) in walked:
                continue
            walked.add(id(node))
            kept = self._kept.get(id(node))
            if kept is not None and node is not q:
                if kept[2] is None:
                    kept[2] = list(self._leaves(node, None))
                leaves.update((key, None) for key in kept[2] if fields is None or key[0] in fields)
            elif kind in compound:
                stack.extend(node.subqueries)
            elif kind is Q.ConstantScoreQuery:
                stack.append(node.child)
        return leaves

    def top(self, scores: np.ndarray, mask: np.ndarray, limit: int) -> list[int]:
        """The best `limit` documents of a dense evaluation (`evaluate`)."""
        idx = np.flatnonzero(mask)
        return self.top_of(idx, scores[idx], limit)

    @staticmethod
    def top_of(ids: np.ndarray, scores: np.ndarray, limit: int) -> list[int]:
        """The best `limit` documents: higher score first, then lower document number (as Whoosh orders)."""
        if len(ids) <= _SORT_BELOW:  # (a few: sorted as Python floats, the same order)
            order = sorted(zip(ids.tolist(), scores.tolist(), strict=True), key=lambda x: (-x[1], x[0]))
            return [d for d, _ in order[:limit]]
        if len(ids) > _NARROW_FROM and len(ids) > 16 * limit:
            # First the few at or above a bound that at least `limit` reach (each try one comparison over
            # the matches; a full partition of thousands cost more): the best `limit` and every tie at the
            # cut are among them, so what follows orders the same documents.
            keep = _at_least(scores, limit)
            ids, scores = ids[keep], scores[keep]
            if len(ids) <= _SORT_BELOW:
                order = sorted(zip(ids.tolist(), scores.tolist(), strict=True), key=lambda x: (-x[1], x[0]))
                return [d for d, _ in order[:limit]]
        if len(ids) > limit:
            sel = np.argpartition(-scores, limit - 1)[:limit]
            keep = scores >= scores[sel].min()  # keep every tie at the cut, then order
            ids, scores = ids[keep], scores[keep]
        order = np.lexsort((ids, -scores))
        return [int(d) for d in ids[order][:limit]]


# The fields whose matched terms the snippets mark (`SearchIndex._surfaces`; character pairs as the needle).
_MARKED_FIELDS = {"words", "title", "reading", "syn", "grams"}
_EMPTY = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64))


def _ids_len(part: tuple[np.ndarray, np.ndarray]) -> int:
    return len(part[0])


def _times(scores: np.ndarray, boost: float) -> np.ndarray:
    """Scores times a boost (the same array for 1: x × 1 is x; arrays of results are never changed)."""
    return scores if boost == 1.0 else scores * boost


# Looking documents up in a result: by a binary search each when they are far fewer than the result's
# documents, otherwise through an array the corpus's size (filling and reading one costs a few microseconds;
# a binary search per document, a few thousand of them, costs far more).
_SEARCH_BELOW = 16
# Up to this many sections, a union is counted over the whole corpus however few its documents (sorting
# them, `np.unique`, costs more until the corpus is larger).
_DENSE_UP_TO = 20_000


# Up to this many documents in a search's scope (a game's sections; the whole of a small corpus), the query
# is evaluated with Python dicts (`_Evaluator._run_small`): numpy's cost per call is more than the work.
_SMALL_UP_TO = 400


# Up to this many matches, the best are sorted in Python (`_Evaluator.top_of`).
_SORT_BELOW = 64
# From this many matches, the best are first narrowed down by a bound on their score (`_at_least`).
_NARROW_FROM = 256


def _at_least(scores: np.ndarray, limit: int) -> np.ndarray:
    """A mask of the scores at or above a bound that at least `limit` of them reach, so that it holds the best
    `limit` and every score equal to the `limit`-th best: the `limit`-th best of every eighth score (those
    are scores too, so at least `limit` reach it), which about eight times `limit` of them reach."""
    sample = scores[::8]
    bound = np.partition(sample, len(sample) - limit)[len(sample) - limit]
    return scores >= bound


def _dict_times(found: dict[int, float], boost: float) -> dict[int, float]:
    """`_times` for a small scope's result (the same dict for 1)."""
    return found if boost == 1.0 else {d: s * boost for d, s in found.items()}


def _members(ids: np.ndarray, of: np.ndarray, n: int) -> np.ndarray:
    """Which of the (sorted) `ids` are in the (sorted) array `of` (document numbers under `n`): booleans."""
    if not len(of):
        return np.zeros(len(ids), dtype=bool)
    if len(ids) * _SEARCH_BELOW < len(of):
        pos = np.searchsorted(of, ids)
        pos[pos == len(of)] = 0
        return of[pos] == ids
    mask = np.zeros(n, dtype=bool)
    mask[of] = True
    return mask[ids]


def _scores_at(ids: np.ndarray, scores: np.ndarray, at: np.ndarray, n: int) -> np.ndarray:
    """The scores of the documents `at` in a sparse result (0 where absent; document numbers under `n`)."""
    if not len(ids):
        return np.zeros(len(at))
    if len(at) * _SEARCH_BELOW < len(ids):
        pos = np.searchsorted(ids, at)
        pos[pos == len(ids)] = 0
        return np.where(ids[pos] == at, scores[pos], 0.0)
    spread = np.zeros(n)
    spread[ids] = scores
    return spread[at]


# --- searching -----------------------------------------------------------------------------------------


def _span_end(span: tuple[int, int]) -> int:
    return span[1]


def _best_window(spans: list[tuple[int, int]], width: int) -> int:
    """The first mark's start (spans in order of their start) from which the window `[start - 20, start +
    width - 20)` holds the most marks' starts: the first such, as `max` gives it. Both ends move forward only
    (the marks before the window, those before its end), so it is one pass, not two binary searches a mark."""
    n = len(spans)
    best, most, lo, hi = spans[0][0], -1, 0, 0
    for a, _ in spans:
        while spans[lo][0] < a - 20:  # (bisect_left(starts, a - 20))
            lo += 1
        while hi < n and spans[hi][0] < a + width - 20:  # (bisect_left(starts, a + width - 20))
            hi += 1
        if hi - lo > most:
            best, most = a, hi - lo
    return best


def _escape(text: str) -> str:
    """`markupsafe.escape`'s text (the same five characters, the same entities), without making a Markup."""
    if "&" in text or "<" in text or ">" in text or '"' in text or "'" in text:
        text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        return text.replace('"', "&#34;").replace("'", "&#39;")
    return text


_GAP = frozenset("・･ー")  # what a needle skips between its characters (with white space)
_GAP_RUNS = re.compile(r"[・･ー\s]+")  # (`\s` is `str.isspace`'s white space: both are Py_UNICODE_ISSPACE)


class _Gapless:
    """A folded text without what a needle skips (`_GAP`, white space), and the way back to the text's
    places: a needle's match is then one `str.find` in C, not a Python step per place its first character
    is found (made once per section, on first use)."""

    __slots__ = ("text", "keys", "removed")

    def __init__(self, text: str):
        self.text = _GAP_RUNS.sub("", text)
        # each run of gaps: where it sits in the gapless text, and how many characters precede it removed
        self.keys: list[int] = []
        self.removed: list[int] = [0]
        for m in _GAP_RUNS.finditer(text):
            self.keys.append(m.start() - self.removed[-1])
            self.removed.append(self.removed[-1] + m.end() - m.start())

    def place(self, at: int) -> int:
        """The text's place of the gapless text's character `at`."""
        return at + self.removed[bisect.bisect_right(self.keys, at)]


class _Marker:
    """Where the snippets mark a query's matched terms: the spans `re.finditer` would give for the regular
    expression `a|b|…` of the branches, in their order (a surface as written; a needle, its characters with
    any middle dots, long-vowel marks and spaces between them), without compiling one for each query
    (compiling took longer than the rest of a snippet). As the expression does, from left to right: at each
    place the first branch that matches there, then on from its end. A needle's characters are squashed
    (`textnorm.squash`), none of them a gap, so each match is found without going back."""

    def __init__(self, branches: list[tuple[str, bool]]):
        self.branches = branches  # (text, whether it is a needle)

    def spans(self, text: str, gapless: _Gapless | None = None) -> list[tuple[int, int]]:
        """`gapless`, the text's `_Gapless` when the caller keeps one."""
        found: dict[int, tuple[int, int]] = {}  # start → (the first branch that matches there, its end)
        for rank, (branch, needle) in enumerate(self.branches):
            if not branch:
                continue
            if not needle or len(branch) == 1:  # (a needle of one character is that character)
                at = text.find(branch)
                while at >= 0:
                    if at not in found:  # (a branch before this one matches there: it wins)
                        found[at] = (rank, at + len(branch))
                    at = text.find(branch, at + 1)
                continue
            if gapless is not None and not _GAP_RUNS.search(branch):
                # The needle's characters, gaps skipped between them: the needle in the gapless text. Its
                # match starts at its first character's place and ends after its last one's.
                flat, last = gapless.text, len(branch) - 1
                at = flat.find(branch)
                while at >= 0:
                    start = gapless.place(at)
                    if start not in found:
                        found[start] = (rank, gapless.place(at + last) + 1)
                    at = flat.find(branch, at + 1)
                continue
            first, second = branch[0], branch[1:2]
            at = text.find(first)
            while at >= 0:
                after = text[at + 1 : at + 2]  # (most places fail here: not the second character, no gap)
                if at not in found and (after == second or after in _GAP or after.isspace()):
                    end = self._needle_end(text, at, branch)
                    if end > at:
                        found[at] = (rank, end)
                at = text.find(first, at + 1)
        out, pos = [], 0
        for at in sorted(found):
            if at >= pos:
                end = found[at][1]
                out.append((at, end))
                pos = end
        return out

    @staticmethod
    def _needle_end(text: str, at: int, needle: str) -> int:
        """Where the needle's match that starts at `at` ends (`at` when none does)."""
        i, n = at + 1, len(text)
        for ch in needle[1:]:
            while i < n and (text[i] in _GAP or text[i].isspace()):
                i += 1
            if i >= n or text[i] != ch:
                return at
            i += 1
        return i


@dataclass
class QueryWord:
    """One word of a judge's query, analysed once: what it is matched by."""

    word: Word
    kana: bool  # typed in kana (its reading is matched too)
    chunk: str = ""  # the run of kana it is, when the whole run is matched as one word
    # the texts' phrases for it when it is a judge's word of rules_corpus/synonyms.yaml (出禁: 出場停止)
    phrases: tuple[Q.Query, ...] = ()


class SearchIndex:
    """An opened index: `search()` is safe to call from many threads."""

    CACHE_SIZE = 2048  # recent answers kept (a few MB at most)

    def __init__(self, path: str | Path, synonyms: list[tuple[list[str], list[str]]] | None = None):
        self.path = Path(path)
        self.ix = whoosh_index.open_dir(str(self.path))
        lex = json.loads((self.path / "lexicon.json").read_text(encoding="utf-8"))
        self.lexicon: dict[str, dict[str, list[str]]] = lex
        self.readings = set(lex["reading"])
        self.max_reading = max((len(r) for r in self.readings), default=1)
        self._sorted_readings = sorted(self.readings)
        lengths: dict[str, set[int]] = {}  # the lengths (2+) of the readings starting with each character
        for r in self.readings:
            if len(r) >= 2:
                lengths.setdefault(r[0], set()).add(len(r))
        self._reading_lengths = {ch: sorted(ls, reverse=True) for ch, ls in lengths.items()}
        self.synonyms = synonyms or []
        self.analyzer = analyzer()
        self._analysed: dict[str, list[Word]] = {}
        self._index_synonyms()
        self._index_spellings()
        # the readings of the corpus's katakana words (loan words), for a loan word typed in hiragana
        self._loan_readings = frozenset(
            r
            for r, surfaces in lex["reading"].items()
            if len(r) >= 2 and any(_katakana_word(fold(x), 2) for x in surfaces)
        )
        self._evaluator = _Evaluator(self.ix, lex.get("terms"))
        # Each section folded once, for the snippets.
        self._folded = [fold(f["text"] or f["title_text"]) for f in self._evaluator.stored]
        self._gapless: dict[int, _Gapless] = {}  # each section's folded text without gaps (`_Gapless`)
        # A section with no text of its own (a heading over its subsections) carries no answer: it ranks lower.
        self._section_weight = np.array(
            [1.0 if (f["text"] or "").strip() else WEIGHT["container"] for f in self._evaluator.stored]
        )
        self._cache: OrderedDict[tuple, Results] = OrderedDict()
        self._cache_lock = threading.Lock()

    def _words(self, text: str) -> list[Word]:
        """The analysis of a short text, kept (synonym keys and phrases are analysed once)."""
        hit = self._analysed.get(text)
        if hit is None:
            hit = self._analysed[text] = self.analyzer.words(text)
        return hit

    def _index_synonyms(self) -> None:
        """The synonym list's keys, indexed: by their squashed spelling and by their first word's form."""
        self._synonym_by_key: dict[str, list[int]] = {}
        self._synonym_by_lemma: dict[str, list[tuple[list[str], int]]] = {}
        self._synonym_by_reading: dict[str, list[int]] = {}
        self._phrases: list[list[list[Word]]] = []
        self._phrase_built: dict[tuple[int, bool], list[Q.Query]] = {}  # (entry, one word): `_phrase_queries`
        self._entry_keys: list[set[str]] = []  # what one query word may be to be an entry's key
        for i, (keys, means) in enumerate(self.synonyms):
            self._phrases.append([self._words(m) for m in means])
            self._entry_keys.append(set())
            for k in keys:
                key = squash(k)
                if key:
                    self._synonym_by_key.setdefault(key, []).append(i)
                    self._entry_keys[i].add(key)
                lemmas = [w.forms[0] for w in self._words(k)]
                if lemmas:
                    self._synonym_by_lemma.setdefault(lemmas[0], []).append((lemmas, i))
                if len(lemmas) == 1:
                    self._entry_keys[i].add(lemmas[0])
                # What each key sounds like, so that a query typed in kana (しっかく) finds the entry (失格).
                reading = "".join(w.reading for w in self._words(k))
                if len(reading) >= 3:
                    self._synonym_by_reading.setdefault(reading, []).append(i)
                    self._entry_keys[i].add(reading)
        self._max_key = max((len(k) for k in self._synonym_by_key), default=0)
        # the lengths of the keys beginning with each character, shortest first (the only slices to try)
        lengths: dict[str, set[int]] = {}
        for key in self._synonym_by_key:
            lengths.setdefault(key[0], set()).add(len(key))
        self._key_lengths = {ch: sorted(ls) for ch, ls in lengths.items()}
        self._reading_rank = {r: i for i, r in enumerate(self._synonym_by_reading)}
        reading_lengths: dict[str, set[int]] = {}
        for r in self._synonym_by_reading:
            reading_lengths.setdefault(r[0], set()).add(len(r))
        self._reading_key_lengths = {ch: sorted(ls) for ch, ls in reading_lengths.items()}

    def _index_spellings(self) -> None:
        """What loose spellings may stand for (`spelling_maps`, kept in the lexicon at build time)."""
        maps = self.lexicon.get("spellings") or spelling_maps(self.readings, self.lexicon["words"])
        self._skeletons = maps["skeletons"]
        self._skeleton_deletes = maps["deletes"]
        self._max_skeleton = max((len(k) for k in self._skeletons), default=1)
        self._sorted_skeletons = sorted(self._skeletons)
        self._latin = maps["latin"]
        self._letters = maps["letters"]
        self._clips = maps.get("clips", {})
        self._kanji_readings = {ch: frozenset(rs) for ch, rs in maps.get("kanji_readings", {}).items()}
        self._kanji_masks = maps.get("kanji_masks", {})

    # query building

    def analyse(self, text: str) -> list[QueryWord]:
        """The query's content words, analysed once (a run of kana is also kept whole)."""
        return self._analyse(text)[0]

    def _analyse(self, text: str) -> tuple[list[QueryWord], list[Word] | None, str]:
        """`analyse`, SudachiPy's words of the whole text when the text is one chunk (None otherwise), so
        that the word pairs need not cut it again, and the parts of the text that hold the query's words
        (without the question and courtesy parts: their character pairs are no part of an answer)."""
        out: list[QueryWord] = []
        content: list[str] = []
        chunks = []
        for c in _CHUNK_BREAK.split(text):
            # SudachiPy may read a run of kana wrongly (しーるど|って, ありすそふ|と|は): the question it ends
            # with, as typed, is cut from it first
            m = _KANA_QUESTION_TAIL[0].match(c) or _KANA_QUESTION_TAIL[1].match(c)
            for part in m.groups() if m else [c] if c else []:
                # a katakana word with hiragana after it (スコアキーパいないと): two parts, so that the
                # katakana word is matched, spelling and all, as a word of its own
                k = _KATAKANA_THEN_HIRAGANA.match(part)
                for piece in k.groups() if k else [part]:
                    chunks.extend(x for y in self._loan_words_apart(piece) for x in self._readings_apart(y))
        whole_text = None
        for chunk in chunks:
            counted = _KANA_COUNT_QUESTION.fullmatch(to_katakana(chunk)) if is_kana(chunk) else None
            if counted:  # なんてん, なんにん: 何点, 何人 typed in kana, the counter asked for (it ranks only)
                counter = _COUNTERS[counted.group(1)]
                out.extend(
                    QueryWord(dataclasses.replace(x, suffix=True), kana=False)
                    for x in self.analyzer.words(counter)
                )
                content.append(counter)
                continue
            analysed = self.analyzer.words(chunk)
            if len(chunks) == 1 and chunk == text:
                whole_text = analysed  # the text as typed, question and all (its word pairs)
            if is_kana(chunk):
                cut = _without_question_tail(chunk, analysed)
                if cut != chunk:
                    chunk, analysed = cut, self.analyzer.words(cut)
            words = [
                x for w in analysed if w.forms[0] not in _QUERY_STOP for x in self._without_question_word(w)
            ]
            if is_kana(chunk) and not words and (analysed or self._only_particles(chunk)):
                continue  # only light, question or courtesy words (すみません, なに), or particles (とは)
            if words or is_kana(chunk):
                content.append(chunk)
            if is_kana(chunk):
                k = fold(to_katakana(chunk))
                whole = Word(surface=chunk, forms=(k,), reading=k, parts=tuple(w.forms[0] for w in words))
                whole.synonyms = tuple(g for w in words for g in w.synonyms) if len(words) == 1 else ()
                out.append(QueryWord(whole, kana=True, chunk=chunk))
            else:
                out.extend(self._reading_typos(chunk, words))
        return out[:24], whole_text, " ".join(content)

    def _reading_typos(self, chunk: str, words: list[Word]) -> list[QueryWord]:
        """The query words of a chunk, where two or three neighbouring words of kanji, side by side as typed,
        that make no word of the corpus and are not all its words (SudachiPy cuts a typo into what it
        knows: 観|選者, 権|理) are the corpus's word of two to four kanji with one kanji wrong, of the same
        reading, as a phone's kana-to-kanji conversion picks it (観戦者, 権利): the pieces are then one word of
        the query, with that word among its alternatives (`_same_reading`), at the spelling weight. A single
        dictionary word is left as it is (一節 is not 一切: the judge may mean the word typed)."""
        out: list[QueryWord] = []
        known = self.lexicon["words"]
        i = 0
        while i < len(words):
            for n in (3, 2):
                window = words[i : i + n]
                if len(window) < n:
                    continue
                s = "".join(w.surface for w in window)
                if not _KANJI_WORD.fullmatch(s) or s in known or s not in chunk:
                    continue
                if all(any(f in known for f in w.forms) for w in window):
                    continue  # correct words side by side (出場 停止)
                alts = self._same_reading(s)
                if not alts:
                    continue
                merged = Word(
                    surface=s,
                    forms=(s,),
                    reading="".join(w.reading for w in window),
                    parts=tuple(w.forms[0] for w in window),
                )
                out.append(QueryWord(merged, kana=False, phrases=tuple(alts)))
                i += n
                break
            else:
                out.append(QueryWord(words[i], kana=is_kana(words[i].surface)))
                i += 1
        return out

    def _same_reading(self, s: str) -> list[Q.Query]:
        """The corpus's words (or two neighbouring words that make one) that a kanji spelling the corpus lacks
        may stand for: the same length, one kanji other, and that kanji and the typed one read alike in the
        corpus's words (`kanji_readings`; exactly: 同 ドウ is not 統 トウ). At most three;
        each weighs as one word at the spelling weight, in the text or the title."""
        found: list[str] = []
        readings = self._kanji_readings
        typed = [readings.get(ch, frozenset()) for ch in s]
        for i in range(len(s)):
            if not typed[i]:
                continue
            for term in self._kanji_masks.get(s[:i] + "?" + s[i + 1 :], ()):
                word = term.partition(":")[2].replace("|", "")
                if typed[i] & readings.get(word[i], frozenset()) and term not in found:
                    found.append(term)
        if not 0 < len(found) <= 3:
            return []
        out: list[Q.Query] = []
        for term in found:
            field, _, text = term.partition(":")
            both = [
                Q.Or([Q.Term("words", x), Q.Term("title", x, boost=FIELD_BOOST["title"])])
                for x in text.split("|")
            ]
            out.append(_weighted(Q.And(both) if len(both) > 1 else both[0], WEIGHT["fuzzy"] / len(both)))
        return out

    def _loan_words_apart(self, chunk: str) -> list[str]:
        """A loan word typed in hiragana beside other characters (どらふと中に): its run of hiragana starts
        with the reading of a katakana word of the corpus (three characters or more, the longest), which
        SudachiPy would cut into unrelated words (どら|ふと); that word is a part of its own."""
        if is_kana(chunk):
            return [chunk]
        for m in _HIRAGANA_RUN.finditer(chunk):
            run = m.group()
            spoken = to_katakana(run)  # (a hiragana run's katakana is folded already)
            # at the run's start, or after a particle that begins it (大会のるーる)
            for start in (0, 1) if run[0] in _PARTICLE_CHARS else (0,):
                for end in range(min(len(run), start + self.max_reading), start + 2, -1):
                    if spoken[start:end] in self._loan_readings:
                        a, b = m.start() + start, m.start() + end
                        return [x for x in (chunk[:a], chunk[a:b]) if x] + self._loan_words_apart(chunk[b:])
        return [chunk] if chunk else []

    def _readings_apart(self, chunk: str) -> list[str]:
        """A word typed in hiragana that SudachiPy misreads (相手がこうちく: こう|ちく; けいこくした): a run of
        hiragana that starts (or starts after one particle; after a kanji only after one, else it is
        okurigana) with the reading of one of the corpus's words, three characters or more, the longest, is a
        part of its own (then matched by reading, as a run of kana is), unless SudachiPy reads the corpus's
        word there, a word across its edge (のぞき見), or only light words and particles there (している is not
        指定 + る). A run of kana on its own is cut so only before grammar (けいこく|した), not before a word."""
        for m in _HIRAGANA_RUN.finditer(chunk):
            run, at = m.group(), m.start()
            after_kanji = at > 0 and bool(_KANJI_RE.match(chunk[at - 1]))
            starts = (1,) if after_kanji else (0, 1)
            spoken = to_katakana(run)
            for start in starts:
                if start and run[0] not in _PARTICLE_CHARS:
                    continue
                end = next(
                    (
                        e
                        for e in range(min(len(run), start + self.max_reading), start + 2, -1)
                        if spoken[start:e] in self.readings
                    ),
                    0,
                )
                if not end:
                    continue
                a, b = at + start, at + end
                if a == 0 and b == len(chunk):
                    return [chunk]
                if not self._misread(chunk, a, b):
                    break
                if is_kana(chunk) and (a > 0 or not self._grammar(chunk[b:])):
                    break  # a run of kana is cut only before grammar (けいこく|した), not before a word
                return [x for x in (chunk[:a], chunk[a:b]) if x] + self._readings_apart(chunk[b:])
        return [chunk] if chunk else []

    def _grammar(self, kana: str) -> bool:
        """Whether SudachiPy reads a short run of kana as particles, auxiliaries and light words only (した,
        について), and it holds no long-vowel mark (かーど is a word SudachiPy does not read)."""
        return "ー" not in kana and all(
            not is_content or form in _QUERY_STOP for _, _, form, is_content in self.analyzer.morphemes(kana)
        )

    def _misread(self, chunk: str, a: int, b: int) -> bool:
        """Whether SudachiPy reads chunk[a:b] (a corpus reading typed in hiragana) as no word of the corpus
        and not as grammar only: some content word of its overlaps it, none of them is the corpus's."""
        content = False
        words = self.lexicon["words"]
        for begin, end, form, is_content in self.analyzer.morphemes(chunk):
            if end <= a or begin >= b or not is_content or form in _QUERY_STOP:
                continue
            if begin < a or end > b:
                return False  # a word across the run's edge (のぞき見): SudachiPy reads the run otherwise
            if a <= begin and end <= b and end - begin >= 2 and form in words:
                return False
            content = True
        return content

    def _only_particles(self, chunk: str) -> bool:
        """A short run of hiragana that SudachiPy reads as particles only and that is no reading of the
        corpus (とは, には, のは after a word): it adds nothing to the query."""
        return (
            len(chunk) <= 3
            and all("\u3041" <= ch <= "\u309f" for ch in chunk)
            and fold(to_katakana(chunk)) not in self.readings
        )

    def _without_question_word(self, w: Word) -> list[Word]:
        """A word that starts with a question word (何枚, 何年, 何点): the rest of it (枚, 年, 点), which the text
        has where it gives the answer (５枚, 3 年)."""
        if len(w.parts) > 1 and w.parts[0] in _QUERY_STOP and fold(w.surface).startswith(w.parts[0]):
            rest = [
                x for x in self.analyzer.words(w.surface[len(w.parts[0]) :]) if x.forms[0] not in _QUERY_STOP
            ]
            # a counter asked for: it ranks, it is not required (a copy: the analyzer's words are shared)
            return [dataclasses.replace(x, suffix=True) for x in rest]
        return [w]

    def _spellings(self, k: str) -> list[str]:
        """Corpus readings a katakana spelling may stand for when the corpus does not have it as written."""
        if k in self.readings or len(k) < 3:
            return []
        sk = kana_skeleton(k)
        found = list(self._skeletons.get(sk, ()))
        if len(sk) >= 4:
            for cand in [sk, *deletions(sk)]:
                for near in self._skeleton_deletes.get(cand, ()):
                    found.extend(self._skeletons[near])
                if cand != sk:
                    found.extend(self._skeletons.get(cand, ()))
        if not found and is_kana(k):
            found = self._truncated(k)
        return list(dict.fromkeys(found))[:8]

    def _truncated(self, k: str) -> list[str]:
        """Corpus readings a katakana word is the clipped start of, as judges clip loan words (レギュ for
        レギュレーション): at least three characters typed and two left off, and only when few words fit."""
        if len(k) < 3 or not all("\u30a1" <= ch <= "\u30fa" or ch == "ー" for ch in k):
            return []
        i = bisect.bisect_left(self._sorted_readings, k)
        out: list[str] = []
        while i < len(self._sorted_readings) and self._sorted_readings[i].startswith(k):
            if len(self._sorted_readings[i]) >= len(k) + 2:
                out.append(self._sorted_readings[i])
            i += 1
        sk = kana_skeleton(k)
        if not out and len(sk) >= 3:  # clipped and loosely spelt (トナメ: トーナメント, the ー dropped)
            i = bisect.bisect_left(self._sorted_skeletons, sk)
            while i < len(self._sorted_skeletons) and self._sorted_skeletons[i].startswith(sk):
                if len(self._sorted_skeletons[i]) >= len(sk) + 2:
                    out.extend(self._skeletons[self._sorted_skeletons[i]])
                i += 1
        return out if len(out) <= 3 else []

    def _compound_head(self, k: str) -> str:
        """The corpus's loan word that ends a katakana compound the corpus does not have (イカサマダイス →
        ダイス, ライフメモ → メモ): a Japanese compound names a kind of its last word. The longest such reading,
        two characters or more, with two or more before it; "" when none."""
        if len(k) < 4 or not all("\u30a1" <= ch <= "\u30fa" or ch == "ー" for ch in k):
            return ""
        for start in range(2, len(k) - 1):
            if k[start] != "ー" and k[start:] in self._loan_readings:
                # a word most sections have (カード) says nothing of which one is meant
                common = len(self._evaluator.postings("reading", k[start:])[0]) > 0.1 * self._evaluator.n
                return "" if common else k[start:]
        return ""

    def _latin_names(self, k: str) -> list[str]:
        """Latin words of the corpus that a word typed in kana may be (リセ → lycee, ティーシージー → tcg)."""
        out = list(self._letters.get(squash(k), ()))
        cons = kana_consonants(k)
        if len(cons) >= 2:
            out += self._latin.get(cons, ())
        return out

    def _word_query(
        self,
        qw: QueryWord,
        mode: str = "and",
        alternatives: tuple[list[Q.Query], list[Q.Query]] | None = None,
    ) -> Q.Query:
        """What one word of the query is matched by: its alternatives (`_word_alternatives`, or those given,
        made once for both modes) and its short units, all of them (`and`) or any (`or`)."""
        head, tail = alternatives if alternatives is not None else self._word_alternatives(qw)
        parts = [Q.Term("words", p) for p in qw.word.parts]
        if not parts:
            return Q.Or([*head, *tail])
        return Q.Or([*head, Q.And(parts) if mode == "and" else Q.Or(parts, boost=0.5), *tail])

    def _word_alternatives(self, qw: QueryWord) -> tuple[list[Q.Query], list[Q.Query]]:
        """A word's alternatives other than its short units: those that come before them, those after (the
        same for `_word_query`'s two modes)."""
        w = qw.word
        alts: list[Q.Query] = []
        for f in w.forms:
            alts.append(Q.Term("words", f, boost=FIELD_BOOST["words"]))
            alts.append(Q.Term("title", f, boost=FIELD_BOOST["title"]))
        if qw.kana:
            alts.append(Q.Term("reading", w.reading, boost=FIELD_BOOST["reading"]))
        if qw.chunk and not qw.phrases:  # (a judge's word read whole is not cut: かけごと is not かけ + ごと)
            pieces = self._segment_reading(w.reading)
            if len(pieces) > 1:
                alts.append(Q.And([Q.Term("reading", p, boost=WEIGHT["segments"]) for p in pieces]))
            elif not pieces and w.reading not in self.readings:
                # the run cut into the corpus's words by their skeletons (シングルエリミネーッション)
                near = self._segment_skeleton(w.reading)
                if len(near) > 1:
                    alts.append(
                        Q.And(
                            [Q.Or([Q.Term("reading", r) for r in rs]) for rs in near], boost=WEIGHT["fuzzy"]
                        )
                    )
        head, alts = alts, []
        for g in w.synonyms:
            alts.append(Q.Term("syn", str(g), boost=WEIGHT["synonym"]))
        alts.extend(qw.phrases)
        if (
            (qw.kana or is_kana(w.surface))
            and w.reading not in self.readings
            and w.forms[0] not in self.lexicon["words"]
        ):
            for r in self._spellings(w.reading):
                alts.append(Q.Term("reading", r, boost=WEIGHT["fuzzy"]))
                for surface in self.lexicon["reading"].get(r, ())[:3]:
                    alts.append(Q.Term("title", surface, boost=WEIGHT["fuzzy"] * FIELD_BOOST["title"]))
            for name in self._latin_names(w.reading):
                alts.append(Q.Term("words", name, boost=WEIGHT["fuzzy"]))
            last = "" if qw.phrases else self._compound_head(w.reading)
            if last:  # a compound the corpus lacks, by its last word (イカサマダイス: a ダイス)
                alts.append(Q.Term("reading", last, boost=WEIGHT["fuzzy"]))
                for surface in self.lexicon["reading"].get(last, ())[:3]:
                    alts.append(Q.Term("title", surface, boost=WEIGHT["fuzzy"] * FIELD_BOOST["title"]))
            clipped = self._clips.get(w.reading, ())
            if 0 < len(clipped) <= 3:  # a clipped compound (ダブエリ: ダブル|エリミネーション)
                for term in clipped:
                    field, _, text = term.partition(":")
                    # both words (in the text or the title), weighing as one word together
                    both = [
                        Q.Or([Q.Term("words", x), Q.Term("title", x, boost=FIELD_BOOST["title"])])
                        for x in text.split("|")
                    ]
                    alts.append(_weighted(Q.And(both), WEIGHT["fuzzy"] / len(both)))
        stem = word_stem(w)
        if stem and w.forms[0] not in self.lexicon["words"] and self._has("kanji", stem):
            # a word of the text's family, written or inflected otherwise (繰り下がる: 繰り下げ)
            alts.append(Q.Term("kanji", stem, boost=WEIGHT["fuzzy"]))
        if self._unknown(qw):
            # A word the corpus does not have (a card's nickname: ボルバル for ボルバルザーク) by its characters,
            # weighing as one word whatever its length.
            grams = list(dict.fromkeys(_bigrams(w.surface)))
            if len(grams) >= 2 and all(self._has("grams", g) for g in grams):
                boost = WEIGHT["characters"] / len(grams)
                alts.append(Q.And([Q.Term("grams", g, boost=boost) for g in grams]))
        return head, alts

    def _has(self, field: str, text: str) -> bool:
        """Whether the index has the term (a query part that can match nothing is left out)."""
        return len(self._evaluator.postings(field, text)[0]) > 0

    def _unknown(self, qw: QueryWord) -> bool:
        """Whether the corpus has the word in none of its forms (nor, typed in kana, as a reading)."""
        w = qw.word
        words = self.lexicon["words"]
        return (
            not any(f in words for f in w.forms)
            and not any(p in words for p in w.parts)
            and w.reading not in self.readings
        )

    def _title_query(self, qw: QueryWord) -> Q.Query:
        """The word in the section's title (any of its forms, or its reading when typed in kana)."""
        w = qw.word
        alts: list[Q.Query] = [Q.Term("title", f) for f in w.forms]
        if w.parts:
            alts.append(Q.And([Q.Term("title", p) for p in w.parts]))
        grams = _bigrams(w.surface)
        if len(grams) > 1 or len(w.surface) == 2:  # the title cut otherwise (不戦勝 as 不 + 戦勝)
            alts.append(Q.And([Q.Term("title_grams", g) for g in dict.fromkeys(grams)]))
        if qw.kana:  # the words it is the reading of, as words or as characters (the title cut otherwise)
            for surface in self.lexicon["reading"].get(w.reading, ())[:3]:
                alts.append(Q.Term("title", surface))
                if len(surface) >= 2:
                    alts.append(Q.And([Q.Term("title_grams", g) for g in dict.fromkeys(_bigrams(surface))]))
        if qw.chunk and w.reading not in self.readings:  # a run of kana read as several words (すぺあかーど)
            pieces = self._segment_reading(w.reading)
            if len(pieces) > 1:
                alts.append(
                    Q.And(
                        [
                            Q.Or([Q.Term("title", x) for x in self.lexicon["reading"].get(p, ())[:3]])
                            for p in pieces
                        ]
                    )
                )
        return Q.Or(alts)

    def _segment_reading(self, k: str) -> list[str]:
        """Greedy longest match of a katakana string against the corpus's word readings (2+ chars): at each
        place only the lengths that readings starting with its character have are tried, longest first."""
        pieces, i, covered = [], 0, 0
        lengths = self._reading_lengths
        while i < len(k):
            for n in lengths.get(k[i], ()):
                j = i + n
                if j <= len(k) and k[i:j] in self.readings:
                    pieces.append(k[i:j])
                    covered += n
                    i = j
                    break
            else:
                i += 1
        return pieces if covered >= 0.7 * len(k) else []

    def _segment_skeleton(self, k: str) -> list[list[str]]:
        """A katakana run that no reading segments, cut by skeletons (`textnorm.kana_skeleton`: a mora dropped
        or doubled, a voiced mark lost) into the corpus's words: the readings each piece may be."""
        sk = kana_skeleton(k)
        pieces: list[list[str]] = []
        i = covered = 0
        while i < len(sk):
            for j in range(min(len(sk), i + self._max_skeleton), i + 1, -1):
                found = self._skeletons.get(sk[i:j])
                if found:
                    pieces.append(found[:4])
                    covered += j - i
                    i = j
                    break
            else:
                i += 1
        return pieces if covered >= 0.8 * len(sk) else []

    def words_query(self, text: str, mode: str = "and", boost: float = 1.0) -> Q.Query | None:
        """The words of a text, all of them (`and`) or any (`or`)."""
        parts = [self._word_query(qw, mode) for qw in self.analyse(text)]
        if not parts:
            return None
        return Q.And(parts, boost=boost) if mode == "and" else Q.Or(parts, boost=boost)

    def synonym_entries(self, text: str, words: list[QueryWord] | None = None) -> list[int]:
        """The synonym list's entries whose judge's word is in the query: as typed (ignoring width, kana,
        dots), by dictionary form (投げた finds 投げる), or by reading when the query is kana."""
        s, where = squash_map(text)
        found: list[int] = []
        particles: set[int] | None = None  # where SudachiPy reads a particle (looked up once, when needed)
        for i, ch in enumerate(s):
            for length in self._key_lengths.get(ch, ()):
                j = i + length
                if j > len(s):
                    break
                for e in self._synonym_by_key.get(s[i:j], ()):
                    key = s[i:j]
                    if key.isascii() and (
                        s[i - 1 : i].isascii()
                        and s[i - 1 : i].isalnum()
                        or s[j : j + 1].isascii()
                        and s[j : j + 1].isalnum()
                    ):
                        continue  # an ASCII key inside a longer ASCII word (ID in slide)
                    if _inside_katakana_word(text, where[i], where[j - 1]):
                        continue  # a katakana key inside a longer katakana word (ペナ in ペナルティ)
                    if all("\u3041" <= c <= "\u309f" for c in text[where[i] : where[j - 1] + 1]):
                        if particles is None:
                            particles = self.analyzer.particle_starts(text)
                        if where[i] in particles:
                            continue  # a key typed in hiragana that begins with a particle (ばい in すればいい)
                    found.append(e)
        qws = words if words is not None else self.analyse(text)
        lemmas = [qw.word.forms[0] for qw in qws]
        for i, lemma in enumerate(lemmas):
            for kl, e in self._synonym_by_lemma.get(lemma, ()):
                if lemmas[i : i + len(kl)] == kl:
                    first, last = qws[i].word.surface, qws[i + len(kl) - 1].word.surface
                    a = text.find(first)
                    b = text.find(last, max(a, 0)) + len(last) - 1
                    if a >= 0 and b >= a and _inside_katakana_word(text, a, b):
                        continue  # フロア in フロアルール: a part of a katakana compound
                    found.append(e)
        # A run of hiragana read whole: the words SudachiPy reads in it, by dictionary form (なげた: 投げる).
        for qw in qws:
            if qw.chunk and all("\u3041" <= ch <= "\u309f" for ch in qw.chunk):
                for p in qw.word.parts:
                    found += [e for kl, e in self._synonym_by_lemma.get(p, ()) if len(kl) == 1]
        # Latin words typed for a katakana term (game loss for ゲームロス): their katakana forms joined.
        run: list[str] = []
        for qw in [*qws, None]:
            w = qw.word if qw is not None else None
            if w is not None and w.surface.isascii() and w.forms[0] != fold(w.surface):
                run.append(w.forms[0])
                continue
            if len(run) > 1:
                found += self._synonym_by_key.get(squash("".join(run)), [])
            run = []
        if not found and is_kana(s):
            spoken = to_katakana(s)
            # the readings found in it, in the list's order (looked up by slice, not each tried as a substring)
            rank = self._reading_rank
            held = {
                spoken[i : i + n]
                for i in range(len(spoken))
                for n in self._reading_key_lengths.get(spoken[i], ())
                if spoken[i : i + n] in rank
            }
            found += [e for r in sorted(held, key=rank.__getitem__) for e in self._synonym_by_reading[r]]
        return list(dict.fromkeys(found))

    def _phrase_queries(self, e: int, one_word: bool = True) -> list[Q.Query]:
        """The texts' phrases of a synonym entry; standing for one word of the query, each weighs as one word
        however many words it has. Built once per entry (they depend on the list and the index only; queries
        are never changed once built, so every search may share them)."""
        hit = self._phrase_built.get((e, one_word))
        if hit is not None:
            return hit
        out = []
        for phrase in self._phrases[e]:
            terms = [
                self._word_query(QueryWord(w, kana=False)) for w in phrase if w.forms[0] not in _QUERY_STOP
            ]
            if terms:
                out.append(_weighted(Q.And(terms), WEIGHT["phrase"] / (len(terms) if one_word else 1)))
        for q in out:
            self._evaluator.keep(q)
        self._phrase_built[(e, one_word)] = out
        return out

    def _attach_phrases(
        self, words: list[QueryWord], entries: list[int]
    ) -> tuple[list[QueryWord], list[int]]:
        """The query's words with the phrases of the entries whose judge's word each one is (so that 出禁 盗み
        counts as every word found where the text says 出場停止 and 窃盗), and the entries that are no one
        word of the query (a key of several words: 勝ちを譲る), whose phrases stay signals of their own."""
        if not entries:
            return words, []
        out = [copy.copy(qw) for qw in words]
        loose = []
        for e in entries:
            keys = self._entry_keys[e]
            hit = False
            for qw in out:
                w = qw.word
                if squash(w.surface) in keys or w.forms[0] in keys or (qw.kana and w.reading in keys):
                    qw.phrases = qw.phrases + tuple(self._phrase_queries(e))
                    hit = True
            if not hit:
                loose.append(e)
        return out, loose

    def query(self, text: str, words: list[QueryWord] | None = None) -> Q.Query | None:
        """The whole query as one Whoosh query: every signal at once, each with its weight (`WEIGHT`).

        The section number as written; every word (all, and each); the synonym list's phrases for the
        judges' words in it; the query's character pairs (all, and some). A section that has every word
        scores the sum of both word signals, so a noise word or a nickname lowers a section, never sinks it.
        """
        whole, content = None, text
        if words is None:
            words, whole, content = self._analyse(text)
            content = content or text
        signals: list[Q.Query] = []
        keys = query_number_terms(text)
        if keys:  # once, however many of its forms the section has
            signals.append(Q.ConstantScoreQuery(Q.Or([Q.Term("number", k) for k in keys]), WEIGHT["number"]))
        entries = self.synonym_entries(text, words)
        words, loose = self._attach_phrases(words, entries)
        # A suffix narrows the word before it (マッチ後): a section without it still has every word asked.
        core = [qw for qw in words if not qw.word.suffix] or words
        made: dict[int, tuple[list[Q.Query], list[Q.Query]]] = {}  # each word's alternatives, for both modes

        def alternatives(qw: QueryWord) -> tuple[list[Q.Query], list[Q.Query]]:
            if id(qw) not in made:
                made[id(qw)] = self._word_alternatives(qw)
            return made[id(qw)]

        word_queries = [self._word_query(qw, alternatives=alternatives(qw)) for qw in core]
        if len(word_queries) > 1:
            signals.append(_weighted(Q.And(word_queries), WEIGHT["all"]))
        if 3 <= len(word_queries) <= 5 and WEIGHT["most"]:
            for i in range(len(word_queries)):
                signals.append(_weighted(Q.And(word_queries[:i] + word_queries[i + 1 :]), WEIGHT["most"]))
        if word_queries:
            # A word without short units is the same query in both modes: the same object, evaluated once.
            built = {id(qw): wq for qw, wq in zip(core, word_queries, strict=True)}
            each = [
                built[id(qw)]
                if id(qw) in built and not qw.word.parts
                else self._word_query(qw, "or", alternatives(qw))
                for qw in words
            ]
            signals.append(_weighted(Q.Or(each), WEIGHT["any"]))
            if len(each) > 1:  # each word found counts the same (coordination), whatever its score
                signals.append(Q.Or([Q.ConstantScoreQuery(x, WEIGHT["coord"]) for x in each]))
            in_title = Q.And([self._title_query(qw) for qw in words])
            signals.append(_weighted(in_title, WEIGHT["title"]))
            topic = title_topic([qw.word for qw in words])
            if topic and self._has("title_topic", topic):  # the title's words are the query's: title again
                # (an And, not a Require: Whoosh would not weigh a Require; a score of 0 Whoosh reads as 1)
                is_topic = Q.ConstantScoreQuery(Q.Term("title_topic", topic), 1e-6)
                signals.append(_weighted(Q.And([in_title, is_topic]), WEIGHT["topic"]))
        for e in loose:
            signals.extend(self._phrase_queries(e, one_word=False))
        if len(words) > 1:
            pairs = list(dict.fromkeys(word_pairs(self.analyzer.words(text) if whole is None else whole)))[
                :16
            ]
        else:
            pairs = []
        if pairs:
            signals.append(_weighted(Q.Or([Q.Term("pairs", p) for p in pairs]), WEIGHT["pairs"]))
        grams = list(dict.fromkeys(_bigrams(content)))[:32]
        if len(squash(content)) >= 2 and grams:
            signals.append(_weighted(Q.And([Q.Term("grams", g) for g in grams]), WEIGHT["grams"]))
        if not signals:
            return None
        if len(grams) > 1:
            # Some character pairs rank what the other signals found; alone they find nothing (プレ is in
            # プレイヤー, which is no answer to プレミアム殿堂).
            some = Q.Or([Q.Term("grams", g) for g in grams], boost=WEIGHT["some_grams"])
            return Q.AndMaybe(Q.Or(signals), some)
        return Q.Or(signals)

    # running

    def search(self, query: str, game: str | None = None, limit: int = 10) -> Results:
        """Sections matching a judge's query, best first (answers for recent queries are kept: judges at one
        event search the same words, and the index does not change while the process runs)."""
        key = (clean_query(query), game, max(1, min(int(limit), 100)))
        with self._cache_lock:
            hit = self._cache.get(key)
            if hit is not None:
                self._cache.move_to_end(key)
                return hit
        results = self.search_uncached(query, game, limit)
        with self._cache_lock:
            self._cache[key] = results
            if len(self._cache) > self.CACHE_SIZE:
                self._cache.popitem(last=False)
        return results

    def search_uncached(self, query: str, game: str | None = None, limit: int = 10) -> Results:
        """Sections matching a judge's query, best first; never raises on what a user typed.

        One query with every signal at once (`query()`), evaluated once over the index."""
        text = clean_query(query)
        limit = max(1, min(int(limit), 100))
        if not text:
            return Results(query=text, total=0, hits=[])
        q = self.query(text)
        if q is None:
            return Results(query=text, total=0, hits=[])
        ev = self._evaluator
        # (as `Require(q, Term("game", game))`), each section's score times its weight
        total, at = ev.best(q, game or None, limit, self._section_weight)
        needle = squash(text)
        hits: list[Hit] = []
        short = len(needle) <= 1
        top = list(at)
        every = ev.terms_matched(q, top, _MARKED_FIELDS, few=frozenset({"grams"}), game=game or None)
        if any(fl == "grams" for fl, _ in every) and len(needle) >= 2:
            every.add(("needle", needle))
        marker = self._marker(every, short)
        for docnum in top:
            f = ev.stored[docnum]
            hits.append(
                Hit(
                    id=f["id"],
                    game=f["game"],
                    doc=f["doc"],
                    title=f["title_text"],
                    doc_title=f["doc_title"],
                    score=round(at[docnum], 3),
                    snippet=self._snippet(
                        f["text"] or f["title_text"],
                        every,
                        short=short,
                        folded=self._folded[docnum],
                        gapless=self._gapless_of(docnum),
                        marker=marker,
                    ),
                )
            )
        return Results(query=text, total=total, hits=hits)

    # snippets

    def _gapless_of(self, docnum: int) -> _Gapless:
        """A section's `_Gapless` (made on first use, kept: bounded by the index's sections)."""
        hit = self._gapless.get(docnum)
        if hit is None:
            hit = self._gapless[docnum] = _Gapless(self._folded[docnum])
        return hit

    def _surfaces(self, terms: set[tuple[str, str]], short: bool = False) -> list[str]:
        out: set[str] = set()
        for field, term in terms:
            if field in ("words", "title"):
                out.add(term)
                out.update(self.lexicon["words"].get(term, ()))
            elif field in ("reading", "syn"):
                out.update(self.lexicon.get(field, {}).get(term, ()))
        # One-character pieces (の, 数, ち) would mark noise unless the judge typed one character.
        return sorted((x for x in out if x.strip() and (short or len(x) > 1)), key=len, reverse=True)[:300]

    def _marker(self, terms: set[tuple[str, str]], short: bool = False) -> _Marker | None:
        """What marks every surface of the query's matched terms (built once a query)."""
        branches = [(re.escape(x), x, False) for x in self._surfaces(terms, short)]
        branches += [
            ("[・･ー\\s]*".join(re.escape(ch) for ch in t), t, True) for f, t in terms if f == "needle"
        ]
        branches.sort(key=lambda b: len(b[0]), reverse=True)
        return _Marker([(text, needle) for _, text, needle in branches]) if branches else None

    def _snippet(
        self,
        text: str,
        terms: set[tuple[str, str]],
        width: int = 110,
        short: bool = False,
        folded: str | None = None,
        marker: _Marker | None = None,
        gapless: _Gapless | None = None,
    ) -> str:
        """A short passage with the matched words in <mark>; everything else escaped."""
        folded = fold(text) if folded is None else folded
        marks = marker if marker is not None else self._marker(terms, short)
        spans = marks.spans(folded, gapless) if marks is not None else []
        start = 0
        if spans:
            # The window that holds the most marks (spans come in order of their start).
            start = max(0, _best_window(spans, width) - 20)
        end = min(len(text), start + width)
        out = ["…" if start > 0 else ""]
        pos = start
        # (the spans do not overlap, in order: their ends too; the first that ends after the window's start,
        # up to the first that starts at its end or after)
        first = bisect.bisect_right(spans, start, key=_span_end) if spans and spans[0][1] <= start else 0
        window = text[start:end]
        if "&" in window or "<" in window or ">" in window or '"' in window or "'" in window:
            esc = _escape
        else:  # (no piece of the window has a character to escape: each is as it is)
            esc = str
        for a, b in itertools.islice(spans, first, None):
            if a >= end:
                break
            a, b = max(a, start), min(b, end)
            if a < pos:
                continue
            out.append(esc(text[pos:a]))
            out.append("<mark>" + esc(text[a:b]) + "</mark>")
            pos = b
        out.append(esc(text[pos:end]))
        out.append("…" if end < len(text) else "")
        return "".join(out).replace("\n", " ")
