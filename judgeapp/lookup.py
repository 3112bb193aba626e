"""The situation lookup: a judge's story in, what the text decides out (docs/infractions.md, "The lookup").

It reads the whole evidence, not one bag of words:
- each infraction's own words (its name, description, judges' words, the wizard answers and training
  situations that lead to it, its remedy);
- the text itself, line by line: every sentence and every item of the text's own example lists (違反例), with
  its section's title. A line that an infraction quotes stands for that infraction; a line of a section that
  infractions cite but do not quote stands, more weakly, for them; a line of a section no infraction cites
  stands for the section itself: the answer is then that section, `penalty: null`, quoting what it decides
  (a drop, a concession, a result, a procedure);
- the same units again as character bigrams, for loose spelling (a mora dropped, kana for kanji);
- the cited sections' whole text.
Each is ranked on its own (BM25) and the rankings are fused by reciprocal rank fusion.

Nothing fits when the best answer's own evidence covers too little of what the judge typed: the share of the
query's words (weighted by how rare they are) found in that answer's evidence, or of its character bigrams,
is under a threshold (`NONE_THRESHOLD`), or under a lower one (`NONE_THRESHOLD_WORDS`) when fewer than two
of the judge's words are found. Both are calibrated on tables of situations the texts cover and situations
they do not (tests/cases/, tests/test_lookup.py). The API, the wizard pages, the home page and the tests
all call `Lookup.search`.
"""

from __future__ import annotations

import gc
import hashlib
import json
import math
import os
import re
from collections import Counter
from collections.abc import Callable, Collection, Iterable
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import cache, cached_property
from pathlib import Path

import numpy as np
from markupsafe import Markup, escape

from .corpus import Corpus, Section
from .policy import Citation, Infraction, Level, Policies, Policy, Rule, issuer_text, standing
from .search import (  # noqa: F401  (load_synonyms: callers pass its result)
    LIGHT_WORDS,
    Word,
    analyzer,
    load_synonyms,
)
from .textnorm import clean_query, fold, is_kana, romaji_to_hiragana, squash

# A story's own words without meaning, beside the light words (search.LIGHT_WORDS): who did it (the person,
# never the situation: あいつ, 俺, こいつ; 本人 and 当人, the person the story is about, which no text says), when and where in the game, a story's fillers (今日, さっき, ずっと,
# めっちゃ, かなり, やっぱり: no text uses them), and the hedges and the light verb a judge wraps a story in
# (〜はず, 〜わけ, 〜っぽい, やる).
STOP = LIGHT_WORDS | {
    fold(w)
    for w in (
        "無い", "此の", "其の", "為", "時", "場合", "じゃう", "て居る", "一", "上", "中", "方", "っ", "さん",
        "君", "ちゃん", "下さる", "どう",
        "此奴", "其奴", "彼奴", "奴", "俺", "僕", "御前", "貴方", "手前", "子", "本人", "当人",
        "筈", "訳", "ぽい", "遣る", "所", "こと",
        "今日", "昨日", "さっき", "先程", "ずっと", "凄い", "目茶", "可成", "多分", "一寸", "マジ", "一応",
        "取り敢えず", "矢張り", "全然",
    )
}  # fmt: skip
# English grammar a judge mixes into a story (what, by, in, can't: a non-native judge's 「penalty what?」, 「warning 2
# times in lycee」): the particles, pronouns and auxiliaries of English, never a word of the texts, which would
# otherwise weigh as the story's rarest words. Only a word typed in latin letters (`_stop`): the dictionary reads
# it in katakana (what: ホワット, in: イン), and a katakana word of a story is not English grammar.
ENGLISH_STOP = frozenset(
    """a an the this that these those it its i me my you your he him his she her we us our they them their
    what how why when where who whom which whose is are was were be been being am do does did done doing
    can can't cannot could couldn't will won't would should shall may might must have has had having
    don't doesn't didn't isn't aren't wasn't weren't by at to in on of for from with into about as
    and or but so if then than there here also just very please""".split()  # noqa: SIM905 (a word list)
)
OPPONENT = {fold(w) for w in ("相手",)}
# Counters: 2回目, 2個目, 2枚目, 2点 count the same thing in a judge's story (a penalty received twice); each
# also stands as one shared term, in the evidence and in the query.
COUNTERS = {fold(w) for w in ("回", "個", "枚", "点", "度", "件", "つ")}
COUNT_TERM = "#count"
# 2つめ, ふたつめ: the analyzer reads つめ as 詰める; written 2つ目 it is a count
_COUNT_ME_RE = re.compile(r"([0-9０-９一二三四五六七八九十何]|ひと|ふた|みっ|よっ|いくつ)つめ")
# 1ゲーム目途中, 2本目途中: the analyzer reads 目途 (a prospect) and 中; after a count it is 目 and 途中
_ME_TOCHU_RE = re.compile(r"(本|ゲーム|戦|試合|ターン|回|マッチ|ラウンド)目途中")
# A counter in hiragana after a number (2かい, 1まい, 3てん, 1ラウンドめ): the analyzer reads 2かい as 2 階, かい as
# 買う or 会; written in kanji it is the count the texts write (2回, 1枚, 3点, 1ラウンド目)
_KANA_COUNTERS = {
    "かい": "回",
    "まい": "枚",
    "てん": "点",
    "こ": "個",
    "ど": "度",
    "にん": "人",
    "ほん": "本",
}
# A counter of two kana may be followed by a particle (2かいもらった, 2かいと警告); こ and ど only by no hiragana
# (2こうげき, 3どうぐ are other words). A space may stand between the number and the counter (2 かい).
_PARTICLE_NEXT = "[もとのでをがはにや]"
_KANA_COUNTER_RE = re.compile(
    r"(?<=[0-9０-９一二三四五六七八九十何])\s*(?:(かい|まい|てん|にん|ほん)(?=め|目|"
    + _PARTICLE_NEXT
    + r"|[^\u3041-\u309f]|$)"
    r"|(こ|ど)(?=め|目|[^\u3041-\u309f]|$))"
)
# 目 for the め after a count and its counter (2回め, 1ラウンドめ), not the め of a word (3枚めくって: めくる), so
# only where no hiragana but a particle follows
_KANA_ME_RE = re.compile(
    r"(?<=[0-9０-９一二三四五六七八九十])(回|枚|点|個|度|人|本|ゲーム|ラウンド|ターン|試合|戦|マッチ)め"
    r"(?=" + _PARTICLE_NEXT + r"|[^\u3041-\u309f]|$)"
)
# A count of a level in a story (注意を4回, 警告1点, 二回目の注意): the standing engine says which automatic rule the
# counts reach (`_counted_first`)
_NUMBERS = {fold(k): v for k, v in zip("一二三四五六七八九十", range(1, 11), strict=True)}
_NUMBER = r"([0-9]+|[一二三四五六七八九十])"
_COUNTER = r"(?:回|点|個|枚|度|つ)"  # folded with the pattern (つ: ツ)
PHRASE_SEP = "\x1f"  # between the words of a synonym phrase, in a query entry "p:"
# A synonym entry found in the story adds its phrases' words as weaker words, PHRASE_WEIGHT each, and no more
# than PHRASE_WORDS of them in all (an entry of more words shares that weight among them).
PHRASE_WEIGHT = 0.5
PHRASE_WORDS = 7
# Nothing fits unless the best of the first three answers covers NONE_THRESHOLD of the query, or
# NONE_THRESHOLD_WORDS with at least two of the judge's words found (one shared everyday word is not a match).
# Calibrated on tests/cases/situations*.yaml (covered) and situations_none.yaml (not covered).
NONE_THRESHOLD = 0.42
NONE_THRESHOLD_WORDS = 0.38
# Or a long story of which the answer's evidence holds much, not most: at least NONE_MASS_FLOOR of it, two or
# more of the judge's words, and found words whose rarity (idf) adds up to NONE_MASS (about two rare words and
# a common one); the share alone holds a long story to a bar a short one passes with one word.
NONE_MASS = 23.0
NONE_MASS_FLOOR = 0.2
NONE_MASS_WORDS = 2
RRF_K = 1.0
RERANK = 10  # candidates of the fused rank ranked again by coverage
RANK_ALL = 30  # answers of every game's one ranking that order the games of the lookup across all games
# how much coverage weighs in that second ranking (bench/lookup_sweep.py swept it: docs/infractions.md)
COVERAGE_POWER = 0.5
# An answer whose evidence holds one of the judge's words alone weighs ONE_WORD in that second ranking: one shared
# word is no match for the nothing-fits test either (NONE_THRESHOLD_WORDS), and a story's one everyday or setting
# word (見る, 会場) put such answers over the one that holds two or three of its words (docs/infractions.md, pass 16).
# A story of one word is not moved: all its answers hold one word at most.
ONE_WORD = 0.8
WEIGHTS = {"own": 1.0, "passage": 1.0, "grams": 0.8, "section": 0.35}
# A line of a cited section that no answer quotes stands for the infractions citing it at this weight.
CITED_WEIGHT = 0.5
# A section's line that leaves the decision open: 「できます」「ことがあります」「場合があります」, 出来る (the same
# verb in kanji: dm-senshu 202 「決めることが出来る」), 「〜てもよい」 (a permission: 201 「１マッチを１ゲームとしても
# よい」), 「構いません」, 「判断」.
OPEN_RE = re.compile(
    r"(こと|場合)が(でき|あり)ます|ことができ|できる|出来る|出来ます|[てで]もよい|構いません|判断"
)
# A line that says a penalty may be given, of the open lines (shown for its section where it holds the story as
# well as the line that scored best: `_match`)
MAY_RE = re.compile(r"(ペナルティ|処分)[^。]*(こと|場合)が(あり|ある)")
# A level's own line, which says what it is given for (イジンデン ch10-3 「悪質な違反の場合や、…に対して与えられます。」):
# a section's line that one level of the policy quotes and that says 「与えられます」 (not 「与えられた場合」, what then
# happens, nor 「与えられることもあり」) answers that level, the judge deciding whether the story is such a case
# (`Match.level`).
LEVEL_LINE_RE = re.compile(r"与えられます")
# A game score as a judge writes it (1-0, 2-1, 1-1, of a match of three games at most): one player ahead, or
# both even, in the texts' words (dm-senshu 206, tcg-taikai 7c), as weaker words like a synonym's phrases. Not
# a section number (7-1, 第1-2章, ch1-1), a table or round (卓1-2, r1-1), a Swiss record (3-0), nor a count or
# a time (1-2枚, 2-1ターン前, 1-2日).
_SCORE_RE = re.compile(
    r"(?<![0-9.第卓章\-])(?<!ch)(?<!r)([0-2])\s*[-−–]\s*([0-2])"
    r"(?![0-9\-]|\s*[章節条項枚回人個点分秒つ度件年月日位戦勝敗]|\s*ターン)"
)
SCORE_EVEN = ["同数のゲームに勝っていた", "勝利ゲーム数が同じ"]
SCORE_AHEAD = ["多くのゲームに勝っていた", "すでに 1 ゲーム勝利"]
SECTION_ANSWERS_EVERYWHERE = True  # a section's lines that no answer quotes stand for the section itself
_KANA_RUN = re.compile(r"[ァ-ヺー]{3,}")
# A space beside a Japanese character in a story written word by word (ひと が あいて を おした, game loss に
# なった): the writer's word breaks, which Japanese does not write; the analyzer reads each blank as a word's
# end and loses the words it cuts apart (あいて: 開いて, じゃま: じゃ・ま) and the grammar it joins (〜て いる:
# a content verb; a lone が or で: a conjunction); the story is read without them (`_story`). Spaces between
# two latin words stay (game loss: `Lookup._join_latin`).
_JP = r"\u3041-\u30ff\u3400-\u9fff\uf900-\ufaff\u3005\u3006\u3001\u3002\u300c-\u300f"
_JP_SPACE_RE = re.compile(rf"(?<=[{_JP}]) +| +(?=[{_JP}])")
# a story written word by word: a particle stands between spaces (ひと が あいて を); a phone note's spaces
# (スコアカード 返送忘れ 3週たった) part its phrases, which the analyzer reads as they are
_LATIN_WORD_RE = re.compile(
    r"(?<![A-Za-z0-9])[A-Za-z]+(?![A-Za-z0-9'])"
)  # a word in latin letters (`_romaji`)
_PARTICLE = "[をがにでのはとも]"  # a particle a judge types as a word of its own
_SPACED_RE = re.compile(rf"(?:^|\s){_PARTICLE}(?:\s|$)")
# the space after such a particle stays: the writer's word break there is the one the analyzer needs (joined,
# 「わたし が かった」 is わたし・がかる, 「わたさないで かくした」 わたさ・でかい; a blank it reads as a word's end)
_AFTER_PARTICLE_RE = re.compile(rf"(?:^|\s){_PARTICLE}$")
# Words a judge quotes (「…」, 『…』, "…") are what someone said: they count QUOTED_WEIGHT in the coverage.
_QUOTE_RE = re.compile(r"「[^「」]*」|『[^『』]*』|\"[^\"]*\"")
QUOTED_WEIGHT = 0.5
# A light word (`Word.light`: a pronoun, adverb, adnominal, conjunction or a noun standing as an adverb — どっち,
# もう, ほぼ, 同じ, しかも, いま) tells how or which, not what happened: it weighs LIGHT_WEIGHT in the coverage.
LIGHT_WEIGHT = 0.5
# A word's weight in the coverage is its idf to this power: a story's setting words (プレイヤー, 相手, 対戦,
# デッキ), which most lines hold, weigh less beside the words that say what happened (a long story's many
# setting words outweighed its one rare word); the nothing-fits mass below is on the same scale.
IDF_POWER = 1.5
NONE_MESSAGE = "この文書には、この状況に当てはまる規定が見つかりませんでした。"
NONE_MESSAGE_ALL = "どのゲームの規定にも、この状況に当てはまるものが見つかりませんでした。"  # `search_all`
K1, B = 1.2, 0.6


