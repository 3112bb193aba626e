"""Character folding shared by the search index, the query side and the snippet maker.

Judges type on phones: full- or half-width, hiragana or katakana, with or without the middle dot.
Everything that compares text folds both sides the same way here.

`fold()` keeps the string's length (one character in, one character out), so an offset found in a
folded text is an offset in the original: the snippet maker relies on that to mark the source's own
characters.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

_HIRA_START, _HIRA_END = 0x3041, 0x3096
HIRAGANA_RE = re.compile("[\u3041-\u309f]")  # any hiragana (a game's name is never read in it)
_KATA_OFFSET = 0x60

# Dashes that judges type where the text has the long-vowel mark (スリ-ブ, スリ－ブ, スリーブ).
_DASHES = "-‐‑‒–—―−ｰ~〜"
# Characters ignored when comparing card names and phrases character by character.
_GAP_CHARS = "・･ー\u3000 \t\r\n《》「」『』【】()（）[]［］〈〉<>＜＞\"'“”‘’、。,.，．:：;；!！?？/／"
_GAP_RE = re.compile("[" + re.escape(_GAP_CHARS + _DASHES) + "]+")
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\ufeff]")


@lru_cache(maxsize=4096)
def _fold_char(ch: str) -> str:
    norm = unicodedata.normalize("NFKC", ch)
    if len(norm) != 1:
        norm = ch  # keep the length: ligatures and the like stay as they are
    code = ord(norm)
    if _HIRA_START <= code <= _HIRA_END:
        norm = chr(code + _KATA_OFFSET)
    low = norm.lower()
    return low if len(low) == 1 else norm  # İ lower-cases to two characters: one for one, always


@lru_cache(maxsize=65536)
def _fold_short(text: str) -> str:
    return "".join(map(_fold_char, text))


def fold(text: str) -> str:
    """Fold width, case and hiragana→katakana, one character for one (a word's folding is kept: the index
    folds each of a word's forms, and the same words come back again and again)."""
    return _fold_short(text) if len(text) <= 32 else "".join(map(_fold_char, text))


# Circled digits and roman numerals written as one character: NFKC makes ③ a 3 and Ⅰ an I.
_NUMBER_FORMS = re.compile("([\u2460-\u2473\u2160-\u216b\u2170-\u217b])")


def clean_query(text: str, max_chars: int = 200, number_forms: bool = False) -> str:
    """What the search sees of what a judge typed: NFKC, no control characters, a bounded length. With
    `number_forms`, circled digits and one-character roman numerals stay as typed (the search reads ③ as an
    item's number, `search.analysis.ITEM_NUMBER`; every other step folds them as NFKC does)."""
    text = _CONTROL_RE.sub(" ", text or "")
    if number_forms:
        parts = _NUMBER_FORMS.split(text)
        text = "".join(p if i % 2 else unicodedata.normalize("NFKC", p) for i, p in enumerate(parts))
    else:
        text = unicodedata.normalize("NFKC", text)
    return " ".join(text.split())[:max_chars]


def squash(text: str) -> str:
    """Fold and drop the characters that do not matter when comparing names and phrases
    (middle dot, long-vowel mark, brackets, spaces, punctuation)."""
    return _GAP_RE.sub("", fold(text))


def squash_map(text: str) -> tuple[str, list[int]]:
    """`squash(text)` and, for each of its characters, the index of that character in `text`."""
    kept, where = [], []
    for i, ch in enumerate(text):
        f = _fold_char(ch)
        if not _GAP_RE.fullmatch(f):
            kept.append(f)
            where.append(i)
    return "".join(kept), where


# Hiragana, katakana and the long-vowel marks (ー is U+30FC, the half-width ｰ U+FF70), half-width katakana.
_KANA_RE = re.compile("[\u3041-\u30ff\uff66-\uff9f]+")
_TO_KATAKANA = {code: code + _KATA_OFFSET for code in range(_HIRA_START, _HIRA_END + 1)}


def is_kana(text: str) -> bool:
    """True when the text is only hiragana/katakana (and the long-vowel mark)."""
    return bool(text) and _KANA_RE.fullmatch(text) is not None


def to_katakana(text: str) -> str:
    """Hiragana to katakana after NFKC (half-width katakana become full-width)."""
    return unicodedata.normalize("NFKC", text).translate(_TO_KATAKANA)


def to_hiragana(text: str) -> str:
    """Katakana to hiragana (ー and the characters without a hiragana kept)."""
    return "".join(
        chr(ord(ch) - _KATA_OFFSET) if "ァ" <= ch <= "ヶ" and ch not in "ヴヵヶ" else ch for ch in text
    )


# --- spelling tolerance ------------------------------------------------------------------------------------

_SMALL_KANA = str.maketrans("ァィゥェォャュョヮヵヶ", "アイウエオヤユヨワカケ")


def kana_skeleton(text: str) -> str:
    """A katakana word with what judges drop, double or mistype on a phone taken away: the long-vowel mark,
    the small ッ, the middle dot, small kana (as large) and the voiced marks (ガ as カ, パ as ハ, ヴ as ウ).
    Two spellings with the same skeleton are one edit of these kinds apart (スリーブ, スリブ, スリーヴ)."""
    k = squash(to_katakana(text)).replace("ッ", "").translate(_SMALL_KANA)
    return "".join(ch for ch in unicodedata.normalize("NFD", k) if ch not in "\u3099\u309a")


def unvoiced_start(kana: str) -> str:
    """A katakana word with its first mora's voiced mark taken away (ジアイ as シアイ, バン as ハン): how a word
    begins on its own that begins voiced inside a compound (rendaku: 無効試合 said むこうじあい)."""
    head = unicodedata.normalize("NFD", kana[:1])
    return unicodedata.normalize("NFC", head.replace("\u3099", "")) + kana[1:] if "\u3099" in head else kana


def deletions(text: str) -> set[str]:
    """Every string one character shorter (the neighbourhood of one edit, as in SymSpell)."""
    return {text[:i] + text[i + 1 :] for i in range(len(text))}


# Consonant classes: a name written in Latin letters and its reading in kana reduce to the same sequence
# (Lycee and リセ to RS, Alicesoft and アリスソフト to RSHT, VisualArts and ビジュアルアーツ to BSRTS).
_KANA_CLASS: dict[str, str] = {}
for _row, _cls in (
    ("カキクケコガギグゲゴ", "K"),
    ("サシスセソザジズゼゾ", "S"),
    ("タテトダデド", "T"),
    ("チヂ", "T"),
    ("ツヅ", "TS"),
    ("ナニヌネノン", "N"),
    ("ハヒフヘホ", "H"),
    ("バビブベボパピプペポヴ", "B"),
    ("マミムメモ", "M"),
    ("ラリルレロ", "R"),
):
    for _ch in _row:
        _KANA_CLASS[_ch] = _cls
_LATIN_RULES = [
    ("ph", "H"),
    ("th", "S"),
    ("sh", "S"),
    ("ch", "T"),
    ("ck", "K"),
    ("gh", ""),
    ("qu", "K"),
    ("ts", "TS"),
    ("x", "KS"),
]
_LATIN_CLASS = {
    "b": "B",
    "p": "B",
    "v": "B",
    "f": "H",
    "h": "H",
    "k": "K",
    "g": "K",
    "q": "K",
    "s": "S",
    "z": "S",
    "j": "S",
    "t": "T",
    "d": "T",
    "n": "N",
    "m": "M",
    "r": "R",
    "l": "R",
}


def _collapse(classes: str) -> str:
    return re.sub(r"(.)\1+", r"\1", classes)


def kana_consonants(text: str) -> str:
    """The consonant classes of a word in kana (its vowels, ー, ッ and small kana dropped)."""
    return _collapse("".join(_KANA_CLASS.get(ch, "") for ch in to_katakana(text)))


def latin_consonants(word: str) -> str:
    """The consonant classes of a word in Latin letters, as a Japanese reader would say it."""
    w, out, i = word.lower(), [], 0
    while i < len(w):
        for pattern, cls in _LATIN_RULES:
            if w.startswith(pattern, i):
                out.append(cls)
                i += len(pattern)
                break
        else:
            ch = w[i]
            if ch == "c":
                out.append("S" if w[i + 1 : i + 2] in ("e", "i", "y") else "K")
            else:
                out.append(_LATIN_CLASS.get(ch, ""))
            i += 1
    return _collapse("".join(out))


# How the letters of an acronym are said (TCG: ティーシージー), ー dropped as squash() drops it.
LETTER_NAMES = dict(
    zip(
        "abcdefghijklmnopqrstuvwxyz",
        [
            "エー",
            "ビー",
            "シー",
            "ディー",
            "イー",
            "エフ",
            "ジー",
            "エイチ",
            "アイ",
            "ジェー",
            "ケー",
            "エル",
            "エム",
            "エヌ",
            "オー",
            "ピー",
            "キュー",
            "アール",
            "エス",
            "ティー",
            "ユー",
            "ブイ",
            "ダブリュー",
            "エックス",
            "ワイ",
            "ゼット",
        ],
        strict=False,
    )
)


def spelled_letters(word: str) -> str:
    """An acronym said letter by letter, squashed (TCG → ティシジ)."""
    return squash("".join(LETTER_NAMES.get(ch, "") for ch in word.lower()))


# --- section numbers -------------------------------------------------------------------------------------

_KANJI_DIGITS = {
    "〇": 0,
    "零": 0,
    "一": 1,
    "二": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
_KANJI_UNITS = {"十": 10, "百": 100, "千": 1000}
_ROMAN = {"i": 1, "v": 5, "x": 10, "l": 50, "c": 100}
_ROMAN_RE = re.compile(r"(?=[ivxlc])(c{0,3})(xc|xl|l?x{0,3})(ix|iv|v?i{0,3})")
_CIRCLED = {chr(0x2460 + i): str(i + 1) for i in range(20)}  # ①..⑳


def kanji_number(text: str) -> int | None:
    """十二 → 12, 三百一 → 301, 一〇 → 10; None when the text is not a kanji numeral."""
    if not text or any(ch not in _KANJI_DIGITS and ch not in _KANJI_UNITS for ch in text):
        return None
    if all(ch in _KANJI_DIGITS for ch in text):
        return int("".join(str(_KANJI_DIGITS[ch]) for ch in text))
    total, digit = 0, None
    for ch in text:
        if ch in _KANJI_DIGITS:
            digit = _KANJI_DIGITS[ch]
        else:
            total += (1 if digit is None else digit) * _KANJI_UNITS[ch]
            digit = None
    return total + (digit or 0)


def roman_number(text: str) -> int | None:
    """iii → 3, iv → 4; None when the text is not a roman numeral."""
    m = _ROMAN_RE.fullmatch(text.lower())
    if not text or not m:
        return None
    value, prev = 0, 0
    for ch in reversed(text.lower()):
        v = _ROMAN[ch]
        value, prev = (value - v, prev) if v < prev else (value + v, v)
    return value


_NUMBER_TOKEN = re.compile(r"\d+|[a-z]+|[〇零一二三四五六七八九十百千]+")
_NUMBER_NOISE = re.compile(
    r"[\s\-‐‑–—―−ｰー_.．。、,，・:：()（）\[\]【】「」#＃/／]+|第|章|節|条|項|号|部|番|ch(?=\d)|sec(?=\d)"
    # の between a number's parts (第十章の④, 7条のe): said or typed as a judge reads the number out
    r"|(?<=[\d〇零一二三四五六七八九十百千a-z章節条項])[のノ](?=[\d〇零一二三四五六七八九十百千a-z])"
)


def _token_readings(tok: str, after_digit: bool) -> list[list[str]]:
    """The ways one token of a section number can be read (a list of parts each)."""
    if tok.isdigit():
        return [[str(int(tok))]]
    if tok[0] in _KANJI_DIGITS or tok[0] in _KANJI_UNITS:
        n = kanji_number(tok)
        return [[str(n)]] if n is not None else []
    out: list[list[str]] = []
    if after_digit and len(tok) == 1:
        out.append([tok])  # 6b
    if after_digit and len(tok) > 1 and roman_number(tok[1:]) is not None:
        out.append([tok[0], str(roman_number(tok[1:]))])  # 6biii
    if roman_number(tok) is not None:
        out.append([str(roman_number(tok))])  # iii, 第7章Ⅰ
    return out


def section_number_keys(text: str) -> list[str]:
    """The keys a written section number may stand for (most likely first); [] when it is not a number.

    Arabic, kanji or roman numerals, full- or half-width, with or without separators and 第/章/節: 6b-iii,
    6b3, ６Ｂ－ⅲ and 6.b.3 give 6.b.3; 第十章, 第10章, 10章, ch10 and 10 give 10; 第7章Ⅰ and 7-1 give 7.1."""
    s = unicodedata.normalize("NFKC", text).lower()
    s = "".join(_CIRCLED.get(ch, ch) for ch in s)
    s = _NUMBER_NOISE.sub(" ", s)
    tokens: list[str] = []
    for chunk in s.split():
        pos = 0
        for m in _NUMBER_TOKEN.finditer(chunk):
            if m.start() != pos:
                return []
            pos = m.end()
            tokens.append(m.group())
        if pos != len(chunk):
            return []
    if not tokens or len(tokens) > 4:
        return []
    keys: list[list[str]] = [[]]
    for tok in tokens:
        keys = [k + r for k in keys for r in _token_readings(tok, bool(k) and k[-1].isdigit())][:8]
    return list(dict.fromkeys(".".join(k) for k in keys if k and any(p.isdigit() for p in k) and len(k) <= 4))


def section_number_key(text: str) -> str | None:
    """The most likely key of a written section number (see `section_number_keys`), or None."""
    keys = section_number_keys(text)
    return keys[0] if keys else None


# --- romaji ----------------------------------------------------------------------------------------------

_ROMAJI_VOWELS = {"a": "あ", "i": "い", "u": "う", "e": "え", "o": "お"}
# The kana of each consonant's row, by vowel (a i u e o): romaji read here and a romaji tail's moras
# (search.analysis.romaji_moras, which adds the rows of loan words' kana).
KANA_ROWS = {
    "k": "かきくけこ", "g": "がぎぐげご", "s": "さしすせそ", "z": "ざじずぜぞ", "t": "たちつてと",
    "d": "だぢづでど", "n": "なにぬねの", "h": "はひふへほ", "b": "ばびぶべぼ", "p": "ぱぴぷぺぽ",
    "m": "まみむめも", "r": "らりるれろ",
}  # fmt: skip
_ROMAJI = {c + v: row[i] for c, row in KANA_ROWS.items() for i, v in enumerate("aiueo")}
_ROMAJI.update(_ROMAJI_VOWELS)
_ROMAJI.update({"ya": "や", "yu": "ゆ", "yo": "よ", "wa": "わ", "wo": "を"})
_ROMAJI.update(
    {"shi": "し", "chi": "ち", "tsu": "つ", "fu": "ふ", "ji": "じ", "si": "し", "ti": "ち", "tu": "つ"}
)
_ROMAJI.update({"hu": "ふ", "zi": "じ", "di": "ぢ", "du": "づ"})
for _c, _i in (("ky", "き"), ("gy", "ぎ"), ("ny", "に"), ("hy", "ひ"), ("by", "び"), ("py", "ぴ"), ("my", "み"),
               ("ry", "り"), ("sh", "し"), ("ch", "ち"), ("j", "じ"), ("sy", "し"), ("ty", "ち"), ("zy", "じ"),
               ("jy", "じ")):  # fmt: skip
    _ROMAJI.update({_c + "a": _i + "ゃ", _c + "u": _i + "ゅ", _c + "o": _i + "ょ"})
_ROMAJI.update({"she": "しぇ", "che": "ちぇ", "je": "じぇ"})
_ROMAJI_LONGEST = max(len(k) for k in _ROMAJI)
# The words whose romaji spells a particle (wa: は, o: を, e: へ) when they stand alone.
_ROMAJI_PARTICLES = {"wa": "は", "o": "を", "wo": "を", "e": "へ"}


def romaji_to_hiragana(word: str) -> str | None:
    """A word typed in romaji (Hepburn, kunrei or as a kana keyboard takes it) in hiragana: chigai → ちがい,
    nakushita → なくした, shikkaku → しっかく, a particle alone as a particle (wa → は); None when the word is
    not romaji through and through (card, swiss, concede)."""
    w = word.lower()
    if not w.isascii() or not w.isalpha():
        return None
    if w in _ROMAJI_PARTICLES:
        return _ROMAJI_PARTICLES[w]
    out: list[str] = []
    i = 0
    while i < len(w):
        ch = w[i]
        if ch == "n" and (i + 1 == len(w) or (w[i + 1] not in "aiueoy")):
            out.append("ん")
            i += 2 if w[i + 1 : i + 2] in ("n", "'") and w[i + 2 : i + 3] not in tuple("aiueoy") else 1
            continue
        if i + 1 < len(w) and ch == w[i + 1] and ch not in "aiueon":
            out.append("っ")  # a doubled consonant (kk, ss, tt; tch as Hepburn's っち)
            i += 1
            continue
        if w.startswith("tch", i):
            out.append("っ")
            i += 1
            continue
        for n in range(min(_ROMAJI_LONGEST, len(w) - i), 0, -1):
            kana = _ROMAJI.get(w[i : i + n])
            if kana:
                out.append(kana)
                i += n
                break
        else:
            return None
    return "".join(out)


_KANA_ROMAJI = {
    kana: r
    for r, kana in _ROMAJI.items()
    if not r.startswith(("si", "ti", "tu", "hu", "zi", "sy", "ty", "zy", "jy"))
}
_KANA_ROMAJI.update({"を": "o", "ゔ": "vu", "ん": "n"})
_SMALL_VOWELS = {"ぁ": "a", "ぃ": "i", "ぅ": "u", "ぇ": "e", "ぉ": "o"}


def kana_romaji(kana: str) -> str:
    """Kana spelt in romaji (Hepburn), as a loan word's kana say its letters: プロモ → puromo, スリーブ →
    suriibu, ティー → tii; what it has no romaji for is left out."""
    h = to_hiragana(kana)
    out: list[str] = []
    double = False
    i = 0
    while i < len(h):
        two, ch = h[i : i + 2], h[i]
        if ch == "っ":
            double = True
            i += 1
            continue
        if ch == "ー" and out:
            out.append(out[-1][-1])
            i += 1
            continue
        if ch in _SMALL_VOWELS and out:
            out[-1] = out[-1][:-1] + _SMALL_VOWELS[ch]  # ティ: ti, ファ: fa
            i += 1
            continue
        r = _KANA_ROMAJI.get(two) if len(two) == 2 else None
        n = 2 if r else 1
        r = r or _KANA_ROMAJI.get(ch, "")
        if double and r:
            r = r[0] + r
        double = False
        out.append(r)
        i += n
    return "".join(out)


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance of two short strings."""
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]
