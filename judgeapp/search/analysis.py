"""How text is read: SudachiPy's words, folded forms and readings; section numbers; the spelling maps
derived from the corpus (docs/corpus.md, "Search")."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from whoosh import query as Q

from ..textnorm import (
    KANA_ROWS,
    LETTER_NAMES,
    deletions,
    fold,
    is_kana,
    kana_skeleton,
    kanji_number,
    latin_consonants,
    section_number_keys,
    spelled_letters,
    squash,
    to_katakana,
)

if TYPE_CHECKING:
    from sudachipy import Morpheme


# Bump when the analysis changes: an index built by another version (of this code or of SudachiPy and its
# dictionary) is rebuilt on start.
ANALYZER_VERSION = (
    # 20 indexed a heading's own number (~c3) and no wording word (関する) in a title; 19 kept which words the
    # text writes in katakana (the lexicon's loan words); 18 read a romaji query as typed and a lone particle
    # as a word; 17 read 〜すぎる after a stem (早すぎて) as a word; 16 had the numbered section's subsections
    "21"
)


def analysis_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    parts = [ANALYZER_VERSION]
    for package in ("sudachipy", "sudachidict-core"):
        try:
            parts.append(f"{package}={version(package)}")
        except PackageNotFoundError:
            parts.append(f"{package}=?")
    return " ".join(parts)


_DROP_POS = {"助詞", "助動詞", "補助記号", "空白", "記号"}
_LIGHT_POS = {"代名詞", "副詞", "連体詞", "接続詞", "感動詞"}  # `Word.light`
# Words that carry no meaning in what a judge types, query or story (normalized forms, folded): light verbs and
# nouns, auxiliaries, and the question and filler words both share. Search and the situation lookup each add
# their own (`QUERY_STOP` below, `lookup.STOP`).
LIGHT_WORDS = frozenset(
    fold(w)
    for w in (
        "為る", "居る", "有る", "成る", "仕舞う", "事", "物", "様", "ところ", "れる", "られる", "せる", "させる",
        "ない", "て", "た", "出来る", "何", "如何", "何処", "何故", "良い", "いい", "言う", "思う", "貰う",
        "呉れる", "欲しい", "ちゃう", "此れ", "其れ",
    )
)  # fmt: skip
# A query's own: the question words a judge wraps a query in (〜って何, どうすればいい, 〜できない).
QUERY_STOP = LIGHT_WORDS | {
    fold(w)
    for w in ("何時", "誰", "分かる", "知る", "教える", "下さい", "下さる", "って", "です", "ます", "彼れ")
}
# Question words typed in kana, as SudachiPy normalizes them (どこ, not 何処).
_KANA_QUESTION = {
    fold(w) for w in ("どう", "どれ", "どっち", "どちら", "どこ", "いつ", "どんな", "どの", "どういう")
}
QUERY_STOP |= _KANA_QUESTION | {
    # the formal noun こと, and the courtesy and filler words a judge opens with (すみません, ちょっと, えっと)
    fold(w)
    for w in (
        "こと",
        "幾つ",
        "すむ",
        "一寸",
        "あの",
        "えっと",
        "エート",
        "願う",
        "質問",
        "無い",
        "駄目",
        "大丈夫",
    )
}

# Question words (normalized forms, folded): a run of kana that ends with one is cut before it.
# The question words typed in kana, as typed (folded), whatever SudachiPy reads them as (どのくらい: 殿 | くらい).
KANA_QUESTION_TYPED = frozenset(
    fold(w) for w in ("どう", "どれ", "どっち", "どちら", "どこ", "いつ", "どんな", "どの", "どういう")
)
QUESTION_WORDS = {fold(w) for w in ("何", "如何", "何処", "何時", "誰", "何故")} | _KANA_QUESTION
# A run of kana that a question ends, as typed: a particle and a question word (〜ってどうなるの, 〜はなに), or
# 何 (and 誰) with what follows (〜って何, 〜何個): the run is a word of its own, the question is not.
KANA_QUESTION_TAIL = (
    re.compile(
        "^([ぁ-んァ-ヶー]{2,})((?:って|は|のは)"
        "(?:(?:なに|なん|どう|どれ|どっち|どちら|どこ|いつ|だれ|いくつ|なぜ)[ぁ-んー]*|[何誰].{0,6}))$"
    ),
    re.compile("^([ぁ-んァ-ヶー]{2,})([何誰].{0,6})$"),
)
# The counters a judge asks about in kana after なん (なんてん: 何点), by their readings (rendaku included).
KANA_COUNTERS = {
    to_katakana(k): v
    for k, v in {
    "てん": "点", "にん": "人", "まい": "枚", "かい": "回", "ねん": "年", "ふん": "分", "ぷん": "分",
    "びょう": "秒", "しょう": "勝", "はい": "敗", "ぱい": "敗", "こ": "個", "ばん": "番", "ど": "度",
    "じかん": "時間", "せん": "戦", "ほん": "本", "ぼん": "本", "ぽん": "本", "めい": "名", "にち": "日",
    "しゅう": "週", "ぶ": "部", "さい": "歳",
    }.items()
}  # fmt: skip
# What may follow a word typed in kana (its ending, a particle, a copula: すまほって, こうさんした, ぼうげんになった,
# どろっぷは), as katakana: a synonym key's reading is read in a kana query where one of these follows it.
KANA_TAIL_HEADS = tuple(
    to_katakana(k)
    for k in ("っ", "て", "た", "で", "だ", "し", "す", "さ", "の", "は", "が", "を", "に", "と", "も", "へ", "か", "や", "な", "じゃ")
)  # fmt: skip
# Counters of one thing, either said for the other (２度対戦 for 2回, 何回 for 何度も): the counters of times.
SAME_COUNTER = {"回": ("度",), "度": ("回",)}
KANA_COUNT_QUESTION = re.compile("ナン(" + "|".join(sorted(KANA_COUNTERS, key=len, reverse=True)) + ")")
# The same with the particle a judge ends it with (けいこく なんかいも, なんまいまで): the count is asked all the same.
KANA_COUNT_ASKED = re.compile(KANA_COUNT_QUESTION.pattern + "(?:モ|ハ|ガ|デ|マデ|クライ|グライ)?")
HIRAGANA_RUN = re.compile("[ぁ-んー]{3,}")
PARTICLE_CHARS = frozenset("のにをでがはともへ")
# Particles a judge types as words of their own, between spaces (あいて に わるいことば, 店舗大会 は ヘッドジャッジ):
# standing alone, SudachiPy reads some of them as conjunctions (で, が, から) or as the corpus's readings (ニ, ハ),
# but a judge who spaces the words of a sentence apart types them for the grammar between the words.
LONE_PARTICLES = frozenset(
    ("の", "に", "を", "で", "が", "は", "と", "も", "へ", "や", "か", "から", "まで", "より", "には", "では",
     "とは", "にも", "でも", "とか", "など", "ね", "よ")
)  # fmt: skip
# A run of kana that starts with a katakana word and goes on in hiragana (スコアキーパいないとダメ), or ends in
# one particle (プレイヤーが).
KATAKANA_THEN_HIRAGANA = re.compile("^([ァ-ヶー]{3,})([ぁ-ん][ぁ-んァ-ヶー]+|[のにをでがはともへやか])$")
# A word of Latin letters (romaji, English).
LATIN_WORD = re.compile(r"(?<![A-Za-z0-9])[A-Za-z]+(?![A-Za-z0-9])")
# What separates a query's parts as a space does: the punctuation a judge types between them (すみません、…).
CHUNK_BREAK = re.compile(r"[\s、。，．,!?！？…]+")


@dataclass
class Word:
    """One content word: the forms it can be matched by, its reading, and its surface in the text."""

    surface: str
    forms: tuple[str, ...]
    reading: str
    parts: tuple[str, ...]  # short-unit forms when the long unit splits
    synonyms: tuple[int, ...] = ()  # SudachiPy synonym group ids (of the word, or of its short units)
    # a grammatical word in a content word's place: a verb that can be auxiliary right after て/で (〜てくる,
    # 〜てあげる, 〜てしまう), いける after a particle or an auxiliary (〜ないといけない, 〜てはいけない,
    # 〜なきゃいけない: must, must not) or an auxiliary's stem (負けそう, 〜よう); the situation lookup weighs
    # it as nothing, a query drops it (outside a run of kana)
    aux: bool = False
    suffix: bool = False  # a suffix after a word (後 in マッチ後, 中 in ゲーム中; not a counter: 2枚)
    # the short units' readings when the long unit splits (停止中: テイシ, チュウ)
    part_readings: tuple[str, ...] = ()
    asked: bool = False  # a counter a judge asks for (何枚, なんにん: 枚, 人), answered by a number (５枚)
    # a word of a part of speech that tells how or which rather than what: a pronoun (どっち, あっち), an
    # adverb (もう, ほぼ, こう), an adnominal (同じ, どの), a conjunction (しかも), an interjection, a noun that
    # stands as an adverb (いま, 前, 毎回); the situation lookup weighs it less where the text never uses it
    light: bool = False
    verb: bool = False  # a verb (持ち掛ける: its short units 持つ and 掛ける say less than the compound)
    # an interjection or a filler (えーと, うーん, あのー, ほら, はい): what a judge says around a question,
    # never a word of it (a query drops it)
    filler: bool = False
    # `light` by its part of speech alone (a pronoun, adverb, adnominal, conjunction or interjection: この, そこ,
    # また, すぐ), not a noun that stands as an adverb (結果, 後, 前 are asked for): a query ranks by it, it does
    # not require it
    minor: bool = False


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
        self._pos: dict[int, tuple[bool, ...]] = {}

    def _pos_kind(self, m: Morpheme) -> tuple[bool, bool, bool, bool, bool, bool, bool, bool, bool, bool]:
        """(dropped, an auxiliary's stem, a verb that may be auxiliary, a particle or auxiliary, a suffix, a
        numeral, a case particle, a light word: `Word.light`, a light part of speech: `Word.minor`, an
        adjective or a verb) of a part of speech, read once per part-of-speech id."""
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
                pos[:2] == ("助詞", "格助詞"),
                pos[0] in _LIGHT_POS or pos[2] == "副詞可能",
                pos[0] in _LIGHT_POS,
                pos[0] in ("形容詞", "動詞"),
            )
        return kind

    def words(self, text: str) -> list[Word]:
        out: list[Word] = []
        memo = self._memo
        pos_kind, kinds = self._pos_kind, self._pos
        for line in text.splitlines():
            for start in range(0, len(line), 4000):  # Sudachi limits one input's size
                chunk = line[start : start + 4000]
                if chunk.strip():
                    with self._lock:
                        before = None  # (surface, kind) of the morpheme before
                        for m in self._tokenizer.tokenize(chunk):
                            pid = m.part_of_speech_id()
                            kind = kinds.get(pid) or pos_kind(m)  # (`_pos_kind`, its memo read here)
                            surface = m.surface()
                            if not kind[0]:
                                # _is_aux, from the part-of-speech kinds (see `Word.aux`)
                                aux = (
                                    kind[1]
                                    or (
                                        kind[2]
                                        and before is not None
                                        and before[0] in ("て", "で")
                                        and before[1][3]
                                        and not before[1][
                                            6
                                        ]  # で of a place or means (途中で抜ける) is no て-form
                                        and m.dictionary_form() not in ("見る", "みる")
                                    )
                                    or (
                                        # 〜ないといけない, 〜てはいけない, 〜なきゃいけない: must, must not
                                        kind[2]
                                        and before is not None
                                        and before[1][3]
                                        and not before[1][6]
                                        and m.dictionary_form() == "いける"
                                    )
                                    or (
                                        # 〜すぎる after an adjective's or a verb's stem (早すぎて, やりすぎ): too
                                        # much, not 過ぎる of time (時間過ぎた)
                                        kind[2]
                                        and before is not None
                                        and before[1][9]
                                        and m.dictionary_form() in ("過ぎる", "すぎる")
                                    )
                                )
                                # a suffix after a word (後 in マッチ後), not a counter after a number (2枚)
                                suffix = kind[4] and before is not None and not before[1][5]
                                # A dictionary entry (its word id) has one reading, normalized and
                                # dictionary form: they are asked of SudachiPy only for a word it does
                                # not know (three calls a morpheme fewer)
                                key = (
                                    (m.word_id(), pid, surface, aux, suffix)
                                    if not m.is_oov()
                                    else (
                                        m.word_id(),
                                        pid,
                                        surface,
                                        m.reading_form(),
                                        m.normalized_form(),
                                        m.dictionary_form(),
                                        aux,
                                        suffix,
                                    )
                                )
                                w = memo.get(key)
                                if w is None:
                                    if len(memo) >= self.MEMO_SIZE:
                                        memo.clear()
                                    w = memo[key] = self._word(m, aux)
                                    w.suffix = suffix
                                    w.light = kind[7]
                                    w.minor = kind[8]
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

    def bounds(self, text: str) -> tuple[set[int], set[int], set[int]]:
        """Where SudachiPy begins a particle or an auxiliary in a short text, and where it begins and ends any
        morpheme (offsets into the text), in one pass."""
        particles: set[int] = set()
        starts: set[int] = set()
        ends: set[int] = set()
        with self._lock:
            for m in self._tokenizer.tokenize(text[:4000]):
                starts.add(m.begin())
                ends.add(m.end())
                if self._pos_kind(m)[3]:
                    particles.add(m.begin())
        return particles, starts, ends

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
            part_readings=tuple(fold(p.reading_form()) for p in short) if len(parts) > 1 else (),
            verb=m.part_of_speech()[0] == "動詞",
            filler=m.part_of_speech()[0] == "感動詞",
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
_MARKED_NUMBER = re.compile(
    r"[第章節条項]|\d\s*[a-zⅰ-ⅿⅠ-Ⅿ]|[a-z]\s*\d|\d\s*[-‐.・]\s*[\da-z]|\d[①-⑳]|(?-i:[IVX]+)\s*[-‐.・]\s*[a-z](?![a-z])|[Ⅰ-Ⅿ]\s*[-‐.・]?\s*[a-z]",
    re.IGNORECASE,
)


def query_number_terms(text: str) -> list[str]:
    """What a query may be as a section number (the same forms as `number_terms`); [] for a long query.
    A part of the query that begins with a marked number (`_MARKED_NUMBER`) gives that number too."""
    return query_numbers(text)[0]


def query_numbers(text: str) -> tuple[list[str], list[str]]:
    """`query_number_terms`, and the parts of a longer query that were read as a number (the start of a part:
    3.b in 3.b 期間), so that the number's own digits and letters need not be words too."""
    squashed = squash(text)
    raw = squashed if any(ch.isdigit() for ch in squashed) else ""  # art3; not a plain word
    # (not two numbers a separator joins: 10-4 is ch10-4, not section 104)
    if _JOINED_NUMBERS.search(text):
        raw = ""
    keys = section_number_keys(text) if len(squashed) <= 16 else []
    heads: list[str] = []  # (a query that is a number as a whole keeps its words: they tell its ties apart)
    if not keys:
        for chunk in CHUNK_BREAK.split(text):
            if not _MARKED_NUMBER.search(chunk[:12]):
                continue
            for end in range(min(len(chunk), 12), 1, -1):  # its longest such start
                head = chunk[:end]
                if _GLUED.match(chunk, end - 1):  # 第三者, 第2ゲーム, 第一に: a numeral that begins a word
                    continue
                if _MARKED_NUMBER.search(head) and (found := section_number_keys(head)):
                    keys.extend(found)
                    heads.append(head)
                    break
    if raw and len(squashed) <= 16:
        keys.append(raw)
    return list(dict.fromkeys(keys)), heads