@dataclass
class Answer:
    """One thing the lookup can answer: an infraction of a policy, an accumulation or upgrade rule, or a
    section that decides no penalty."""

    key: str  # "<game>/<infraction id>", "<game>/rule:<rule id>" or "section:<section id>"
    game: str
    policy: Policy
    infraction: Infraction | None = None
    section: Section | None = None
    rule: Rule | None = None

    @property
    def citations(self) -> list[Citation]:
        if self.infraction is not None:
            return self.infraction.citations
        if self.rule is not None:
            return self.rule.citations
        return []

    terms: set[str] = field(default_factory=set)  # its own evidence, for the nothing-fits test
    grams: set[str] = field(default_factory=set)


@dataclass
class Unit:
    """A piece of evidence: terms, and the answers it stands for (with a weight)."""

    text: str
    section: str | None
    targets: list[tuple[int, float]]  # (answer index, weight)
    terms: Counter
    grams: Counter


@dataclass
class Match:
    """One answer, with why it matched."""

    answer: Answer
    score: float
    coverage: float
    found: int  # how many of the judge's words its evidence holds (directly or by a dictionary synonym)
    words: list[str]  # the judge's words that matched
    section: str | None  # the section that carries the answer
    passage: str  # the evidence shown (plain text)
    alternatives: frozenset = frozenset()  # the query's terms that matched, for the snippet
    from_text: bool = False  # the passage is a line of the text (not the infraction's description)

    @property
    def decides(self) -> str:
        """What the text decides, in its words: the line that matched, or the answer's first quote."""
        if self.from_text or not self.answer.citations:
            return self.passage
        return self.answer.citations[0].quote

    @property
    def snippet(self) -> Markup:
        """The passage with the matched words in <mark> (made when shown)."""
        return mark(self.passage, self.alternatives)

    @cached_property
    def level(self) -> Level | None:
        """A section's answer on a level's own line (「…に対して与えられます」): that level, the one the line names."""
        return line_level(self.answer, self.passage)

    @property
    def level_meta(self) -> str:
        return level_meta(self.level) if self.level else ""

    @property
    def level_issuer(self) -> str | None:
        return level_issuer(self.level) if self.level else None

    @property
    def kind(self) -> str:
        a = self.answer
        return "infraction" if a.infraction is not None else "rule" if a.rule is not None else "section"


def line_level(answer: Answer, passage: str) -> Level | None:
    """The level whose own line `passage` is, for a section's answer (`LEVEL_LINE_RE`, one level quoting it)."""
    if answer.section is None or not LEVEL_LINE_RE.search(passage):
        return None
    levels = [
        lv
        for lv in answer.policy.levels.values()
        if any(c.section == answer.section.id and _quote_in(c.quote, passage) for c in lv.citations)
    ]
    return levels[0] if len(levels) == 1 else None


def level_meta(level: Level) -> str:
    """Beside a level line's badge (the page, and the offline lookup's export)."""
    return f"ジャッジの判断あり・この節が【{level.label}】を与える場合："


def level_issuer(level: Level) -> str | None:
    """Who alone may issue the level (ijinden's 【敗北】), as the wizard's outcome says; None for anyone."""
    return issuer_text(level.label, level.restricted_to) if level.restricted_to else None


@dataclass
class LookupResult:
    query: str
    matches: list[Match]
    none: bool
    message: str | None
    coverage: float  # the best answer's coverage (what the threshold compares)
    named: tuple[str, ...] = ()  # the games the story names (`search_all`), in the games' order

    def groups(self, first: str | None = None) -> list[tuple[str, list[Match]]]:
        """The matches by game, in the order the games first appear; `first` (the game the judge chose last)
        before the others where its text fits."""
        out: dict[str, list[Match]] = {}
        for m in self.matches:
            out.setdefault(m.answer.game, []).append(m)
        return sorted(out.items(), key=lambda kv: kv[0] != first)


class _Bm25:
    """BM25 over a list of term counters, queried word by word (a word matches by any of its forms)."""

    def __init__(self, docs: list[Counter]):
        self.n = len(docs)
        self.lengths = np.array([max(1, sum(d.values())) for d in docs], dtype=np.float64)
        self.avg = float(self.lengths.mean()) if self.n else 1.0
        # the postings, by one stable sort of every (term, doc, count) instead of a list per term
        vocab: dict[str, int] = {}
        term_ids = [vocab.setdefault(t, len(vocab)) for d in docs for t in d]
        doc_ids = np.repeat(np.arange(self.n, dtype=np.int64), [len(d) for d in docs])
        counts = np.fromiter((c for d in docs for c in d.values()), dtype=np.float64, count=len(term_ids))
        order = np.argsort(np.array(term_ids, dtype=np.int64), kind="stable")
        doc_ids, counts = doc_ids[order], counts[order]
        ends = np.cumsum(np.bincount(np.array(term_ids, dtype=np.int64), minlength=len(vocab))).tolist()
        starts = [0, *ends[:-1]]
        self.post = {t: (doc_ids[starts[k] : ends[k]], counts[starts[k] : ends[k]]) for t, k in vocab.items()}
        self.norm = K1 * ((1 - B) + B * self.lengths / self.avg)

    def word_tf(self, alternatives: Iterable[str]) -> np.ndarray | None:
        tf = None
        for a in alternatives:
            p = self.post.get(a)
            if p is None:
                continue
            if tf is None:
                tf = np.zeros(self.n)
            ids, t = p
            tf[ids] = np.maximum(tf[ids], t)
        return tf

    def scores(self, words: list[tuple[tuple[str, ...], float]]) -> np.ndarray:
        out = np.zeros(self.n)
        for alternatives, weight in words:
            tf = self.word_tf(alternatives)
            if tf is None:
                continue
            df = int(np.count_nonzero(tf))
            idf = math.log(1 + (self.n - df + 0.5) / (df + 0.5))
            out += weight * idf * (tf * (K1 + 1)) / (tf + self.norm)
        return out


# Each analysed text's words: (start, end, terms), start -1 where the word's place was not found. Filled as
# texts are analysed, or from the cache file a previous start wrote (Lookup's `cache_dir`).
_ANALYSED: dict[str, list[tuple[int, int, frozenset]]] = {}
LOOKUP_VERSION = "5"  # bump when the analysis of the evidence changes (or its cache format)
SEP = "\x1e"  # between a word's terms in the cache file (no term holds a control character)


def _phrase_lists(means: Iterable[str]) -> list[list[Word]]:
    """A synonym entry's phrases (or the texts' words for a score), each as its words of meaning."""
    return [[w for w in analyzer().words(m) if w.forms[0] not in STOP] for m in means]


def _phrase_words(per_means: list[list[Word]]) -> list[tuple[tuple[str, ...], float]]:
    """Phrases' words as weaker words of the story: all of them together weigh as PHRASE_WORDS of them at most
    (an entry with many phrases, 八百長's four of twelve words, would otherwise outweigh the story's own words)."""
    n_extra = sum(len(ws) for ws in per_means)
    xw = PHRASE_WEIGHT * min(1.0, PHRASE_WORDS / max(1, n_extra))
    return [(tuple(dict.fromkeys(w.forms + w.parts)), xw) for ws in per_means for w in ws]


def _groups_of(w: Word) -> tuple[str, ...]:
    """A word's dictionary synonym groups (審判 and ジャッジ, 盗む and 窃盗 share one) as terms: the analyzer's
    own `Word.synonyms` (SudachiPy's `synonym_group_ids()`, of the word or of its short units), so each
    text is tokenized once."""
    return tuple(f"g:{i}" for i in w.synonyms)


def _stop(w: Word) -> bool:
    """A word without meaning: its form is one of `STOP`, or it is English grammar typed in latin letters."""
    return w.forms[0] in STOP or (w.surface.isascii() and w.surface.lower() in ENGLISH_STOP)


def _latin(w: Word) -> bool:
    """A word typed in latin letters (drop, ok) that the dictionary reads in katakana (ドロップ, オーケー)."""
    return w.surface.isascii() and w.surface.isalpha() and len(w.reading) >= 2


# A compound verb whose second unit only says how (殴りつける, 叩きつける, 怒鳴りつける: 〜付ける) is its first
# unit's verb as well: the story's 殴りつけた is 殴る (a key of the synonym list), as the analyzer keeps it one word.
# Only for the verbs of force (a review: 受け付ける is no 受ける, 押し付ける no 押す, and 投げつける is no 投げる, the
# list's word for conceding).
_MANNER_UNITS = {fold(x) for x in ("付ける", "つける")}
_FORCE_VERBS = {fold(x) for x in ("殴る", "叩く", "怒鳴る", "蹴る", "踏む", "睨む", "突く")}


def _head(w: Word) -> tuple[str, ...]:
    """The first unit of a compound verb of force whose second unit says only how (`_MANNER_UNITS`), else
    nothing."""
    if w.verb and len(w.parts) == 2 and w.parts[1] in _MANNER_UNITS and w.parts[0] in _FORCE_VERBS:
        return (w.parts[0],)
    return ()


def _key_forms(w: Word) -> tuple[str, ...]:
    """A query word's forms for finding the synonym list's keys: a latin word's reading too (drop: ドロップ),
    a compound verb's head (殴りつける: 殴る)."""
    return w.forms + (w.reading,) + _head(w) if _latin(w) else w.forms + _head(w)


NEGATED = "neg:"  # a negated key's forms (いらない, 足りない): found only by a negated word of the story
# right after a verb's stem, a negation: 要らない, 要らなかった, 要らん, 要りません, 足りず (not 要るなら, 要るんだ,
# 足りるんですか: なら and the explanatory ん are none; matched on the folded text, kana as katakana)
_NEGATION = re.compile(fold("(?:ない|なかっ|なく|なけ|ん(?![だでじ])|ませ|ず|ぬ)"))


# right after a word, its copula denied: わざとじゃない, 故意ではなかった, 不正でない (matched on the folded or squashed
# text): the story says it is not so, and the word finds no key of the synonym list
_DENIED = re.compile(fold("(?:じゃ|では|で)(?:な[いくかけ]|ありませ)"))


def _key_word_forms(key: str, w: Word) -> tuple[str, ...]:
    """A one-word key's forms for finding it in a story: the word's, where the key is the word inflected
    (殴った: 殴る, なくした: なくす); negated where the key is its negation (足りない is no 足りる); none where the
    key says more than the word (持ってった, 持っていく: the analyzer keeps 持つ only), found as spelled."""
    rest = fold(key)[len(fold(w.surface)) :] if fold(key).startswith(fold(w.surface)) else None
    if rest is not None and _NEGATION.match(rest):
        return tuple(NEGATED + f for f in w.forms)
    if rest is None or len(rest) > 2:
        return ()
    return w.forms


def _terms(text: str) -> Counter:
    """A text's terms (each word's forms and reading); its words' places are kept for `mark`."""
    entries = _ANALYSED.get(text)
    if entries is None:
        entries = []
        folded = fold(text)
        pos = 0
        for w in analyzer().words(text):
            at = folded.find(fold(w.surface), pos)
            if at >= 0:
                pos = at + len(w.surface)
            if w.forms[0] in STOP:
                continue
            terms = frozenset(
                w.forms
                + w.parts
                + (("r:" + w.reading,) if w.reading else ())
                + _groups_of(w)
                + ((COUNT_TERM,) if w.forms[0] in COUNTERS else ())
            )
            entries.append((at, at + len(w.surface) if at >= 0 else -1, terms))
        if len(_ANALYSED) < 20000:
            _ANALYSED[text] = entries
    out: Counter = Counter()
    for _, _, terms in entries:
        for t in terms:
            out[t] += 1
    return out


def _cache_key(policies: Policies) -> str:
    from importlib.metadata import PackageNotFoundError, version

    from .search import ANALYZER_VERSION

    parts = [LOOKUP_VERSION, ANALYZER_VERSION, policies.version, ",".join(sorted(STOP))]
    for package in ("sudachipy", "sudachidict-core"):
        try:
            parts.append(version(package))
        except PackageNotFoundError:
            parts.append("?")
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]


def _load_cache(path: Path) -> bool:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    for text, entries in data.items():  # each word's terms as one string, split by SEP (faster to read)
        _ANALYSED.setdefault(
            text, [(a, b, frozenset(t.split(SEP)) if t else frozenset()) for a, b, t in entries]
        )
    return True


def _write_cache(path: Path, texts: set[str]) -> None:
    """Write the analysed texts for the next start (atomically: several processes may start at once)."""
    data = {
        t: [[a, b, SEP.join(sorted(terms))] for a, b, terms in _ANALYSED[t]] for t in texts if t in _ANALYSED
    }
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}")
        tmp.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
        tmp.replace(path)
    except OSError:
        pass  # a read-only instance folder: the next start analyses again


@contextmanager
def _gc_paused():
    """No cyclic garbage collection while the lookup is built: it makes only live objects (hundreds of
    thousands of small ones), so the collector would only walk them again and again (a third of a cold start)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _names_re(names: Iterable[str]) -> re.Pattern | None:
    """The games' names as a story types them (TCG大会規定, TCG 大会規定, 泉州DM, イジンデン), longest first, never
    inside a longer word of the same script (リセ is no part of リセット)."""
    alts = []
    for name in sorted({n for n in names if len(squash(n)) >= 2}, key=lambda n: -len(squash(n))):
        chars = [ch for ch in name if not ch.isspace()]
        pat = r"\s*".join(re.escape(ch) for ch in chars)
        if re.fullmatch(r"[ァ-ヺー]", chars[0]):
            pat = r"(?<![ァ-ヺー])" + pat
        elif chars[0].isascii():
            pat = r"(?<![A-Za-z])" + pat
        if re.fullmatch(r"[ァ-ヺー]", chars[-1]):
            pat += r"(?![ァ-ヺー])"
        elif chars[-1].isascii():
            pat += r"(?![A-Za-z])"
        alts.append(pat)
    # (with a lone particle after it: リセ で 遅刻 is 遅刻, not で 遅刻, which the browser, without a dictionary,
    # would read as a word)
    return re.compile(f"(?:{'|'.join(alts)})(?:\\s*{_PARTICLE}(?=\\s|$))?", re.IGNORECASE) if alts else None


def _names_it(names: re.Pattern, text: str) -> bool:
    """Whether a story names the game by one of its names (`names`, `_names_re`) other than two latin letters or
    fewer: DM in 「DMで暴言」 is as likely a direct message (the search reads it alike: `SearchIndex.search`)."""
    found = (_PARTICLE_AFTER_RE.sub("", m.group()) for m in names.finditer(text))
    return any(not (n.isascii() and len(squash(n)) <= 2) for n in found)


_PARTICLE_AFTER_RE = re.compile(rf"\s*{_PARTICLE}$")  # (what `_names_re` takes after a name)


# A count said in English as the texts write it (a judge whose Japanese is not native: 「warning 2 times」, 「chuui
# many times」, 「late 10 minutes」): N times → N回, the Nth time → N回目, twice → 2回, many times (several times,
# again and again, repeatedly, over and over) → 何回も, the texts' 「何度も」 as `_MANY` reads it; N minutes → N分.
# Letter cases spelled out (JavaScript reads the patterns alike: no inline flags).
_EN = r"(?<![A-Za-z])"
_EN_END = r"(?![A-Za-z])"
_ENGLISH_COUNT_SUBS = (
    (
        re.compile(
            rf"{_EN}(?:(?:[Mm]any|[Ss]everal|[Mm]ultiple) +[Tt]imes|[Aa]gain +and +again|[Oo]ver +and +over"
            rf"|[Rr]epeatedly){_EN_END}"
        ),
        "何回も",
    ),
    (re.compile(rf"(?<![0-9])([0-9]+) *(?:st|nd|rd|th) +[Tt]ime{_EN_END}"), r"\1回目"),
    (re.compile(rf"(?<![0-9])([0-9]+) *[Tt]imes?{_EN_END}"), r"\1回"),
    (re.compile(rf"{_EN}[Tt]wice{_EN_END}"), "2回"),
    (re.compile(rf"(?<![0-9])([0-9]+) *(?:[Mm]inutes?|[Mm]ins?){_EN_END}"), r"\1分"),
)
# The opponent said in English is the story's 相手 (`OPPONENT`): the dictionary reads "opponent" オポネント, the
# synonym list's key for the tiebreaker (Japanese jargon), a meaning the English word does not have
_ENGLISH_WORD_SUBS = ((re.compile(rf"{_EN}[Oo]pponents?{_EN_END}"), "相手"),)
# after the spaces: a count's 目 (2つめ: 2つ目, 1ラウンドめ: 1ラウンド目), and 目 and 途中 apart (1ゲーム目途中)
_STORY_SUBS = (
    _ENGLISH_COUNT_SUBS
    + _ENGLISH_WORD_SUBS
    + (
        (_COUNT_ME_RE, r"\1つ目"),
        (_KANA_ME_RE, r"\1目"),
        (_ME_TOCHU_RE, r"\1目 途中"),
    )
)


def _story(text: str) -> str:
    """The story as the lookup reads it: without the spaces it puts between Japanese words (`_JP_SPACE_RE`)
    but the one after a lone particle (`_AFTER_PARTICLE_RE`: ひと が あいて を おした → ひとが あいてを おした),
    its counts written as the texts write them (2かい: 2回, 2つめ: 2つ目, 1ラウンドめ: 1ラウンド目), 目 and 途中
    after a count apart (1ゲーム目途中)."""
    text = _KANA_COUNTER_RE.sub(
        lambda m: _KANA_COUNTERS[m.group(1) or m.group(2)], text
    )  # before the spaces go
    if _SPACED_RE.search(text):
        spaced = text
        text = _JP_SPACE_RE.sub(
            lambda m: " " if _AFTER_PARTICLE_RE.search(spaced, 0, m.start()) else "", spaced
        )
    for pattern, repl in _STORY_SUBS:
        text = pattern.sub(repl, text)
    return text


def _grams(text: str) -> Counter:
    s = squash(text)
    return Counter(s[i : i + 2] for i in range(len(s) - 1))


def _passages(text: str) -> list[str]:
    """A section's lines; a long line split into its sentences."""
    out = []
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        if len(line) <= 90:
            out.append(line)
            continue
        out.extend(s for s in re.split(r"(?<=。)", line) if s.strip())
    return out


def _quoted_only(text: str, surfaces: list[str]) -> set[int]:
    """The query entries whose word stands only inside a quotation (「それ負けるよ」って声かけた): what was
    said, in the speaker's words, not the story's."""
    if not _QUOTE_RE.search(text):
        return set()
    inside = "".join(m.group()[1:-1] for m in _QUOTE_RE.finditer(text))
    outside = _QUOTE_RE.sub(" ", text)
    return {k for k, s in enumerate(surfaces) if s and s in inside and s not in outside}


def _across_words(pieces: list[tuple[int, int, str, str]], a: int, b: int) -> bool:
    """Whether letters a..b of a query cut across its words as the analyzer reads them (`pieces`: begin, end,
    part of speech): the stretch begins or ends inside a word; it begins with a particle (しか|し in
    シャッフルしかしてない) or with する/いる/くる right after a noun (申請|して, 得|しよう); or it holds a
    verb's or an adjective's inflection (し|て|き, い|ない). The pieces of a kana word the analyzer does not
    know are none of these (ぱ|いる, すり|ー|ぶ, けい|こく)."""
    inside = [p for p in pieces if p[0] < b and p[1] > a]
    if not inside or inside[0][0] != a or inside[-1][1] != b:
        return True
    first = inside[0]
    if first[2] == "助詞":
        return True
    if first[2:] == ("動詞", "非自立可能") and any(p[1] == a and p[2] == "名詞" for p in pieces):
        return True
    return any(
        x[2] in ("動詞", "形容詞") and y[2] in ("助詞", "助動詞")
        for x, y in zip(inside, inside[1:], strict=False)
    )


def _quote_in(quote: str, passage: str) -> bool:
    q, p = squash(quote), squash(passage)
    return bool(q) and (q in p or (len(p) >= 8 and p in q))