# a numeral followed by a word's kana or kanji (not a unit of the numbering: 章, 条, 節, 項, 部)
_GLUED = re.compile(r"[\d０-９一二三四五六七八九十百〇][ぁ-ゖァ-ヺ一-龯々](?<![章節条項部])")
_JOINED_NUMBERS = re.compile(r"\d\s*[-‐‑–—―−.・/／－．]\s*\d")


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


def katakana_word(form: str, shortest: int = 3) -> bool:
    return len(form) >= shortest and all("\u30a1" <= ch <= "\u30fa" or ch == "ー" for ch in form)


def clip_map(pairs: Iterable[str], compounds: Iterable[tuple[str, tuple[str, ...]]]) -> dict[str, list[str]]:
    """Clipped compounds, as judges shorten two loan words to the starts of each (ダブエリ for ダブル
    エリミネーション, スイドロ for スイスドロー): each two neighbouring katakana words of the corpus (a word pair,
    `word_pairs`, or the short units of one long word) by their first two or three characters each → the
    index term they stand for (`pairs:ダブル|エリミネーション`, `words:<long word>`)."""
    out: dict[str, list[str]] = {}

    def add(a: str, b: str, term: str) -> None:
        if not (katakana_word(a) and katakana_word(b)):
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


KANJI_WORD = re.compile(r"[\u4e00-\u9fff々]{2,4}")
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
        if KANJI_WORD.fullmatch(f):
            have.add(f)
            add(f, "words:" + f)
    for p in sorted(pairs):
        a, _, b = p.partition("|")
        if KANJI_WORD.fullmatch(a + b) and a + b not in have:
            add(a + b, "pairs:" + p)
    return out


def weighted_query(q: Q.Query, weight: float) -> Q.Query:
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


def sense_in_auxiliary(key: str) -> bool:
    """Whether SudachiPy reads an auxiliary of two characters or more in a synonym key: a negation, a wish or
    a contraction (足りない, いらない, 持ってった: 持っ|てっ|た, the contracted ていく, taken away), which carries the
    key's sense: its one content word alone (足りる, 要る, 持つ) says otherwise, so such a key is recognised as
    typed, not by its dictionary form (pass 19; the offline export gives it no lemma). Not a key of two content
    words (見てる人: 見る and 人 say it together)."""
    return len(analyzer().words(key)) == 1 and any(
        pos == "助動詞" and b - a >= 2 for a, b, pos, _ in analyzer().parts_of_speech(key)
    )


def inside_katakana_word(text: str, a: int, b: int) -> bool:
    """Whether text[a : b + 1] begins or ends inside a longer katakana word (ペナ in ペナルティ)."""
    return (_katakana(text[a]) and _katakana(text[a - 1 : a] if a else "")) or (
        _katakana(text[b]) and _katakana(text[b + 1 : b + 2])
    )


def without_question_tail(chunk: str, words: list[Word]) -> str:
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
        elif w.forms[0] in QUESTION_WORDS:
            tail = True
        elif w.forms[0] not in QUERY_STOP:
            end, tail = pos, False
    return chunk[:end] if tail and end else chunk