class Lookup:
    """The situation lookup over every policy and the corpus; build once, query from any thread."""

    def __init__(
        self,
        corpus: Corpus,
        policies: Policies,
        synonyms: list[tuple[list[str], list[str]]] = (),
        cache_dir: str | Path | None = None,
    ):
        """Build from the policies and the corpus. With `cache_dir`, the analysis of the evidence is kept
        there (`lookup-<key>.json`, keyed by the data and the analyzer's versions) and read on the next
        start."""
        cache = Path(cache_dir) / f"lookup-{_cache_key(policies)}.json" if cache_dir else None
        with _gc_paused():
            cached = cache is not None and _load_cache(cache)
            self._build(corpus, policies, synonyms)
        if cache is not None and not cached:
            _write_cache(cache, set(_ANALYSED))

    def _build(
        self, corpus: Corpus, policies: Policies, synonyms: Iterable[tuple[list[str], list[str]]]
    ) -> None:
        self.corpus = corpus
        self.policies = policies
        self.synonyms = [([squash(k) for k in keys if squash(k)], means) for keys, means in synonyms]
        self._syn_keys = {k for keys, _ in self.synonyms for k in keys}
        self._romaji_memo: dict[str, str | None] = {}
        # a level's label → the synonym list's latin words whose one phrase it is (warning: 警告), for the counts
        labels = {lv.label for g in policies.games if (p := policies.get(g)) for lv in p.levels.values()}
        self._level_aliases: dict[str, tuple[str, ...]] = {}
        for keys, means in self.synonyms:
            if len(means) == 1 and means[0] in labels:
                latin = tuple(k for k in keys if k.isascii() and k.isalpha())
                self._level_aliases[means[0]] = self._level_aliases.get(means[0], ()) + latin
        # Each entry's one-word keys by their forms too (煽る matches 煽って, 殴る 殴った): a key is found in a query
        # that spells it, or that has a word of the same form; a compound key (持ち帰る, 叩き割る) also by its
        # short units' forms one after the other (持って帰る, 叩いて割った).
        self._syn_forms: list[frozenset[str]] = []
        self._syn_parts: list[tuple[tuple[str, ...], ...]] = []
        # each entry's phrases as words (once, here: a story's entries reuse them)
        self._syn_phrases = [_phrase_lists(means) for _, means in self.synonyms]
        for keys, _ in synonyms:
            forms: set[str] = set()
            parts: list[tuple[str, ...]] = []
            for k in keys:
                ws = analyzer().words(k)
                if len(ws) == 1 and not k.isascii():
                    forms.update(_key_word_forms(k, ws[0]))
                    if len(ws[0].parts) >= 2:
                        parts.append(ws[0].parts)
            self._syn_forms.append(frozenset(forms))
            self._syn_parts.append(tuple(parts))
        # A key in latin letters whose phrases are each one word of the texts is those words' initials (PL:
        # プレイヤー, ダイバー; DQ: 失格): a story's word so written weighs as they do (`_word_weights`).
        self._initials: dict[str, tuple[str, ...]] = {}
        for (keys, _), ws in zip(synonyms, self._syn_phrases, strict=True):
            if all(len(x) == 1 for x in ws):
                forms = tuple(dict.fromkeys(f for x in ws for f in x[0].forms))
                for k in keys:
                    if k.isascii() and k.isalpha():
                        self._initials[fold(k)] = self._initials.get(fold(k), ()) + forms
        # a game score's words (`_SCORE_RE`): both even, or one player ahead
        self._score_words = {
            even: _phrase_words(_phrase_lists(p)) for even, p in ((True, SCORE_EVEN), (False, SCORE_AHEAD))
        }
        # The keys of two letters or more, folded as the story is, by their first character: for finding one
        # the analyzer cut into pieces (出停 as 出・停)
        self._split_keys: dict[str, list[str]] = {}
        for k in sorted(
            {fold(k) for keys, _ in self.synonyms for k in keys if len(k) >= 2 and not k.isascii()}
        ):
            self._split_keys.setdefault(k[0], []).append(k)
        # A game's names as a judge types them (リセ, イジン, DM): where no line spells one, it names the setting
        # of the story, not what happened (`_query_words` drops it)
        self.game_names = {squash(n) for game in corpus.games.values() for n in game.names}
        # every game's names (a story searched without a game), and each game's own (its own search: a review
        # found 大会規定違反 in a dm-senshu story lose its 大会規定, which only tcg-taikai's name is)
        self._name_re = _names_re(n for game in corpus.games.values() for n in game.names)
        self._own_name_re = {g: _names_re(game.names) for g, game in corpus.games.items()}
        self._round = analyzer().words("ラウンド")[0]
        self.answers: list[Answer] = []
        # the texts of each answer's own evidence and of the lines (`word_groups` reads their words again)
        self._evidence_texts: list[str] = []
        index: dict[str, int] = {}
        own_units: list[Unit] = []
        passage_units: list[Unit] = []
        section_units: list[Unit] = []
        for policy in policies.games.values():
            leads: dict[str, list[str]] = {}
            for node in policy.nodes.values():
                for a in node.answers:
                    if a.outcome:
                        # a hint that sends the judge elsewhere (わざとなら「不正・わざとの行為」) says what
                        # the outcome is not: not its evidence
                        hint = a.hint if a.hint and "「" not in a.hint else ""
                        leads.setdefault(a.outcome, []).extend([a.label, hint])
            for s in policy.training.scenarios:
                leads.setdefault(s.infraction, []).append(s.situation)
            cited: dict[str, list[int]] = {}
            for rule in policy.file.rules:
                i = len(self.answers)
                ans = Answer(key=f"{policy.game}/rule:{rule.id}", game=policy.game, policy=policy, rule=rule)
                self.answers.append(ans)
                index[ans.key] = i
                # the level as the text names it and by its mark (Lycee's N and W), and the level it leads to
                lv = policy.levels[rule.level]
                to = [policy.levels[x] for x in ([rule.to] if rule.to else rule.to_any) if x in policy.levels]
                marks = " ".join([lv.label, lv.mark] + [f"{x.label} {x.mark}" for x in to])
                text = "\n".join(
                    [rule.text, rule.text, marks, " ".join(rule.keywords), " ".join(rule.keywords)]
                )
                _terms(rule.text)
                self._evidence_texts.append(text)
                own_units.append(
                    Unit(
                        text=rule.text,
                        section=None,
                        targets=[(i, 1.0)],
                        terms=_terms(text),
                        grams=_grams(text),
                    )
                )
                for c in rule.citations:
                    cited.setdefault(c.section, [])
                    if i not in cited[c.section]:
                        cited[c.section].append(i)
            for inf in policy.infractions.values():
                i = len(self.answers)
                ans = Answer(key=f"{policy.game}/{inf.id}", game=policy.game, policy=policy, infraction=inf)
                self.answers.append(ans)
                index[ans.key] = i
                strong = " ".join([inf.name, inf.name, " ".join(inf.keywords), " ".join(inf.keywords)])
                text = "\n".join([strong, inf.description, inf.remedy or "", *leads.get(inf.id, [])])
                _terms(inf.description)
                self._evidence_texts.append(text)
                own_units.append(
                    Unit(
                        text=inf.description,
                        section=None,
                        targets=[(i, 1.0)],
                        terms=_terms(text),
                        grams=_grams(text),
                    )
                )
                for c in inf.citations:
                    cited.setdefault(c.section, [])
                    if i not in cited[c.section]:
                        cited[c.section].append(i)
            for sec in corpus.sections.values():
                if sec.game != policy.game or not sec.text.strip():
                    continue
                infs = cited.get(sec.id, [])
                if not infs or SECTION_ANSWERS_EVERYWHERE:
                    j = len(self.answers)
                    self.answers.append(
                        Answer(key=f"section:{sec.id}", game=policy.game, policy=policy, section=sec)
                    )
                    index[f"section:{sec.id}"] = j
                    own = [(j, 1.0)]
                else:
                    own = []
                targets_all = own + [(i, CITED_WEIGHT) for i in infs]
                title = _terms(sec.title)
                self._evidence_texts.append(sec.title)
                for p in _passages(sec.text):
                    quoted = [
                        i
                        for i in infs
                        if any(
                            c.section == sec.id and _quote_in(c.quote, p) for c in self.answers[i].citations
                        )
                    ]
                    targets = [(i, 1.0) for i in quoted] or targets_all
                    terms = _terms(p)
                    self._evidence_texts.append(p)
                    passage_units.append(
                        Unit(text=p, section=sec.id, targets=targets, terms=terms + title, grams=_grams(p))
                    )
                section_units.append(
                    Unit(
                        text=sec.text,
                        section=sec.id,
                        targets=[(i, 1.0) for i in infs] + [(j, 0.9) for j, _ in own],
                        terms=_terms(sec.title + "\n" + sec.text),
                        grams=Counter(),
                    )
                )
        # Each answer's own evidence: its own words and the lines that stand for it at full weight.
        for u in own_units + passage_units:
            for i, w in u.targets:
                if w >= 1.0:
                    self.answers[i].terms |= set(u.terms)
                    self.answers[i].grams |= set(u.grams)
        for a in self.answers:
            if a.section is not None:
                a.terms |= set(_terms(a.section.title))
        self.index = index
        self.units = {"own": own_units, "passage": passage_units, "section": section_units}
        self.grams_units = own_units + passage_units
        self._bm = {name: _Bm25([u.terms for u in units]) for name, units in self.units.items()}
        self._bm["grams"] = _Bm25([u.grams for u in self.grams_units])
        self._unit_game = {
            name: np.array([self.answers[u.targets[0][0]].game for u in units])
            for name, units in self.units.items()
        }
        self._unit_game["grams"] = np.array([self.answers[u.targets[0][0]].game for u in self.grams_units])
        self._answer_game = np.array([a.game for a in self.answers])
        self._pairs = {}
        for name in ("own", "passage", "section", "grams"):
            units = self.grams_units if name == "grams" else self.units[name]
            pairs = [(u, i, w) for u, unit in enumerate(units) for i, w in unit.targets]
            self._pairs[name] = (
                np.array([p[0] for p in pairs], dtype=np.int64),
                np.array([p[1] for p in pairs], dtype=np.int64),
                np.array([p[2] for p in pairs]),
            )
        # Kana as typed → the text's words (katakana words by their spelling, others by their reading).
        self._kana: dict[str, tuple[str, ...]] = {}
        self._kana2: dict[str, tuple[str, ...]] = {}
        seen = dict.fromkeys(t for units in (own_units, passage_units) for u in units for t in u.terms)
        for t in seen:  # each distinct term once, in the order the units first have it
            if t.startswith("g:"):
                continue
            key = t[2:] if t.startswith("r:") else t
            key = key.replace("ー", "")
            if len(key) >= 3 and is_kana(key) and all("ァ" <= ch <= "ヺ" for ch in key):
                self._kana.setdefault(key, ())
                if t not in self._kana[key]:
                    self._kana[key] = self._kana[key] + (t,)
            elif len(key) == 2 and t.startswith("r:") and all("ァ" <= ch <= "ヺ" for ch in key):
                self._kana2.setdefault(key, ())  # two kana: only a kanji word's reading (ぼち 墓地)
                if t not in self._kana2[key]:
                    self._kana2[key] = self._kana2[key] + (t,)
        self._strong: dict[int, list[int]] = {}
        for u, unit in enumerate(passage_units):
            for i, w in unit.targets:
                if w >= 1.0:
                    self._strong.setdefault(i, []).append(u)

    # --- the query -------------------------------------------------------------------------------------

    def _query_words(self, text: str) -> tuple[list[tuple[tuple[str, ...], float]], list[str], set[int]]:
        """The query's words (each with its forms), the synonym list's phrases as weaker extra words; and
        which of them are light (`Word.light`: how or which, not what)."""
        words: list[tuple[tuple[str, ...], float]] = []
        surfaces: list[str] = []
        origin: list = []  # the analysed word of each entry (None for a synonym group's)
        folded = fold(text)
        kana = self._kana_words(folded, text)
        replaced: set[int] = set()
        pos = 0
        analysed = self._join_latin(text, self._join_keys(text, folded, analyzer().words(text)))
        for n, w in enumerate(analysed):
            if fold(w.surface) == "r" and n + 1 < len(analysed) and fold(analysed[n + 1].surface).isdigit():
                # a round's label (R2, r10): the word ラウンド, as the texts write it; no line writes a round
                # so, and the letter would weigh as the rarest word of the story
                w = replace(self._round, surface=w.surface)
            at = folded.find(fold(w.surface), pos)
            if (
                n
                and self._single_kana(analysed[n - 1])
                and self._single_kana(w)
                and words
                and not words[-1][0]
            ):
                # two kana the analyzer cut into single letters (ぼ・ち): the text's word with that reading
                joined = fold(analysed[n - 1].surface + w.surface)
                if at >= 0 and folded[at - 1 : at + 1] == joined and joined in self._kana2:
                    words[-1] = (self._kana2[joined], 1.0)
                    surfaces[-1] = analysed[n - 1].surface + w.surface
                    origin[-1] = None
                    pos = at + 1
                    continue
            if at >= 0:
                pos = at + len(w.surface)
                inside = [k for k, (a, b, _) in enumerate(kana) if a <= at and at + len(w.surface) <= b]
                if inside and not self._known(w):
                    replaced.update(inside)
                    continue  # a kana word the analyzer split into pieces the text does not have
            if _stop(w) or w.aux:
                continue
            if squash(w.surface) in self.game_names and not self._known(w):
                continue
            if self._single_kana(w) and w.forms[0] not in COUNTERS:
                words.append(
                    ((), 1.0)
                )  # a lone kana letter: nothing on its own, unless the next one joins it
                surfaces.append(w.surface)
                origin.append(w)
                continue
            # a compound verb's short units are other verbs, not its parts (持ち掛ける is no 掛ける: 時間をかける;
            # 持ち帰る no 帰る: a drop); a compound noun's are (デッキケース: デッキ, ケース)
            parts = _head(w) if w.verb else tuple(x for x in w.parts if len(x) > 1)
            alts = tuple(dict.fromkeys(w.forms + parts))
            if (is_kana(w.surface) and len(w.reading) >= 2) or _latin(w):
                alts += ("r:" + w.reading,)
            if w.forms[0] in COUNTERS:
                alts += (COUNT_TERM,)
            words.append((alts, 1.0))
            surfaces.append(w.surface)
            origin.append(w)
            if w.synonyms:  # the dictionary's synonyms: a weaker word of their own
                words.append((_groups_of(w), 0.6))
                surfaces.append(w.surface)
                origin.append(None)
        keep = [k for k, (alts, _) in enumerate(words) if alts]
        words, surfaces, origin = (
            [words[k] for k in keep],
            [surfaces[k] for k in keep],
            [origin[k] for k in keep],
        )
        for k in sorted(replaced):
            a, b, alts = kana[k]
            words.append((alts, 1.0))
            surfaces.append(text[a:b])
            origin.append(None)
        s = squash(text)
        query_forms = {f for w in analysed for f in _key_forms(w)}
        # a one-word key is found by the form of a word the story says, not of its grammar (いた, a stop word,
        # has the form いる of the key いらない), and a negated key by a negated word (いらない by 要りません, not
        # by 要る)
        said: dict[int, set[str]] = {}
        pos = 0
        for w in analysed:
            at = folded.find(fold(w.surface), pos)
            if at >= 0:
                pos = at + len(w.surface)
            if not (_stop(w) or w.aux or (at >= 0 and _DENIED.match(folded, pos))):
                forms = set(_key_forms(w))
                if at >= 0 and _NEGATION.match(folded, pos):
                    forms.update(NEGATED + f for f in w.forms)
                said[id(w)] = forms
        said_forms = set().union(*said.values())
        # the story's latin words, each and two side by side (trash talk), as a key in latin letters is written: a
        # key is found so where the squashed story runs it into a number (late 10分: late10分)
        latin = [fold(x) for x in _LATIN_WORD_RE.findall(text)]
        latin = set(latin) | {a + b for a, b in zip(latin, latin[1:], strict=False)}
        phrases: dict[int, list[str]] = {}  # a word a synonym entry's key names → that entry's phrases
        extra: list[tuple[tuple[str, ...], float]] = []
        for (keys, _), forms, parts, per_means in zip(
            self.synonyms, self._syn_forms, self._syn_parts, self._syn_phrases, strict=False
        ):
            joined = set()
            for p in parts:  # a compound key by its short units one after the other (持って帰る)
                if not all(x in query_forms for x in p):  # each unit somewhere in the query, first
                    continue
                for n in range(len(analysed) - len(p) + 1):
                    if all(p[j] in analysed[n + j].forms for j in range(len(p))):
                        joined.update(id(analysed[n + j]) for j in range(len(p)))
            found = [
                k
                for k in keys
                if k
                and k in s
                and (
                    not k.isascii() or k in latin or re.search(rf"(?<![a-z0-9]){re.escape(k)}(?![a-z0-9])", s)
                )
                and any(not _DENIED.match(s, m.end()) for m in re.finditer(re.escape(k), s))
            ]
            if not (forms & said_forms or found or joined):
                continue
            encoded = []
            extra.extend(_phrase_words(per_means))
            for ws in per_means:
                if ws:
                    encoded.append(PHRASE_SEP.join(w.forms[0] for w in ws))
            for k, w in enumerate(origin):
                sq = squash(w.surface) if w is not None else ""
                if w is not None and (
                    said.get(id(w), set()) & forms
                    or id(w) in joined
                    or (len(sq) >= 2 and any(sq in f for f in found))
                ):
                    phrases.setdefault(k, []).extend(encoded)
        # Where a key of the list names a query word, the word also counts as found (0.8, as a dictionary
        # synonym) in evidence that holds one of the entry's phrases whole: an entry after the word (and its
        # synonym group), weighing nothing in the rankings.
        out_words, out_surfaces = [], []
        light = set()
        for k, (entry, surface) in enumerate(zip(words, surfaces, strict=False)):
            if (
                origin[k] is not None
                and (origin[k].light or origin[k].forms[0] in OPPONENT)
                and entry[1] >= 1.0
            ):
                light.add(len(out_words))
            out_words.append(entry)
            out_surfaces.append(surface)
            owner = (
                k if k in phrases else k - 1 if entry[0][0].startswith("g:") and k - 1 in phrases else None
            )
            nxt = k + 1 < len(words) and words[k + 1][0][0].startswith("g:") and owner == k
            if owner is not None and not nxt:
                out_words.append((("p:",) + tuple(dict.fromkeys(phrases[owner])), 0.0))
                out_surfaces.append(surfaces[owner])
        # A game score (1-0, 1-1) is read as the texts say it: one player ahead, or both even
        for m in _SCORE_RE.finditer(fold(text)):
            extra.extend(self._score_words[m.group(1) == m.group(2)])
        out_words += extra
        out_surfaces += [""] * len(extra)
        return out_words, out_surfaces, light

    def _romaji(self, text: str) -> str:
        """A word of the texts typed in romaji (chuui, chikoku, shikkaku: a judge without a Japanese keyboard) in
        hiragana, as meant, for the analyzer, the kana reader and the counts (`_counts` reads a level's reading):
        a lower-case latin word of four letters or more, romaji through and through, that the dictionary reads as
        no loan word (game, same, main stay English: ゲーム, セイム, メイン), is no key of the synonym list, and
        whose kana is a word of the texts (its spelling in katakana or its reading: チュウイ, 注意)."""
        if not _LATIN_WORD_RE.search(text):
            return text

        def read(m: re.Match) -> str:
            word = m.group()
            kana = self._romaji_memo.get(word, "")
            if kana == "":
                kana = None
                hira = romaji_to_hiragana(word) if word.islower() and len(word) >= 4 else None
                if hira is not None and squash(word) not in self._syn_keys:
                    ws = analyzer().words(word)
                    loan = len(ws) != 1 or not all(f.isascii() for f in ws[0].forms)  # game: ゲーム
                    if not loan and (
                        fold(hira).replace("ー", "") in self._kana
                        or any(self._known(w) for w in analyzer().words(hira) if len(w.surface) == len(hira))
                    ):
                        kana = hira
                if len(self._romaji_memo) < 10000:
                    self._romaji_memo[word] = kana
            return kana or word

        return _LATIN_WORD_RE.sub(read, text)

    def _join_keys(self, text: str, folded: str, analysed: list[Word]) -> list[Word]:
        """A key of the synonym list the analyzer cut into words of which one the text never uses (出停中:
        出・停・中) is one word, the key: the pieces say nothing of what the judge means."""
        spans, pos = [], 0
        for w in analysed:
            at = folded.find(fold(w.surface), pos)
            spans.append((at, at + len(w.surface)) if at >= 0 else None)
            if at >= 0:
                pos = at + len(w.surface)
        out = list(analysed)
        # the keys that may be in the story (their first character is), longest first
        keys = sorted((k for ch in set(folded) for k in self._split_keys.get(ch, ())), key=len, reverse=True)
        for key in keys:
            a = folded.find(key)
            if a < 0:
                continue
            b = a + len(key)
            inside = [
                n for n, sp in enumerate(spans) if sp and a <= sp[0] and sp[1] <= b and out[n] is not None
            ]
            if (
                len(inside) < 2
                or spans[inside[0]][0] != a
                or spans[inside[-1]][1] != b
                or inside != list(range(inside[0], inside[-1] + 1))
                or all(self._known(analysed[n]) for n in inside)
            ):
                continue
            out[inside[0]] = Word(surface=text[a:b], forms=(key,), reading="", parts=())
            for n in inside[1:]:
                out[n] = None
        return [w for w in out if w is not None]

    def _join_latin(self, text: str, analysed: list[Word]) -> list[Word]:
        """Two English words a judge types apart (game loss, deck check, head judge) whose katakana, joined, is
        one word of the texts (ゲームロス, デッキチェック, ヘッドジャッジ): that word; each alone is a setting word
        (ゲーム, デッキ) or none (ロス)."""
        out: list[Word] = []
        for w in analysed:
            prev = out[-1] if out else None
            if (
                prev is not None
                and _latin(w)
                and (_latin(prev) or prev.surface.isascii() and " " in prev.surface)
            ):
                joined = fold(prev.reading + w.reading).replace("ー", "")
                surface = f"{prev.surface} {w.surface}"
                alts = self._kana.get(joined)
                if alts and surface in text:
                    out[-1] = Word(surface=surface, forms=alts, reading=prev.reading + w.reading, parts=())
                    continue
            out.append(w)
        return out

    def _single_kana(self, w: Word) -> bool:
        """A single kana letter the text does not have as a word (the analyzer's leftover of a kana word)."""
        return len(w.surface) == 1 and is_kana(w.surface) and not self._known(w)

    def _known(self, w: Word) -> bool:
        """Whether any form of the word stands in the text."""
        post = self._bm["passage"].post
        own = self._bm["own"].post
        return any(f in post or f in own for f in w.forms + w.parts)

    def _kana_words(self, folded: str, text: str | None = None) -> list[tuple[int, int, tuple[str, ...]]]:
        """Words of the text found inside a run of kana as typed (ぱいるしゃっふる, すりーぶ, ちこく): a word
        written in katakana in the text, or a word whose reading it is; longest first, three kana at least.
        The analyzer splits such runs into pieces; these are the text's own words in them. With the query as
        typed (`text`, folded to `folded` letter for letter), a stretch that cuts across its words is none
        (`_across_words`: してき in 申請してきた is not 指摘)."""
        out = []
        pieces = None  # the query's words as the analyzer reads them: analysed only when a kana word is found
        for m in _KANA_RUN.finditer(folded):
            run, start = m.group(), m.start()
            i = 0
            while i <= len(run) - 3:
                for j in range(min(len(run), i + 16), i + 2, -1):
                    alts = self._kana.get(run[i:j].replace("ー", ""))
                    if alts and text is not None:
                        if pieces is None:
                            pieces = analyzer().parts_of_speech(text)
                        if _across_words(pieces, start + i, start + j):
                            continue
                    if alts:
                        out.append((start + i, start + j, alts))
                        i = j
                        break
                else:
                    i += 1
        return out

    def search(
        self, query: str, game: str | None = None, limit: int = 10, every_name: bool = False
    ) -> LookupResult:
        """Answers for a situation told in a judge's words, best first; `none` when nothing fits. The game's own
        names are left out of the story (every game's without a game, or with `every_name`)."""
        text = clean_query(query)
        limit = max(1, min(int(limit), 100))
        if not text:
            return LookupResult(query=text, matches=[], none=False, message=None, coverage=0.0)
        names = self._own_name_re.get(game) if game and not every_name else self._name_re
        story = self._romaji(names.sub(" ", _story(text)) if names else _story(text))
        words, surfaces, light = self._query_words(story)
        qgrams = set(_grams(story))  # (without the game's names, as its words)
        fused = np.zeros(len(self.answers))
        passage_scores = None
        for name in ("own", "passage", "section", "grams"):
            if name == "grams":
                scores = self._bm[name].scores([((g,), 1.0) for g in qgrams])
            else:
                scores = self._bm[name].scores(words)
            if game is not None:
                scores = np.where(self._unit_game[name] == game, scores, 0.0)
            if name == "passage":
                passage_scores = scores
            pu, pa, pw = self._pairs[name]
            per_answer = np.zeros(len(self.answers))
            np.maximum.at(per_answer, pa, scores[pu] * pw)
            ranked = np.argsort(-per_answer, kind="stable")[:50]
            ranked = ranked[per_answer[ranked] > 0]
            fused[ranked] += WEIGHTS[name] / (RRF_K + np.arange(1, len(ranked) + 1))
        # The fused rank's first candidates, ranked again by how much of the story each one's evidence covers:
        # an answer found high in one ranking but covering little of the story goes below one covering most.
        order = [i for i in np.argsort(-fused, kind="stable") if fused[i] > 0][: max(limit, RERANK)]
        quoted = _quoted_only(text, surfaces)

        def weighed(raw: list[float]) -> list[float]:  # a word only in quotes, a light word: weaker
            return [
                w * (QUOTED_WEIGHT if k in quoted else 1.0) * (LIGHT_WEIGHT if k in light else 1.0)
                for k, w in enumerate(raw)
            ]

        ranking = weighed(self._word_weights(words))
        weights = ranking
        matches = []
        for i in order:
            lines: dict[int, float] = {}
            cov, matched = self._coverage(i, words, weights, qgrams, lines)
            matches.append(
                self._match(i, float(fused[i]), cov, matched, surfaces, words, passage_scores, lines)
            )
        matches.sort(
            key=lambda m: -m.score * m.coverage**COVERAGE_POWER * (ONE_WORD if m.found <= 1 else 1.0)
        )

        def make(key: str) -> Match | None:  # a rule the story's counts reach, where the ranking left it out
            i = self.index[key]
            lines: dict[int, float] = {}
            cov, matched = self._coverage(i, words, weights, qgrams, lines)
            return self._match(i, float(fused[i]), cov, matched, surfaces, words, passage_scores, lines)

        policies = [p for g in ([game] if game else self.policies.games) if (p := self.policies.get(g))]
        matches, reached = _counted_first(
            _sections_first(matches), story, policies, make, self._level_aliases
        )
        matches = matches[:limit]
        # The nothing-fits test weighs a word found only through its synonym group as that group (選手: プレイヤー);
        # the ranking above keeps the word's own rarity (the group's there lost first answers).
        weights = weighed(self._word_weights(words, by_group=True))
        if weights == ranking:  # no word weighs as its group: the coverage is the ranking's
            fitcov = [m.coverage for m in matches[:3]]
        else:
            fitcov = [
                self._coverage(self.index[m.answer.key], words, weights, qgrams)[0] for m in matches[:3]
            ]
        total = sum(w for (_, x), w in zip(words, weights, strict=False) if x >= 1.0)
        fits = [
            m
            for m, c in zip(matches[:3], fitcov, strict=True)
            if c >= NONE_THRESHOLD
            or (c >= NONE_THRESHOLD_WORDS and m.found >= 2)
            or (c >= NONE_MASS_FLOOR and m.found >= NONE_MASS_WORDS and c * total >= NONE_MASS)
            # the rule the story's counts reach fits, in the game the judge chose: the counts are its subject (in
            # every game's lookup a game fits by its words: 注意 and 警告 are every laddered game's levels)
            or (m.answer.key in reached and game is not None and not every_name)
        ]
        best = max(fitcov, default=0.0)
        if not fits:
            return LookupResult(query=text, matches=[], none=True, message=NONE_MESSAGE, coverage=best)
        return LookupResult(query=text, matches=matches, none=False, message=None, coverage=best)

    def search_all(self, query: str, limit: int = 3) -> LookupResult:
        """The same lookup in every game at once, grouped by game (the games whose text fits, best first);
        `none` when no game's text fits. Every game's names are left out of the story in each game (イジンデン in
        a story is no word of Lycee's text), and a game the story names comes first where its text fits."""
        text = clean_query(query)
        named = tuple(
            g for g, names in self._own_name_re.items() if names is not None and _names_it(names, text)
        )
        results = [self.search(query, game=g, limit=limit, every_name=True) for g in self.policies.games]
        # The games in the order their answers come in one ranking of every game's (as the API without a game
        # and the offline lookup rank them): a game whose evidence covers more of the story's words is not put
        # before the game with the best answer (tuning tables: the story's game first 1016 → 1095 of 1382).
        seen: dict[str, int] = {}
        for i, m in enumerate(self.search(query, limit=RANK_ALL).matches):
            seen.setdefault(m.answer.game, i)
        fitting = sorted(
            (r for r in results if not r.none and r.matches),
            key=lambda r: (
                r.matches[0].answer.game not in named,
                seen.get(r.matches[0].answer.game, RANK_ALL),
                -r.coverage,
                -r.matches[0].score,
            ),
        )
        if not fitting:
            return LookupResult(
                query=text,
                matches=[],
                none=bool(text),
                message=NONE_MESSAGE_ALL if text else None,
                coverage=max((r.coverage for r in results), default=0.0),
                named=named,
            )
        return LookupResult(
            query=text,
            matches=[m for r in fitting for m in r.matches],
            none=False,
            message=None,
            coverage=fitting[0].coverage,
            named=named,
        )

    def evidence_terms(self, groups: bool = False) -> tuple[int, dict[str, tuple[int, set[str]]]]:
        """Every term of the evidence with the number of the text's lines that hold it (what a word's weight
        in the nothing-fits test comes from) and the games whose evidence holds it; and the number of lines.
        The offline lookup's nothing-fits test reads it (judgeapp/offline.py). With `groups`, the dictionary
        synonym groups' terms (g:…) instead of the words'."""
        bm = self._bm["passage"]
        out: dict[str, tuple[int, set[str]]] = {}
        units = [(a.game, a.terms) for a in self.answers] + [
            (self.answers[u.targets[0][0]].game, u.terms) for u in self.units["passage"]
        ]
        for game, terms in units:
            for t in terms:
                if t.startswith("g:") != groups:
                    continue
                if t not in out:
                    p = bm.post.get(t)
                    out[t] = (len(p[0]) if p is not None else 0, set())
                out[t][1].add(game)
        return bm.n, out

    def word_groups(self) -> dict[str, tuple[str, ...]]:
        """Each word of the evidence by its first form (the normalized one: 攻撃, アタック) → its dictionary
        synonym groups' terms (`_groups_of`), as a story's word of that form has them: what the offline lookup
        needs to find a story's word through its group, as `_coverage_of` does (judgeapp/offline.py)."""
        out: dict[str, dict[str, None]] = {}
        for text in self._evidence_texts:
            for w in analyzer().words(text):
                if w.synonyms and w.forms[0] not in STOP:
                    out.setdefault(w.forms[0], {}).update(dict.fromkeys(_groups_of(w)))
        return {f: tuple(gs) for f, gs in out.items()}

    def group_lines(self, groups: Iterable[str]) -> int:
        """The number of the text's lines that hold any of these synonym groups (a word no line spells weighs
        as its group in the nothing-fits test: `_word_weights`)."""
        tf = self._bm["passage"].word_tf(tuple(groups))
        return int(np.count_nonzero(tf)) if tf is not None else 0

    def level_lines(self) -> list[tuple[Answer, Level, str]]:
        """Each level's own line a section's answer can be given on (`line_level`: ijinden ch10-2 to 10-4), with
        its section's answer: what the offline lookup lists as that level (judgeapp/offline.py)."""
        out = []
        for u in self.units["passage"]:
            for i, w in u.targets:
                a = self.answers[i]
                if w >= 1.0 and (level := line_level(a, u.text)) is not None:
                    out.append((a, level, u.text))
        return out

    def story_export(self) -> dict:
        """What the browser needs to read a story as `_story` and `search` do (static/offline-search.js
        `story`): the patterns' sources (JavaScript reads them alike), the kana counters, and the games' names
        left out of a story's words ("" for every game's, a story searched without a game)."""
        names = {"": self._name_re, **self._own_name_re}
        return {
            "counter": _KANA_COUNTER_RE.pattern,
            "counters": _KANA_COUNTERS,
            "spaced": _SPACED_RE.pattern,
            "jp_space": _JP_SPACE_RE.pattern,
            "after_particle": _AFTER_PARTICLE_RE.pattern,
            "particle_after_name": _PARTICLE_AFTER_RE.pattern,
            "subs": [[p.pattern, repl.replace("\\1", "$1")] for p, repl in _STORY_SUBS],
            "names": {g: r.pattern for g, r in names.items() if r is not None},
        }

    def _word_weights(
        self, words: list[tuple[tuple[str, ...], float]], by_group: bool = False
    ) -> list[float]:
        """Each word's weight: its idf over the text's lines, to the power IDF_POWER. With `by_group` (the
        nothing-fits test), a word no line spells but whose dictionary synonym group the lines hold weighs as
        that group does: 選手 is found as プレイヤー, the commonest word of the texts, and must not weigh as a
        word the texts never use. A word in latin letters that no line spells and that the synonym list gives
        as initials of the texts' words (PL: プレイヤー) weighs as those words, always: it is a setting word,
        not the rarest of the story."""
        bm = self._bm["passage"]
        out = []
        for k, (alts, w) in enumerate(words):
            tf = bm.word_tf(alts)
            df = int(np.count_nonzero(tf)) if tf is not None else 0
            if not df and w >= 1.0 and alts and alts[0] in self._initials:
                tf = bm.word_tf(self._initials[alts[0]])
                df = int(np.count_nonzero(tf)) if tf is not None else 0
            if by_group and not df and w >= 1.0 and k + 1 < len(words) and words[k + 1][0][:1]:
                group = words[k + 1][0]
                if group[0].startswith("g:"):
                    tf = bm.word_tf(group)
                    df = int(np.count_nonzero(tf)) if tf is not None else 0
            out.append(w * math.log(1 + (bm.n - df + 0.5) / (df + 0.5)) ** IDF_POWER)
        return out

    def _coverage(
        self,
        i: int,
        words: list[tuple[tuple[str, ...], float]],
        weights: list[float],
        qgrams: Collection[str],
        lines: dict[int, float] | None = None,
    ) -> tuple[float, list[int]]:
        """The share of the query's weight found in the answer's own evidence (words, or else bigrams).

        An infraction's or a rule's evidence is all of its own words and the lines it quotes; a section's is
        each of its lines on its own (with the title), the best one counting: a long section holds many words.
        A word found only through its dictionary synonym (the entry after it, weight < 1) counts 0.8; a
        phrase of the synonym list found adds half its weight, never more than the query's total."""
        answer = self.answers[i]
        if answer.section is None:
            return self._coverage_of(answer.terms, answer.grams, words, weights, qgrams)
        best: tuple[float, list[int]] = (0.0, [])
        for u in self._strong.get(i, ()):
            unit = self.units["passage"][u]
            got = self._coverage_of(unit.terms, unit.grams, words, weights, qgrams)
            if lines is not None:
                lines[u] = got[0]
            if got[0] > best[0]:
                best = got
        return best

    def _coverage_of(
        self,
        terms: Collection[str],
        grams: Collection[str],
        words: list[tuple[tuple[str, ...], float]],
        weights: list[float],
        qgrams: Collection[str],
    ) -> tuple[float, list[int]]:
        total = got = 0.0
        matched = []
        k = 0
        while k < len(words):
            alts, x = words[k]
            hit = any(a in terms for a in alts)
            if hit:
                matched.append(k)
            if x >= 1.0:
                total += weights[k]
                syn = k + 1 < len(words) and words[k + 1][0] and words[k + 1][0][0].startswith("g:")
                j = k + 2 if syn else k + 1
                phrase = j < len(words) and words[j][0] and words[j][0][0] == "p:"
                if hit:
                    got += weights[k]
                elif syn and any(a in terms for a in words[k + 1][0]):
                    got += 0.8 * weights[k]
                    matched.append(k + 1)
                elif phrase and any(all(f in terms for f in p.split(PHRASE_SEP)) for p in words[j][0][1:]):
                    got += 0.8 * weights[k]
                    matched.append(k)
                if syn:
                    k += 1
                if phrase:
                    k += 1
            elif hit:
                got += 0.5 * weights[k]
            k += 1
        word_cov = min(1.0, got / total) if total else 0.0
        gram_cov = sum(1 for g in qgrams if g in grams) / len(qgrams) if qgrams else 0.0
        return max(word_cov, gram_cov * 0.9), matched

    def _line(self, u: int) -> str:
        return self.units["passage"][u].text

    def _match(
        self,
        i: int,
        score: float,
        cov: float,
        matched: list[int],
        surfaces: list[str],
        words: list[tuple[tuple[str, ...], float]],
        passage_scores: np.ndarray | None,
        lines: dict[int, float] | None = None,
    ) -> Match:
        a = self.answers[i]
        alts = set(t for k in matched for t in words[k][0])
        # The section that carries the answer: a penalty is carried by the section that prescribes it (the
        # first citation); otherwise the line that matched best says what the text decides.
        carrier = a.citations[0].section if a.infraction is not None and a.infraction.penalty else None
        best = None
        for u in self._strong.get(i, ()):
            if carrier and self.units["passage"][u].section != carrier:
                continue
            if passage_scores[u] > 0 and (best is None or passage_scores[u] > passage_scores[best]):
                best = u
        # A section's line that says a penalty may follow (「ペナルティが与えられることがあります」) is shown, and so
        # flags discretion, when it holds as much of the story as any line of the section and the line that
        # scored best leaves nothing open (スコアカード 返送忘れ: 「…返送して下さい」 and 「…返送されなかった場合、
        # …ペナルティが与えられることがあります」 hold the same words). Only 「ことがあります」「場合があります」: a line
        # that says who decides (「判断を行います」) or what is allowed (「できる」) does not leave a penalty open.
        if a.section is not None and lines and not (best is not None and OPEN_RE.search(self._line(best))):
            top = max(lines.values())
            opens = [
                u
                for u, c in lines.items()
                if c >= top - 1e-9 and passage_scores[u] > 0 and MAY_RE.search(self._line(u))
            ]
            if opens:
                best = max(opens, key=lambda u: passage_scores[u])
        if best is not None:
            unit = self.units["passage"][best]
            passage, section = unit.text, unit.section
        elif a.infraction is not None:
            passage, section = a.infraction.description, a.infraction.citations[0].section
        elif a.rule is not None:
            passage, section = a.rule.text, a.rule.citations[0].section
        else:
            passage, section = _passages(a.section.text)[0], a.section.id
        if a.section is not None:
            section = a.section.id
        found = len({k for k in matched if words[k][1] >= 1.0 or words[k][0][0].startswith("g:")})
        return Match(
            answer=a,
            score=round(score, 4),
            coverage=round(cov, 3),
            found=found,
            words=list(dict.fromkeys(surfaces[k] for k in matched if surfaces[k])),
            section=section,
            passage=passage,
            alternatives=frozenset(alts),
            from_text=best is not None or a.section is not None,
        )