# Words of a title that name no topic: how headings are worded (〜に関して, 〜について, 〜による, 〜の皆さんへ).
TITLE_LIGHT = {
    fold(w)
    for w in ("関する", "付く", "因る", "依る", "対する", "当たる", "於ける", "皆", "さん", "第", "章", "節")
}
NUMBERING = re.compile(r"[0-9]+|[a-z]{1,2}|[ivxlc]+")
# The section number a numbered heading starts with (3b-i., 101., 第 3 章：, ②, Ⅰ.): the number signal finds
# the section by it (`IndexDoc.numbers`); as words of the title it would answer a count or a number the judge
# gives (2枚ひいちゃった: 2 is no ② 【警告】).
HEADING_NUMBER = re.compile(
    r"^\s*(?:第\s*[0-9０-９]+\s*[章節条]\s*[：:]?|[0-9０-９]+[a-zａ-ｚ]*(?:-[ivxlc]+)?\s*[.．]|[①-⑳]|[Ⅰ-Ⅻ]+\s*[.．])\s*"
)


def heading_words(title: str, numbered: bool) -> str:
    """A heading without the section number it starts with, when the section is numbered: its words as a title
    (`HEADING_NUMBER`)."""
    return HEADING_NUMBER.sub("", title, count=1) if numbered else title


# A section's own number within its parent, as its heading writes it when that reads as none of the section's
# keys (② 【警告】 is ch10-2, 2 within 第 10 章; Ⅰ. シャッフルに関して is ch7-1): no word of the title, so the number
# signal finds the section by it, indexed as `OWN_NUMBER`, the form it is written in and its reading: ~c2 for
# ②, ~r2 for Ⅱ, ~2 for a plain 2.
OWN_NUMBER = "~"
# The forms of a number that only a heading's own number takes here (circled digits, roman numerals written as
# one character: the texts number their items ① … ④ and Ⅰ. Ⅱ., their chapters and sections 第 3 章, 3b):
# typed, they ask for the item (③ is ch10-3, and ペナルティ③ too, as ch9's text writes ペナルティ④【失格】).
ITEM_NUMBER = re.compile(r"[①-⑳Ⅰ-Ⅻⅰ-ⅻ]")
_PLAIN_NUMBER = re.compile(r"[0-9〇一二三四五六七八九十百]+")
OWN_FORMS = ("c", "r", "")  # circled, roman, plain


def _number_form(written: str) -> str:
    if re.search(r"[①-⑳]", written):
        return "c"
    return "r" if re.search(r"[Ⅰ-Ⅻⅰ-ⅻ]", written) else ""


def own_number_terms(title: str, numbers: Iterable[str]) -> list[str]:
    """The index terms of a numbered section's own number within its parent (`OWN_NUMBER`): its heading's
    number (`HEADING_NUMBER`) read as a number of one part, when none of its readings is a key of the section
    (第 3 章 is ch3's key, 3b-i. 3b-i's; ③ is no key of ch10-3)."""
    numbers = list(numbers)
    m = HEADING_NUMBER.match(title) if numbers else None
    if m is None:
        return []
    readings = section_number_keys(m.group())
    if not readings or set(readings) & set(number_terms(numbers)):
        return []
    form = _number_form(m.group())
    return [OWN_NUMBER + form + r for r in readings if "." not in r]