def _sections_first(matches: list[Match]) -> list[Match]:
    """A section's answer goes before another section's, or before an infraction or rule that cites that
    section, when its line covers more of the story: two sections' coverages are measured alike (each its
    best line with its title), and a story that a cited section's line holds better than the infraction's
    own evidence is about what the section decides (「出場停止中の人が…申し込んできた」: 3a's line, not the
    infraction of visiting while suspended)."""
    out = list(matches)
    for m in matches:
        if m.answer.section is None:
            continue
        sid, at = m.answer.section.id, out.index(m)
        for q, o in enumerate(out[:at]):
            if m.coverage > o.coverage and (
                o.answer.section is not None or any(c.section == sid for c in o.answer.citations)
            ):
                out.insert(q, out.pop(at))
                break
    return out


_CLAUSE_END_RE = re.compile(r"[、。,，.！？!?]")
_COUNT_DENIED_RE = re.compile(fold(r".{0,8}?(ない|なかっ|ません|なし|無し|ず[、。]?$)"))
_PERSONS = tuple(
    fold(p) for p in ("相手", "自分", "私", "僕", "俺", "両者", "双方", "二人", "ふたり", "もう一人")
)
# After a level's count with no counter (警告1、W1 N2): not a count of something else (注意5分, 警告1ゲーム目)
_BARE_COUNT_END = r"(?![0-9]|[分秒時日人本戦年月位]|ターン|ラウンド|ゲーム|マッチ|試合)"
# The text's 「何度も」 as a judge says it (何回も注意, 毎回注意で済ませてきた, 警告を繰り返し): a level received more
# than once, with no number (`_counts`: two at least)
_MANY = r"(?:何度も|何回も|なんども|なんかいも|何べんも|毎回|繰り返し|くりかえし|再三|度々|たびたび)"
# A new penalty of a level told in the story (また注意, またカードの扱いで注意受けた): one more than the earlier
# ones (not または, "or")
_AGAIN = r"(?:また(?!は)|再び|ふたたび|再度)"
_WITHIN = r"[^、。,，.！？!?]{0,12}?"  # in the same clause, a few characters apart
# 注意しても, 注意されても, 注意を受けても: the act of telling (even though told), not a penalty on record; nor
# 注意して見て, 注意してね, 注意するように (telling a player to take care)
_TOLD = r"(?!\s*(?:を|は)?\s*(?:し|され|受け|もらっ|出し)?\s*ても|して|するよう)"
# a word of its own that begins with a level's label (注意不足, 注意点, 注意事項, 注意深く, 注意書き, 注意喚起, 警告文)
_COMPOUND = r"(?!不足|点|事項|深|書|喚起|文)"