def query_own_numbers(text: str, keys: list[str]) -> tuple[list[str], list[str], list[str]]:
    """The own numbers (`own_number_terms`) a query asks for in the form it types them, those it may mean in
    another form, and the characters read so. Each circled digit or one-character roman numeral anywhere in
    the query (ペナルティ③ 敗北とは, ③: ~c3; ~r3 and ~3 in another form), unless the query's number has more
    parts (第十章④ is 10.4 already); a query that is a plain number as a whole (3, 三) may mean any own number
    in another form."""
    if any("." in k for k in keys):
        return [], [], []
    items = ITEM_NUMBER.findall(text)
    if items:
        typed, other = [], []
        for ch in items:
            form = _number_form(ch)
            for r in section_number_keys(ch):
                if "." not in r:
                    typed.append(OWN_NUMBER + form + r)
                    other += [OWN_NUMBER + f + r for f in OWN_FORMS if f != form]
        return list(dict.fromkeys(typed)), list(dict.fromkeys(other)), items
    if keys and _PLAIN_NUMBER.fullmatch(squash(text)):
        return [], [OWN_NUMBER + f + k for k in keys if k.isdigit() for f in OWN_FORMS], []
    return [], [], []


KANJI_RE = re.compile(r"[\u4e00-\u9fff々]")


def kanji_stem(surface: str) -> str:
    """A word's kanji, when it has two or more: the words of one family share them whatever their okurigana
    and inflection (繰り下がる, 繰り下げ, 繰下げ → 繰下; 間違えて, 間違い → 間違)."""
    stem = "".join(KANJI_RE.findall(surface))
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
        if w.forms[0] not in TITLE_LIGHT
        and w.forms[0] not in QUERY_STOP
        and not NUMBERING.fullmatch(w.forms[0])
    }
    return "|".join(sorted(forms))


def word_pairs(words: list[Word]) -> list[str]:
    """Each two neighbouring words (their first form), the order kept: where a query's words stand side by
    side in a section, as they do in the judge's phrase, the section is the likelier answer."""
    return [f"{a.forms[0]}|{b.forms[0]}" for a, b in zip(words, words[1:], strict=False)]


_NUMERAL = re.compile(r"[0-9]+|[一二三四五六七八九十百〇]+")


def count_terms(words: list[Word], reach: int = 3) -> list[str]:
    """Each count a text gives (a number and its counter: ５枚) with the words near it, the number left out
    (５枚のカードをシールドとして: `#枚|カード`, `#枚|シールド`): what a judge asking シールド 何枚 looks for."""
    out: list[str] = []
    for i in range(len(words) - 1):
        if _NUMERAL.fullmatch(words[i].forms[0]) and not _NUMERAL.fullmatch(words[i + 1].forms[0]):
            counter = words[i + 1].forms[0]
            for w in words[max(0, i - reach) : i] + words[i + 2 : i + 2 + reach]:
                if not _NUMERAL.fullmatch(w.forms[0]) and w.forms[0] not in QUERY_STOP:
                    out.append(f"#{counter}|{w.forms[0]}")
    return out


def char_bigrams(text: str) -> list[str]:
    s = squash(text)
    return [s[i : i + 2] for i in range(len(s) - 1)] if len(s) > 1 else ([s] if s else [])


# How the texts define a word (the section that says what a thing is, rather than one that mentions it):
# 「X」とは / Xとは at the start of a line or clause (not 〜とは別に, 〜とは異なる: a comparison; not ことは),
# 「X」と呼ぶ / …Xと呼ばれる (its last word: …のポッドと呼ばれる), and the items of a list of definitions
# (X : …) in a section that says it defines (この規定では以下の用語を定義します).
_DEFINED_BY_TOHA = re.compile(
    r"(?:^|[\s、。「」（）()])(?:「([^「」]{1,16})」|([^\s、。「」（）()]{1,16}?))\s*(?<!こ)とは(?![別異違関])"
)
_DEFINED_BY_NAME = re.compile(r"(?:「([^「」]{1,16})」|([^\s、。「」（）()]{1,12}?))\s*と呼[ばびぶべん]")
_DEFINITION_ITEM = re.compile(r"^\s*(?:[-・]\s*)?([^:：\s]{1,16})\s*[:：]", re.MULTILINE)


def defined_words(an: Analyzer, text: str) -> list[str]:
    """The phrases a section's text defines (see the patterns above), each as one term (`defined_term`) and
    by its reading: a query that asks what a thing is (マッチって何, 試合開始っていつ) finds the section
    defining it (用語定義; 試合開始とは…)."""
    found: list[list[Word]] = []
    for line in text.splitlines():
        for m in _DEFINED_BY_TOHA.finditer(line):
            found.append(an.words(m.group(1) or m.group(2)))
        for m in _DEFINED_BY_NAME.finditer(line):
            found.append(an.words(m.group(1)) if m.group(1) else an.words(m.group(2))[-1:])
    if "定義" in text:
        found += [an.words(x) for x in _DEFINITION_ITEM.findall(text)]
    out: dict[str, None] = {}
    for words in found:
        term = defined_term(words)
        if term:
            out[term] = None
            # and by its reading, for a judge who types it in kana (げんちごって何: 「現地語」とは)
            out["".join(w.reading for w in words if term_word(w))] = None
    return list(out)


# A judge asking what a thing is: 〜って何 (なに, いつ, どういう, 誰), 〜とは, 〜の意味, 〜の定義, 〜との違い.
# (Not a count asked for: 〜って何点, 何回 ask for a number, see `KANA_COUNTERS`.)
DEFINITION_QUESTION = re.compile(
    r"って\s*(?:何(?![\u4e00-\u9fff])|なに|なん(?:[でのだ?？]|$)|いつ|どういう|誰|だれ)|(?<!こ)とは|意味|定義|(?:^|[\sのとが])(?:違い|ちがい)"
)


def defined_term(words: list[Word]) -> str:
    """A defined phrase as one term: its words' first forms joined (試合|開始), without light words, numbers
    and words written in hiragana only (ここで言う透明のスリーブとは: 透明|スリーブ)."""
    return "|".join(w.forms[0] for w in words if term_word(w))


def term_word(w: Word) -> bool:
    """Whether a word is part of a defined phrase: not a light word, a number or a word in hiragana only."""
    return (
        w.forms[0] not in QUERY_STOP
        and not NUMBERING.fullmatch(w.forms[0])
        and not re.fullmatch("[ぁ-ん]+", w.surface)
    )


# --- what a judge says rather than types: a section number spoken (voice input), a romaji tail ---------------

# The numerals and the names of the Latin letters as Japanese says them (katakana, folded: ー kept), and the
# words of a section number (第, 章, 条, 節, 項), so that a number that voice input writes in kana (さんびー,
# ななじょうのいー, だいじゅっしょう) is read as the number written (3b, 7条e, 第10章).
_SPOKEN_DIGITS = {
    "ゼロ": "〇", "レイ": "〇", "イチ": "一", "イッ": "一", "ニ": "二", "サン": "三", "ヨン": "四", "ゴ": "五",
    "ロク": "六", "ロッ": "六", "ナナ": "七", "シチ": "七", "ハチ": "八", "ハッ": "八", "キュウ": "九",
    "キュー": "九", "ジュウ": "十", "ジュー": "十", "ジュッ": "十", "ジッ": "十", "ヒャク": "百", "ビャク": "百",
    "ピャク": "百",
}  # fmt: skip
# the letters a to n (as far as sections are lettered) by their names (`LETTER_NAMES`), and the other ways
# they are said
_SPOKEN_LETTERS = {name: ch for ch, name in LETTER_NAMES.items() if ch <= "n"} | {
    "エイ": "a", "デー": "d", "エッチ": "h", "ジェイ": "j", "ケイ": "k",
}  # fmt: skip
_SPOKEN_MARKS = {"ダイ": "第", "ショウ": "章", "ジョウ": "条", "セツ": "節", "コウ": "項", "ノ": ""}
_SPOKEN = sorted(
    [(k, v, "digit") for k, v in _SPOKEN_DIGITS.items()]
    + [(k, v, "letter") for k, v in _SPOKEN_LETTERS.items()]
    + [(k, v, "mark") for k, v in _SPOKEN_MARKS.items()],
    key=lambda t: -len(t[0]),
)


def _spoken_parts(k: str, i: int) -> list[tuple[str, str, bool, int]]:
    """The parts of a section number said or written from k[i] on (k in katakana, lower case), as far as
    they go: (value, kind, said, where it ends) each; kind is digit, letter or mark."""
    out: list[tuple[str, str, bool, int]] = []
    while i < len(k):
        ch = k[i]
        if ch.isascii() and ch.isdigit():
            j = i
            while j < len(k) and k[j].isascii() and k[j].isdigit():
                j += 1
            out.append((str(int(k[i:j])), "digit", False, j))
            i = j
            continue
        if "a" <= ch <= "z":
            if i + 1 < len(k) and "a" <= k[i + 1] <= "z":
                break  # a Latin word (BO3, sleeves), not a section's letter
            out.append((ch, "letter", False, i + 1))
            i += 1
            continue
        if ch in "第章節条項":
            out.append((ch, "mark", False, i + 1))
            i += 1
            continue
        if ch in _KANJI_NUMERALS:  # a numeral typed in kanji (第七条のイー)
            out.append((ch, "digit", False, i + 1))
            i += 1
            continue
        for surface, value, kind in _SPOKEN_BY_CHAR.get(ch, ()):
            if k.startswith(surface, i):
                i += len(surface)
                out.append((value, kind, kind != "mark" or surface == "ノ", i))
                break
        else:
            break
    return out


def _written(parts: list[tuple[str, str, bool, int]]) -> str:
    """The section number some parts make, as written ("" when they make none: see `spoken_number`)."""
    if not any(said for _, _, said, _ in parts) or parts[0][1] == "letter":
        return ""
    if parts[0][1] == "mark" and parts[0][0] != "第":
        return ""
    kinds = [kind for _, kind, _, _ in parts]
    lettered = "letter" in kinds and any(
        a == "digit" and b in ("letter", "mark") for a, b in zip(kinds, kinds[1:], strict=False)
    )
    if not (lettered or parts[0][0] == "第") or "digit" not in kinds:
        return ""
    out, run, run_said = [], "", False
    for value, kind, said, _ in [*parts, ("", "end", False, 0)]:
        if kind == "digit" and not (run and (run[-1].isdigit() != value[-1].isdigit() or run_said != said)):
            run += value
            run_said = said
            continue
        if kind == "digit":
            return ""  # 3 and さん side by side, or 一 and に (第一に)
        if run:
            n = int(run) if run.isdigit() else kanji_number(run)
            if n is None:
                return ""
            out.append(str(n))
            run = ""
        out.append(value)
    return "".join(out)


def _particle_ni(text: str, i: int) -> bool:
    """Whether the に at text[i] is the particle, not the numeral: right after a word written in kanji or
    katakana (スコアカードにエヌって, デッキにびー: to the score card, not 2n; 規定にまい), where voice input writes
    the particle; after kana (えーとにびー) it may be the numeral said."""
    return text[i] == "に" and i > 0 and bool(_WORD_CHAR.match(text[i - 1]))


_WORD_CHAR = re.compile("[ァ-ヶー\u4e00-\u9fff々]")