@cache
def _level_names(label: str, mark: str, aliases: tuple[str, ...] = ()) -> str:
    """A level as a story names it, as a pattern (folded with the rest): its label (not 不注意), its label's reading
    (ちゅうい, けいこく: kana for the kanji, or romaji read by `Lookup._romaji`), its mark where the mark is a letter
    (Lycee's N and W, not inside a latin word: not the W of WIN; イジンデン's ①…④ fold to digits and are no names),
    and `aliases`, the synonym list's latin words for the label alone (warning: 警告; `Lookup._level_aliases`)."""
    names = [rf"(?<!不){re.escape(label)}{_COMPOUND}"]
    reading = "".join(w.reading for w in analyzer().words(label))
    if len(reading) >= 3 and is_kana(reading):
        names.append(rf"(?<![フふ]){re.escape(fold(reading))}")
    mark = fold(mark)
    if mark.isascii() and mark.isalpha():
        names.append(rf"(?<![a-z]){re.escape(mark)}(?![a-z])")
    names += [rf"(?<![a-z]){re.escape(fold(a))}(?![a-z])" for a in aliases]
    return "(?:" + "|".join(names) + ")"


@cache
def _count_re(label: str, mark: str = "", aliases: tuple[str, ...] = ()) -> re.Pattern:
    """A count of a level in a folded story: 注意を2回, 警告1点, 2回目の注意, 3回目注意, and, with no counter,
    警告1、 and the mark's W1 N2, N4つ目 (not 注意5分)."""
    name = _level_names(label, mark, aliases)
    return re.compile(
        fold(
            rf"{name}(?:を|が|は|も|\s)?{_NUMBER}(?:{_COUNTER}目?|目|{_BARE_COUNT_END})"
            rf"|{_NUMBER}{_COUNTER}(?:目の?|の){name}"
        )
    )