def spoken_number(text: str) -> str:
    """A section number said in kana, as written (サンビー → 3b, ナナジョウノイー → 7条e, ダイジュッショウ →
    第10章, ロクビーサン → 6b3, 7のイー → 7e); "" when the text is not one. The whole text must be numerals
    (said or written), letters (their names, or one Latin letter), the words of a number and の between
    them, hold a numeral said or の, start with a numeral or 第, and hold a letter after a numeral or start
    with 第 (サン alone, or サンショウ, 参照, is no section)."""
    k = to_katakana(text).lower()
    parts = _spoken_parts(k, 0)
    return _written(parts) if parts and parts[-1][3] == len(k) else ""


_KANJI_NUMERALS = "〇一二三四五六七八九十百"
SPOKEN_RUN = re.compile(f"[0-9a-zA-Zぁ-んァ-ヶー第章節条項{_KANJI_NUMERALS}]{{3,}}")
_SPOKEN_BY_CHAR: dict[str, list[tuple[str, str, str]]] = {}
for _t in _SPOKEN:
    _SPOKEN_BY_CHAR.setdefault(_t[0][0], []).append(_t)
_SPOKEN_STARTS = (
    frozenset("0123456789" + _KANJI_NUMERALS) | {t[0][0] for t in _SPOKEN if t[2] == "digit"} | {"ダ", "第"}
)


def spoken_numbers(text: str) -> str:
    """The text with each section number said in kana (`spoken_number`) written as one, spaced apart as a
    query part of its own (えーとさんびーってなに → えーと 3b ってなに): a run of kana, or its start, or a
    stretch of it that a particle or the run's end follows."""
    if not SPOKEN_RUN.search(text):
        return text
    out, last = [], 0
    for m in SPOKEN_RUN.finditer(text):
        run = m.group()
        k = to_katakana(run).lower()
        found = None
        for a in range(len(k) - 2):
            if k[a] not in _SPOKEN_STARTS or _particle_ni(text, m.start() + a):
                continue
            parts = _spoken_parts(k, a)
            for n in range(len(parts), 1, -1):  # the longest stretch that ends the run or meets a particle
                b = parts[n - 1][3]
                if b < len(run) and run[b] not in PARTICLE_CHARS and not run.startswith("って", b):
                    continue
                written = _written(parts[:n])
                if written:
                    found = (a, b, written)
                    break
            if found:
                break
        if found:
            a, b, written = found
            out.append(text[last : m.start() + a] + " " + written + " ")
            last = m.start() + b
    out.append(text[last:])
    return "".join(out).strip() if last else text


# A count said in kana (voice input, pass 14): さんぷん → 3分, さんじゅっぷん → 30分, にほんせん → 2本戦, さんターン →
# 3ターン, れいてんさんさん → 0.33. The numerals said (`_SPOKEN_DIGITS`, and よ of よにん), then a counter (the
# counters' readings, `KANA_COUNTERS`, without the one-kana ones こ ど ぶ, or a loan word counted in the texts),
# or a decimal point said (てん) and the digits after it one by one; then the run's end, a particle, って or
# what follows a count (め 目, せん 戦, いじょう 以上, いない 以内, いか 以下, みまん 未満, かん 間, ご 後).
_COUNT_DIGITS = _SPOKEN_DIGITS | {"ヨ": "四"}
_COUNT_DIGITS_BY_LENGTH = sorted(_COUNT_DIGITS, key=len, reverse=True)
_COUNT_STARTS = frozenset(d[0] for d in _COUNT_DIGITS)
_COUNT_COUNTERS = {k: v for k, v in KANA_COUNTERS.items() if len(k) > 1} | {
    k: k for k in ("ターン", "ゲーム", "マッチ", "ラウンド", "パック")
}
_COUNT_COUNTERS_BY_LENGTH = sorted(_COUNT_COUNTERS, key=len, reverse=True)
_COUNT_AFTER = {
    "メ": "目", "セン": "戦", "イジョウ": "以上", "イジョー": "以上", "イナイ": "以内", "イカ": "以下",
    "ミマン": "未満", "カン": "間", "ゴ": "後",
}  # fmt: skip
_COUNT_AFTER_BY_LENGTH = sorted(_COUNT_AFTER, key=len, reverse=True)
KANA_RUN = re.compile("[ぁ-んァ-ヶー]{3,}")


def _said_numerals(k: str, i: int, digitwise: bool = False) -> list[tuple[str, int]]:
    """The numerals said from k[i] on (katakana), as digits, with where each ends, the longest first (よにん:
    よ, not よに). digitwise: each numeral one digit (the digits after a decimal point: さんさん → 33)."""
    kanji, ends, j = "", [], i
    while j < len(k):
        said = next((d for d in _COUNT_DIGITS_BY_LENGTH if k.startswith(d, j)), None)
        if said is None:
            break
        kanji += _COUNT_DIGITS[said]
        j += len(said)
        ends.append((kanji, j))
    out = []
    for kanji, j in reversed(ends):
        if digitwise:
            if not any(ch in "十百" for ch in kanji):
                out.append(("".join(str(kanji_number(ch)) for ch in kanji), j))
            continue
        # a numeral as it is said: no two digits side by side (にさんかい, two or three times, is no 23)
        if any(a not in "十百" and b not in "十百" for a, b in zip(kanji, kanji[1:], strict=False)):
            continue
        n = kanji_number(kanji)
        if n is not None:
            out.append((str(n), j))
    return out


# what may follow a count said, besides a particle: the copula and the particles of degree (だけ, まで, ずつ)
_COUNT_TAIL = ("って", "だ", "です", "じゃ", "だけ", "まで", "ずつ", "しか", "くらい", "ぐらい", "ほど", "か")


def _said_count(run: str, k: str, a: int, is_reading: Callable[[str], bool]) -> tuple[int, str] | None:
    """The count said from run[a] on (k: the run in katakana): where it ends and how it is written."""
    for number, i in _said_numerals(k, a):
        counter = ""
        if k.startswith("テン", i):
            decimals = _said_numerals(k, i + 2, digitwise=True)
            # さんてんに is 3点に (the particle), not 3.2, which no judge says that way (a review)
            if decimals and k[i + 2 : decimals[0][1]] != "ニ":
                number, i = f"{number}.{decimals[0][0]}", decimals[0][1]
        if "." not in number:
            counter = next((c for c in _COUNT_COUNTERS_BY_LENGTH if k.startswith(c, i)), "")
            if not counter:
                continue
            i += len(counter)
        for after in (*(x for x in _COUNT_AFTER_BY_LENGTH if k.startswith(x, i)), ""):
            b = i + len(after)
            ends = (
                b == len(k)
                or run[b] in PARTICLE_CHARS
                or "ァ" <= run[b] <= "ヶ"
                or any(run.startswith(t, b) for t in _COUNT_TAIL)
            )
            if ends and not is_reading(k[a:b]):
                return b, number + _COUNT_COUNTERS.get(counter, "") + _COUNT_AFTER.get(after, "")
    return None


def spoken_counts(text: str, is_reading: Callable[[str], bool] = lambda k: False) -> str:
    """The text with each count said in kana written as typed (さんぷん → 3分, にほんせん → 2本戦, さんターン →
    3ターン, れいてんさんさん → 0.33), where it starts a run of kana or follows a particle in it and ends the
    run, meets a particle or って, or goes on with what follows a count (目, 戦, 以上…). Not when what is said
    is a reading of the corpus (`is_reading`: にほん is 日本, じゅうぶん is 十分)."""
    if not KANA_RUN.search(text):
        return text
    out, last = [], 0
    for m in KANA_RUN.finditer(text):
        run = m.group()
        k = to_katakana(run)
        a = 0
        while a < len(k) - 1:
            found = None
            # at the run's start or after a particle, not one that starts the text (にさんかい: two or three
            # times)
            if (
                k[a] in _COUNT_STARTS
                and (
                    not a
                    or (
                        m.start() + a > 1
                        and (run[a - 1] in PARTICLE_CHARS or run[max(a - 2, 0) : a] == "って")
                    )
                )
                and not _particle_ni(text, m.start() + a)
            ):
                found = _said_count(run, k, a, is_reading)
            if not found:
                a += 1
                continue
            b, written = found
            out.append(text[last : m.start() + a] + written)
            last = m.start() + b
            a = b
    out.append(text[last:])
    return "".join(out) if last else text


# A run of kana that ends in one or two consonants of romaji (ちこk, しゃっふr): the phone's kana input had
# not converted the mora the judge was typing. Lower case only (DQ, GL and HJ are words, not a tail).
ROMAJI_TAIL = re.compile("([ぁ-んァ-ヶー]{2,})([bcdfghjklmnpqrstvwxyz]{1,2})(?![a-zA-Z0-9])")
# textnorm's plain rows in katakana, and the rows of loan words' kana (ファ, ヴァ) and of the contracted sounds
_OTHER_ROWS = {
    "j": ["ジャ", "ジ", "ジュ", "ジェ", "ジョ"], "f": ["ファ", "フィ", "フ", "フェ", "フォ"], "y": ["ヤ", "", "ユ", "", "ヨ"],
    "w": ["ワ", "", "", "", "ヲ"], "v": ["ヴァ", "ヴィ", "ヴ", "ヴェ", "ヴォ"], "c": "カシクセコ",
    "sh": ["シャ", "シ", "シュ", "シェ", "ショ"], "ch": ["チャ", "チ", "チュ", "チェ", "チョ"],
    "ts": ["", "", "ツ", "", ""], "ky": ["キャ", "", "キュ", "", "キョ"], "gy": ["ギャ", "", "ギュ", "", "ギョ"],
    "ny": ["ニャ", "", "ニュ", "", "ニョ"], "hy": ["ヒャ", "", "ヒュ", "", "ヒョ"], "by": ["ビャ", "", "ビュ", "", "ビョ"],
    "py": ["ピャ", "", "ピュ", "", "ピョ"], "my": ["ミャ", "", "ミュ", "", "ミョ"], "ry": ["リャ", "", "リュ", "", "リョ"],
}  # fmt: skip
_ROWS = {c: to_katakana(row) for c, row in KANA_ROWS.items()} | _OTHER_ROWS


def romaji_moras(letters: str) -> list[str]:
    """The moras (katakana) that romaji starting with these consonants may become: k → カ キ ク ケ コ; n also
    ン; a doubled consonant (kk) the small ッ before them."""
    letters = letters.lower()
    out: list[str] = []
    if len(letters) == 2 and letters[0] == letters[1] and letters[0] != "n":
        return ["ッ" + m for m in romaji_moras(letters[0])]
    out += [m for m in _ROWS.get(letters, ()) if m]
    if letters in ("n", "nn"):
        out.append("ン")
    return out


# The first letter of each kana's romaji (Hepburn: シ shi, チ chi, ツ tsu, フ fu, ジ ji), so that a Latin word
# and a loan word can be told to start alike (drop and ドロップ, not turns and チャレンジ).
KANA_FIRST_LETTER = {m[0]: c[0] for c, row in _ROWS.items() if c != "c" for m in row if m}
KANA_FIRST_LETTER.update({"シ": "s", "チ": "c", "ツ": "t", "フ": "f", "ジ": "j", "ヂ": "j", "ヅ": "z"})
KANA_FIRST_LETTER.update(dict(zip("アイウエオ", "aiueo", strict=True)))