@cache
def _mention_res(
    label: str, mark: str, aliases: tuple[str, ...] = ()
) -> tuple[re.Pattern, re.Pattern, re.Pattern]:
    """A level named (a penalty received, no number), told as a new one (また注意), and as many (何回も注意); not
    the word of telling someone (「なんども注意されてもやめません」, 「注意してもやめない」: no record)."""
    name = _level_names(label, mark, aliases) + _TOLD
    return (
        re.compile(fold(name)),
        re.compile(fold(_AGAIN + _WITHIN + name)),
        re.compile(fold(rf"{_MANY}{_WITHIN}{name}|{name}{_WITHIN}{_MANY}")),
    )


def _denied_before(folded: str, end: int, names: re.Pattern | None = None) -> bool:
    """The story denies what stands before `end` in its clause, up to the next level it names (`names`):
    警告を2回もらっていない, Wはなし (but 「N4つ目 Wはなし」 denies the W only)."""
    rest = _CLAUSE_END_RE.split(folded[end:], 1)[0]
    if names is not None and (m := names.search(rest)):
        rest = rest[: m.start()]
    return bool(_COUNT_DENIED_RE.match(rest))


@cache
def _any_level_re(levels: tuple[tuple[str, str, tuple[str, ...]], ...]) -> re.Pattern:
    return re.compile(fold("|".join(_level_names(label, mark, al) for label, mark, al in levels)))


def _counts(policy: Policy, text: str, aliases: dict[str, tuple[str, ...]] | None = None) -> dict[str, int]:
    """The levels a story counts, each level's count: its largest count (注意を4回もらってる, 警告1回と注意2回,
    2回目の注意, W1 N2, N4つ目); a level told as a new one (また注意) one more than the earlier ones (counted, or
    each named once: 「R2で警告、R5でまた警告」 is two, as 「すでに注意…また注意」); a level received 「何回も」 two
    at least (no more: the story gives no number)."""
    out: dict[str, int] = {}
    folded = fold(text)
    clauses = set()  # the clauses (between 、 and 。) the counts are in
    aliases = aliases or {}
    names = _any_level_re(
        tuple((lv.label, lv.mark, aliases.get(lv.label, ())) for lv in policy.levels.values())
    )

    def denied(folded: str, end: int) -> bool:  # up to the next level the story names
        return _denied_before(folded, end, names)

    for lv in policy.levels.values():
        counted = 0
        spans = []
        al = aliases.get(lv.label, ())
        for m in _count_re(lv.label, lv.mark, al).finditer(folded):
            spans.append(m.span())
            if denied(folded, m.end()):  # a count the story denies (警告を2回もらっていない) is none
                continue
            x = m.group(1) or m.group(2)
            n = int(x) if x.isdigit() else _NUMBERS.get(x, 0)
            if 0 < n < 20:
                counted = max(counted, n)
                clauses.add(len(_CLAUSE_END_RE.findall(folded[: m.start()])))
        named_re, again_re, many_re = _mention_res(lv.label, lv.mark, al)
        again = 0
        for m in again_re.finditer(folded):
            if not denied(folded, m.end()):
                again += 1
                spans.append(m.span())
        if again:
            named = sum(
                1
                for m in named_re.finditer(folded)
                if not any(a <= m.start() < b for a, b in spans) and not denied(folded, m.end())
            )
            counted = max(counted, named, 1) + again
        if any(not denied(folded, m.end()) for m in many_re.finditer(folded)):
            counted = max(counted, 2)
        if counted:
            out[lv.label] = counted
    # counts in two clauses of a story that names two people (相手は注意2回、自分は警告1回) are not one player's
    if len(clauses) > 1 and len({p for p in _PERSONS if p in folded}) > 1:
        return {}
    return out


# The story's infraction told as a repeat by an ordinal (ドローの余分 今日3回目): the second time and on; not the
# ordinal of a round, a game, a turn (3回目のラウンド, ゲーム2回目, 2度目のマリガン: group 1 or 3 then)
_ROUNDS = r"(?:ラウンド|ゲーム|試合|対戦|マッチ|ターン|回戦|マリガン|シャッフル)"
_REPEAT_RE = re.compile(
    fold(rf"({_ROUNDS}\s*)?(?<![0-9])([2-9]|[二三四五六七八九])(?:回|度)目(\s*の?\s*{_ROUNDS})?")
)


def _repeated(policy: Policy, text: str, first: Match | None) -> dict[str, int]:
    """A story that tells its infraction as the player's second, third… time (「ドローの余分 今日3回目 同じ人」) and
    names no level: where the first answer is an infraction whose penalty is a level of the text (イジンデン's
    余分なドロー: 【注意】), that level that many times — the text's 「ペナルティが科せられた後もルール違反が繰り返し
    行われた場合」 (ch10). {} otherwise."""
    inf = first.answer.infraction if first is not None else None
    level = policy.levels.get(inf.penalty) if inf is not None and inf.penalty else None
    if level is None:
        return {}
    for m in _REPEAT_RE.finditer(fold(text)):
        if not (m.group(1) or m.group(3)):
            x = m.group(2)
            return {level.label: int(x) if x.isdigit() else _NUMBERS[x]}
    return {}


def _reached(policy: Policy, counts: dict[str, int]) -> Rule | None:
    """The rule a story's counts reach (`_counts`) by the standing engine and the text's rules: a removal reached
    (two 警告, after 注意 2 点 = 警告 1 点) first; else an upgrade whose count is reached (a rule without a count,
    the text's 「何度も」: two or more, as the engine offers it), the heaviest level's; else a conversion reached."""
    if not policy.file.rules or not counts:
        return None
    s = standing(policy, [lbl for lbl, n in counts.items() for _ in range(n)])
    order = [lv.label for lv in policy.levels.values()]
    upgrade = converts = None
    for rule in policy.file.rules:
        label = policy.levels[rule.level].label
        n = counts.get(label, 0)
        if rule.kind == "removes" and rule.automatic and s.removed:
            return rule
        heavier = upgrade is None or order.index(label) > order.index(policy.levels[upgrade.level].label)
        if rule.kind == "upgrade" and n >= (rule.count or 2) and heavier:
            upgrade = rule
        if rule.kind == "converts" and rule.automatic and n >= rule.count:
            converts = converts or rule
    return upgrade or converts


def _counted_first(
    matches: list[Match],
    text: str,
    policies: Iterable[Policy],
    make: Callable[[str], Match | None] | None = None,
    aliases: dict[str, tuple[str, ...]] | None = None,
) -> tuple[list[Match], set[str]]:
    """Where a story counts a game's levels (「警告1回と注意2回」, 「何回も注意もらってる人がまた…」), the rule those
    counts reach (`_reached`) goes first of that game's answers, before the infraction the story also tells: what
    the player's record comes to is the answer. `make(key)` makes the rule's match where the ranking did not
    bring it (None: it stays out). Returns the matches and the keys of the rules reached (they fit)."""
    out = list(matches)
    reached = set()
    for policy in policies:
        if not policy.file.rules:
            continue
        first = next((m for m in out if m.answer.game == policy.game), None)
        rule = _reached(policy, _counts(policy, text, aliases) or _repeated(policy, text, first))
        if rule is None:
            continue
        key = f"{policy.game}/rule:{rule.id}"
        at = next((k for k, m in enumerate(out) if m.answer.key == key), None)
        if at is None:
            m = make(key) if make else None
            if m is None:
                continue
            out.append(m)
            at = len(out) - 1
        first = next(k for k, m in enumerate(out) if m.answer.game == policy.game)
        out.insert(first, out.pop(at))
        reached.add(key)
    return out, reached


def mark(text: str, alternatives: set[str]) -> Markup:
    """The text with each word that matched the query in <mark>; everything else escaped."""
    out = []
    pos = 0
    if text not in _ANALYSED:
        _terms(text)
    for at, end, terms in _ANALYSED.get(text, ()):
        if at < pos:
            continue
        if terms & alternatives:
            out.append(str(escape(text[pos:at])))
            out.append(f"<mark>{escape(text[at:end])}</mark>")
            pos = end
    out.append(str(escape(text[pos:])))
    return Markup("".join(out))


def infraction_fields(policy: Policy, inf: Infraction) -> dict:
    """An infraction as the JSON API gives it, wherever it is listed (the lookup, /api/infractions/<id>)."""
    return {
        "id": f"{policy.game}/{inf.id}",
        "game": policy.game,
        "name": inf.name,
        "description": inf.description,
        "penalty": policy.penalty_label(inf),
        "penalty_id": inf.penalty,
        "penalty_may": policy.penalty_may(inf),
        "discretion": inf.discretion,
        "discretion_note": inf.discretion_note,
        "head_judge": inf.head_judge,
        "procedure": inf.procedure,
        "remedy": inf.remedy,
        "also": inf.also
        + [
            f"{policy.consequences[c].label}：{policy.consequences[c].description}"
            for c in inf.also_consequences
        ],
        "citations": [c.section for c in inf.citations],
        "quotes": [{"section": c.section, "quote": c.quote} for c in inf.citations],
        "url": f"/wizard/{policy.game}/{inf.id}",
    }


def match_json(m: Match) -> dict:
    """One match as the API gives it: an infraction's fields, or a section's with `penalty: null`."""
    a = m.answer
    policy = a.policy
    why = {"words": m.words, "section": m.section, "passage": m.passage, "snippet": str(m.snippet)}
    if a.infraction is not None:
        inf = a.infraction
        return {
            **infraction_fields(policy, inf),
            "kind": "infraction",
            "section": m.section,
            "decides": None if inf.penalty else m.decides,
            "score": m.score,
            "coverage": m.coverage,
            "why": why,
        }
    if a.rule is not None:
        rule = a.rule
        if rule.kind == "converts":
            penalty_id = rule.to
        elif rule.kind == "removes":
            penalty_id = rule.consequence
        elif len(rule.to_any) == 1:
            # an upgrade to one level 「【警告】に格上げされることがあります」: the text names that penalty and leaves
            # it open (discretion), as it does for its examples of each level
            penalty_id = rule.to_any[0]
        else:  # an upgrade to one of several levels (【敗北】や【失格】): the text picks none; they are listed
            penalty_id = None
        item = policy.levels.get(penalty_id) or policy.consequences.get(penalty_id) if penalty_id else None
        options = [policy.levels[x].label for x in rule.to_any] if rule.kind == "upgrade" else []
        return {
            "id": a.key,
            "kind": "rule",
            "game": a.game,
            "name": rule.text,
            "description": rule.text,
            "penalty": item.label if item else None,
            "penalty_id": penalty_id,
            "penalty_options": options,
            "discretion": not rule.automatic,
            "discretion_note": None
            if rule.automatic
            else "格上げするかどうかはジャッジの判断で、自動では変わりません。"
            + (policy.rule_issuer(rule) or ""),
            "head_judge": False,
            "procedure": False,
            "remedy": None,
            "also": [],
            "citations": [c.section for c in rule.citations],
            "quotes": [{"section": c.section, "quote": c.quote} for c in rule.citations],
            "section": m.section,
            "decides": rule.text,
            "url": f"/rules/{rule.citations[0].section}",
            "score": m.score,
            "coverage": m.coverage,
            "why": why,
        }
    sec = a.section
    open_ = bool(OPEN_RE.search(m.passage))
    level = m.level
    if level is not None:
        note = f"この節は【{level.label}】が与えられる場合を定めています。この状況がそれに当たるかどうかはジャッジの判断です。"
        note += level_issuer(level) or ""  # who alone may issue it (ijinden's 【敗北】)
    elif open_:
        note = "この節の文言（「できます」「ことがあります」など）は、判断に任せています。"
    else:
        note = None
    return {
        "id": a.key,
        "kind": "section",
        "game": a.game,
        "name": sec.title,
        "description": m.passage,
        "penalty": level.label if level else None,
        "penalty_id": level.id if level else None,
        "discretion": open_ or level is not None,
        "discretion_note": note,
        "head_judge": False,
        "procedure": False,
        "remedy": None,
        "also": [],
        "citations": [sec.id],
        "quotes": [{"section": sec.id, "quote": m.passage}],
        "section": sec.id,
        "decides": m.passage,
        "url": sec.url,
        "score": m.score,
        "coverage": m.coverage,
        "why": why,
    }
